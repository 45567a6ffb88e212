// The official TypeScript SDK client (@modelcontextprotocol/sdk, the copy the conformance harness pins
// in .cache/conformance) driving npm `server-everything` (or a recording of it being replayed) over
// stdio through a fixed scenario; prints what it observed as one JSON object on stdout.
//
//   node tests/peers/ts_everything_client.mjs <sdk-dir> <server command...>
import { openTransport, sdkLoader, stepper } from "./ts_common.mjs";

const [sdkDir, ...rest] = process.argv.slice(2);
const load = sdkLoader(sdkDir);
const { Client } = await load("client/index.js");

const report = { progress: [] };
const step = stepper(report);
const client = new Client({ name: "ts-everything-client", version: "1.0.0" }, { capabilities: {} });
await client.connect(await openTransport(load, "stdio", rest));
report.server = client.getServerVersion();
await step("tools", client.listTools().then((r) => r.tools.map((t) => t.name)));
await step("echo", client.callTool({ name: "echo", arguments: { message: "hello from typescript" } }));
await step("sum", client.callTool({ name: "get-sum", arguments: { a: 20, b: 22 } }));
await step(
  "long",
  client.callTool({ name: "trigger-long-running-operation", arguments: { duration: 1, steps: 2 } }, undefined, {
    onprogress: (p) => report.progress.push([p.progress, p.total]),
  }),
);
await step("resources", client.listResources().then((r) => r.resources.map((x) => x.uri)));
await step("read", client.readResource({ uri: "demo://resource/static/document/architecture.md" }));
await step("prompt", client.getPrompt({ name: "simple-prompt", arguments: {} }));
await step("ping", client.ping());
await client.close();
console.log(JSON.stringify(report));
