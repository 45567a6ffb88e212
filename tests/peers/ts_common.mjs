// What the TypeScript SDK peers share (tests/peers/ts_*_client.mjs): loading the SDK from the copy the
// conformance harness pins, a transport to the server under test, and recording one step's outcome.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

// `load("client/index.js")`: a module of the SDK at `sdkDir`.
export const sdkLoader = (sdkDir) => (path) => import(pathToFileURL(join(sdkDir, "dist/esm", path)).href);

// stdio: `rest` is the server's command line; http: `rest[0]` is its URL.
export async function openTransport(load, kind, rest) {
  if (kind === "http") {
    const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
    return new StreamableHTTPClientTransport(new URL(rest[0]));
  }
  const { StdioClientTransport } = await load("client/stdio.js");
  return new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" });
}

// `await step(name, promise)`: its value, or the error it failed with, under `report[name]`.
export const stepper = (report) => async (name, promise) => {
  try {
    report[name] = await promise;
  } catch (error) {
    report[name] = { error: { code: error.code, message: String(error.message) } };
  }
};
