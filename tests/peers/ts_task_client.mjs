// The official TypeScript SDK client (@modelcontextprotocol/sdk, the copy the conformance harness pins
// in .cache/conformance) driving the decorated task app (tests/peers/task_app.py) at 2025-11-25 with
// its experimental tasks API, over stdio or Streamable HTTP; prints what it observed as one JSON
// object on stdout.
//
//   node tests/peers/ts_task_client.mjs <sdk-dir> stdio <python> tests/peers/task_app.py
//   node tests/peers/ts_task_client.mjs <sdk-dir> http http://127.0.0.1:PORT/mcp
import { openTransport, sdkLoader, stepper } from "./ts_common.mjs";

const [sdkDir, transportKind, ...rest] = process.argv.slice(2);
const load = sdkLoader(sdkDir);
const { Client } = await load("client/index.js");
const { CreateTaskResultSchema, ElicitRequestSchema } = await load("types.js");
const transport = await openTransport(load, transportKind, rest);

const report = { asked: [] };
const client = new Client(
  { name: "ts-task-client", version: "1.0.0" },
  { capabilities: { elicitation: {} }, defaultTaskPollInterval: 50 },
);
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  report.asked.push(request.params);
  return { action: "accept", content: { name: "ada" } };
});

// What one streamed call yielded: the kinds of message in order, the task, the result or error.
async function streamed(params, options) {
  const seen = { kinds: [], statuses: [] };
  for await (const message of client.experimental.tasks.callToolStream(params, undefined, options)) {
    seen.kinds.push(message.type);
    if (message.type === "taskCreated") seen.task = message.task;
    if (message.type === "taskStatus") seen.statuses.push(message.task.status);
    if (message.type === "result") seen.result = message.result;
    if (message.type === "error") seen.error = { code: message.error.code, message: String(message.error.message) };
  }
  return seen;
}

const step = stepper(report);

await client.connect(transport);
report.protocolVersion = transport.protocolVersion ?? null;
report.capabilities = client.getServerCapabilities();
await step("tools", client.listTools());
await step("slow_task", streamed({ name: "slow", arguments: { seconds: 0.3 } }));
await step("slow_now", client.callTool({ name: "slow", arguments: { seconds: 0 } }));
await step("batch_task", streamed({ name: "batch", arguments: { n: 5 } }));
await step("greet_task", streamed({ name: "greet", arguments: {} }));
await step("plain", client.callTool({ name: "plain", arguments: {} }));

// A long task, cancelled while it works.
const created = await client.request(
  { method: "tools/call", params: { name: "slow", arguments: { seconds: 30 }, task: { ttl: 60000 } } },
  CreateTaskResultSchema,
);
report.long_created = created.task;
await step("listed", client.experimental.tasks.listTasks());
await step("cancelled", client.experimental.tasks.cancelTask(created.task.taskId));
await step("after_cancel", client.experimental.tasks.getTask(created.task.taskId));

await client.close();
process.stdout.write(JSON.stringify(report) + "\n");
