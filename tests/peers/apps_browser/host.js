// The test host page's script (bundled by esbuild into one IIFE, see tests/support/browser.py):
// the TypeScript SDK v2 client connects to the app server over Streamable HTTP (same origin), reads
// the counter tool's UI resource, loads it into a sandboxed iframe with a CSP built from its
// _meta.ui, and the official AppBridge of @modelcontextprotocol/ext-apps 2.0.4 talks to the view.
// What happens is written into #log, where the test reads it.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const UI = "io.modelcontextprotocol/ui";
const MIME = "text/html;profile=mcp-app";

function log(id, text) {
  const item = document.createElement("li");
  item.id = id;
  item.textContent = text;
  document.getElementById("log").appendChild(item);
}

function withCsp(html, csp) {
  // apps.mdx, Content Security Policy Enforcement: the restrictive default plus what the resource declares.
  const domains = (list) => (list && list.length ? " " + list.join(" ") : "");
  const policy = [
    "default-src 'none'",
    "script-src 'self' 'unsafe-inline'" + domains(csp?.resourceDomains),
    "style-src 'self' 'unsafe-inline'" + domains(csp?.resourceDomains),
    "img-src 'self' data:" + domains(csp?.resourceDomains),
    "connect-src 'none'" + domains(csp?.connectDomains),
  ].join("; ");
  return html.replace("<head>", `<head><meta http-equiv="Content-Security-Policy" content="${policy}">`);
}

async function main() {
  const info = { name: "browser-host", version: "1.0.0" };
  const client = new Client(info, { capabilities: { extensions: { [UI]: { mimeTypes: [MIME] } } } });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.href)));
  const { tools } = await client.listTools();
  log("tools", tools.map((t) => `${t.name}:${(t._meta?.ui?.visibility ?? ["model", "app"]).join("+")}`).join(" "));
  const counter = tools.find((t) => t.name === "counter");
  const uri = counter._meta.ui.resourceUri;
  const read = await client.readResource({ uri });
  const view = read.contents[0];
  log("resource", `${uri} ${view.mimeType}`);

  const bridge = new AppBridge(client, info, { serverTools: {}, logging: {} });
  bridge.onmessage = async ({ content }) => {
    log("message", content.map((c) => c.text).join(""));
    return {};
  };
  bridge.oninitialized = async () => {
    log("initialized", "view initialized");
    const args = { start: 41 };
    const result = await client.callTool({ name: "counter", arguments: args });
    log("call-counter", JSON.stringify(result.structuredContent));
    await bridge.sendToolInput({ arguments: args });
    await bridge.sendToolResult(result);
  };
  const iframe = document.getElementById("app");
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  // After connect, which installs its own forwarder to the client: the same, and written down.
  bridge.oncalltool = async (params) => {
    const result = await client.callTool(params);
    log(`call-${params.name}`, JSON.stringify(result.structuredContent));
    return result;
  };
  iframe.srcdoc = withCsp(view.text, view._meta?.ui?.csp);
}

main().catch((error) => log("error", String(error && error.stack ? error.stack : error)));
