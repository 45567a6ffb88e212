// TypeScript SDK v1 (`@modelcontextprotocol/sdk` 1.x, pinned in benchmarks/config.py) peer: the one
// `echo` tool of every peer, written as the SDK's README writes a server (`McpServer.registerTool`, a
// zod input schema). Set-up (benchmarks/node_peers.py) copies this file next to the node_modules it
// installs, so the imports below resolve there.
//
//   node ts_v1_server.mjs            stdio
//   node ts_v1_server.mjs --fd FD    Streamable HTTP at /mcp on the listening socket inherited as FD
//                                    (bound on 127.0.0.1 by the harness: benchmarks/procs.listener)
//
// HTTP as the official Python peer runs: a session per `initialize` (a transport and a server per
// session, the SDK's sessionful idiom), JSON responses (`enableJsonResponse`). The SDK speaks the
// 2025 revisions only (its newest: 2025-11-25).
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import * as z from "zod";

function build() {
  const server = new McpServer({ name: "bench-ts-v1", version: "1-bench" });
  server.registerTool(
    "echo",
    {
      description: "Return the text argument unchanged.",
      inputSchema: { text: z.string().describe("Text to echo back.") },
    },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  return server;
}

function serveHttp(fd) {
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    if (!req.url.startsWith("/mcp")) {
      res.writeHead(404).end();
      return;
    }
    const id = req.headers["mcp-session-id"];
    let transport = id === undefined ? undefined : sessions.get(id);
    if (transport === undefined) {
      // No (known) session: a new transport; it answers anything but `initialize` with its own error.
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      transport.onclose = () => sessions.delete(transport.sessionId);
      await build().connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  http.listen({ fd }, () => console.error(`bench-ts-v1 serving at /mcp on fd ${fd}`));
}

const at = process.argv.indexOf("--fd");
if (at >= 0) {
  serveHttp(Number(process.argv[at + 1]));
} else {
  await build().connect(new StdioServerTransport());
}
