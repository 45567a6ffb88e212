// The counter view's script (bundled by esbuild, inlined into the view by examples/app_ui_server.py
// --app-script): the official App class of @modelcontextprotocol/ext-apps 2.0.4. On the tool's
// result it shows the value, calls the app-only `increment` tool through the host, shows the new
// value and tells the host with ui/message.
import { App, PostMessageTransport } from "@modelcontextprotocol/ext-apps";

const out = document.getElementById("value");
const app = new App({ name: "counter-view", version: "1.0.0" });

app.ontoolresult = async (result) => {
  out.textContent = String(result.structuredContent.value);
  const next = await app.callServerTool({ name: "increment", arguments: { value: result.structuredContent.value } });
  out.textContent = String(next.structuredContent.value);
  await app.sendMessage({ role: "user", content: [{ type: "text", text: `counter is ${out.textContent}` }] });
};

await app.connect(new PostMessageTransport(window.parent, window.parent));
