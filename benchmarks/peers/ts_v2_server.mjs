// TypeScript SDK v2 (`@modelcontextprotocol/server` + `@modelcontextprotocol/node` 2.x, pinned in
// benchmarks/config.py) peer: the one `echo` tool of every peer, written as the v2 README writes a
// server (a factory of `McpServer`s, `registerTool` with a zod object). Set-up
// (benchmarks/node_peers.py) copies this file next to the node_modules it installs.
//
//   node ts_v2_server.mjs            stdio (`serveStdio`: the opening picks the era, 2025 or 2026-07-28)
//   node ts_v2_server.mjs --fd FD    Streamable HTTP at /mcp on the listening socket inherited as FD
//                                    (bound on 127.0.0.1 by the harness: benchmarks/procs.listener)
//
// HTTP as the SDK ships it: `createMcpHandler` (a server instance per request) under `toNodeHandler`
// on node:http, JSON responses for 2026-07-28 (`responseMode: "json"`, as the other peers answer); a
// 2025-11-25 request goes to the entry's default legacy leg, stateless (no session id), which answers
// as the SDK's stateless transport does.
import { createServer } from "node:http";

import { toNodeHandler } from "@modelcontextprotocol/node";
import { McpServer, createMcpHandler } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import * as z from "zod";

function build() {
  const server = new McpServer({ name: "bench-ts-v2", version: "2-bench" });
  server.registerTool(
    "echo",
    {
      description: "Return the text argument unchanged.",
      inputSchema: z.object({ text: z.string().describe("Text to echo back.") }),
    },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  return server;
}

function serveHttp(fd) {
  const mcp = toNodeHandler(createMcpHandler(build, { responseMode: "json" }));
  const http = createServer((req, res) => {
    if (!req.url.startsWith("/mcp")) {
      res.writeHead(404).end();
      return;
    }
    mcp(req, res);
  });
  http.listen({ fd }, () => console.error(`bench-ts-v2 serving at /mcp on fd ${fd}`));
}

const at = process.argv.indexOf("--fd");
if (at >= 0) {
  serveHttp(Number(process.argv[at + 1]));
} else {
  serveStdio(build);
}
