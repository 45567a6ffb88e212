// The official TypeScript SDK client (@modelcontextprotocol/sdk, the copy the conformance harness pins
// in .cache/conformance) driving examples/app_server.py at handshake protocol versions (comma-separated,
// one scenario each), over stdio or Streamable HTTP; prints {version: what it observed} as one JSON
// object on stdout.
//
//   node tests/peers/ts_app_client.mjs <sdk-dir> 2025-03-26,2025-11-25 stdio <python> examples/app_server.py
//   node tests/peers/ts_app_client.mjs <sdk-dir> 2025-11-25 http http://127.0.0.1:PORT/mcp
//
// The SDK offers its latest version in `initialize`; an older one is pinned by rewriting that one
// request on its way out (the SDK accepts any version it supports in the answer).
import { openTransport, sdkLoader, stepper } from "./ts_common.mjs";

const [sdkDir, versionList, transportKind, ...rest] = process.argv.slice(2);
const load = sdkLoader(sdkDir);
const { Client } = await load("client/index.js");
const { ElicitRequestSchema, LoggingMessageNotificationSchema } = await load("types.js");

async function run(version) {
  const transport = await openTransport(load, transportKind, rest);
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (message.method === "initialize") message.params.protocolVersion = version;
    return send(message, options);
  };

  const report = { asked: [], logs: [], initialize: {} };
  let onmessage; // the version the server answered `initialize` with, as it arrives
  Object.defineProperty(transport, "onmessage", {
    get: () => onmessage,
    set: (handler) => {
      onmessage = (message, extra) => {
        if (message.result?.protocolVersion) report.initialize.protocolVersion = message.result.protocolVersion;
        return handler(message, extra);
      };
    },
  });
  const client = new Client({ name: "ts-app-matrix", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    report.asked.push(request.params);
    return { action: "accept", content: { value: true } };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    report.logs.push(notification.params.data);
  });

  const step = stepper(report);

  await client.connect(transport);
  report.initialize.server = client.getServerVersion();
  await step("set_level", client.setLoggingLevel("info"));
  await step("tools", client.listTools());
  await step("weather", client.callTool({ name: "weather", arguments: { city: "Oslo" } }));
  await step("weather_bad", client.callTool({ name: "weather", arguments: { town: "Oslo" } }));
  await step("delete", client.callTool({ name: "delete", arguments: { path: "/tmp/x" } }));
  await step("resources", client.listResources());
  await step("templates", client.listResourceTemplates());
  await step("config", client.readResource({ uri: "config://app" }));
  await step("profile", client.readResource({ uri: "users://ada/profile" }));
  await step("review", client.getPrompt({ name: "review", arguments: { code: "x = 1", language: "python" } }));
  if (version !== "2024-11-05") {
    await step(
      "complete",
      client.complete({ ref: { type: "ref/prompt", name: "review" }, argument: { name: "language", value: "ty" } }),
    );
  }
  await client.close();
  return report;
}

const reports = {};
for (const version of versionList.split(",")) reports[version] = await run(version);
process.stdout.write(JSON.stringify(reports) + "\n");
