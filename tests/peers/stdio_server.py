"""The stdio test server of the runtime tests: written against the 2025-11-25 stub, served by
`serve_stdio`, so every handshake version reaches it through the runtime's version conversion.

Spawned with `sys.executable tests/peers/stdio_server.py`. Options (environment):
  MCP_TEST_MAX_MESSAGE_BYTES  the transport's message size limit (default: the runtime's)
  MCP_TEST_PAGE_SIZE          page size of resources/list and prompts/list (default 10)
  MCP_TEST_RESOURCES          how many resources it lists (default 25)
  MCP_TEST_VERSIONS           comma-separated protocol versions to serve (default: all)

Tools (all take their inputs as `arguments`):
  echo {text}                  -> the text
  sleep {seconds, tag}         -> the tag, after sleeping; records started/finished/cancelled:tag
  progress {steps, delay}      -> "done", after `steps` progress notifications (1..steps of steps)
  log_all {}                   -> logs one notifications/message at every level, returns "logged"
  boom {}                      -> raises a plain exception (a handler bug)
  fail {code, message}         -> raises McpError(code, message)
  ask_sampling {prompt}        -> the client's sampling/createMessage result, as JSON text
  ask_elicitation {}           -> the client's elicitation/create result, as JSON text
  ask_roots {}                 -> the client's roots/list result, as JSON text
  ping_client {}               -> "pong" once the client answered a ping
  touch {uri}                  -> notifications/resources/updated for the uri if subscribed
  change_lists {}              -> tools/prompts/resources list_changed notifications
  state {}                     -> JSON of what the server recorded (events, subscriptions, ...)
  print_stdout {}              -> print()s garbage to stdout (it must not reach the protocol stream)
  exit {code}                  -> the process exits at once, mid-request
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import orjson

from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.context import NotificationContext, RequestContext
from mcp_bindings.runtime.protocol.pagination import paginate
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError
from mcp_bindings.runtime.rpc.transport import DEFAULT_MAX_MESSAGE_BYTES
from mcp_bindings.runtime.server.runtime import LOG_LEVELS
from mcp_bindings.runtime.stdio.serve import serve_stdio
from mcp_bindings.v2025_11_25 import models as m
from mcp_bindings.v2025_11_25.server import Server

PAGE_SIZE = int(os.environ.get("MCP_TEST_PAGE_SIZE", "10"))
RESOURCE_COUNT = int(os.environ.get("MCP_TEST_RESOURCES", "25"))
RESOURCES = [m.Resource(uri=f"test://r/{i}", name=f"r{i}", mime_type="text/plain") for i in range(RESOURCE_COUNT)]
PROMPTS = [m.Prompt(name=f"p{i}", arguments=[m.PromptArgument(name="topic", required=False)]) for i in range(7)]
COLOURS = ["red", "green", "blue", "black", "brown"]

TOOL_NAMES = [
    "echo",
    "sleep",
    "progress",
    "log_all",
    "boom",
    "fail",
    "ask_sampling",
    "ask_elicitation",
    "ask_roots",
    "ping_client",
    "touch",
    "change_lists",
    "state",
    "print_stdout",
    "exit",
]


def _text(value: Any) -> m.CallToolResult:
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    return m.CallToolResult(content=[m.TextContent(type="text", text=text)])


class TestServer(Server):
    name = "runtime-test-server"
    version = "1.0.0"
    instructions = "a server for the runtime's process tests"
    declared_capabilities = {
        "tools": {"listChanged": True},
        "prompts": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "logging": {},
    }

    def __init__(self) -> None:
        super().__init__()
        self.events: list[str] = []
        self.subscriptions: set[str] = set()
        self.roots_changed = 0

    # -- tools -------------------------------------------------------------------------------

    async def list_tools(self, params: m.PaginatedRequestParams | None, ctx: RequestContext) -> m.ListToolsResult:
        schema = m.ToolInputSchema(type="object")
        return m.ListToolsResult(tools=[m.Tool(name=name, input_schema=schema) for name in TOOL_NAMES])

    async def call_tool(self, params: m.CallToolRequestParams, ctx: RequestContext) -> m.CallToolResult:
        args = params.arguments or {}
        name = params.name
        if name == "echo":
            return _text(str(args.get("text", "")))
        if name == "sleep":
            tag = str(args.get("tag", ""))
            self.events.append(f"started:{tag}")
            try:
                await anyio.sleep(float(args.get("seconds", 1)))
            except anyio.get_cancelled_exc_class():
                self.events.append(f"cancelled:{tag}")
                raise
            self.events.append(f"finished:{tag}")
            return _text(tag)
        if name == "progress":
            steps = int(args.get("steps", 3))
            for i in range(1, steps + 1):
                await ctx.report_progress(i, steps, f"step {i}")
                await anyio.sleep(float(args.get("delay", 0)))
            return _text("done")
        if name == "log_all":
            for level in LOG_LEVELS:
                await ctx.log(level, {"level": level}, logger="test")
            return _text("logged")
        if name == "boom":
            raise RuntimeError("kaboom: secret detail /etc/passwd")
        if name == "fail":
            raise McpError(int(args.get("code", -32000)), str(args.get("message", "failed")), args.get("data"))
        if name == "ask_sampling":
            result = await ctx.request(
                "sampling/createMessage",
                {
                    "messages": [{"role": "user", "content": {"type": "text", "text": str(args.get("prompt", ""))}}],
                    "maxTokens": 10,
                },
            )
            return _text(versions.dump(result))
        if name == "ask_elicitation":
            result = await ctx.request(
                "elicitation/create",
                {
                    "message": "your name?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                },
            )
            return _text(versions.dump(result))
        if name == "ask_roots":
            return _text(versions.dump(await ctx.request("roots/list")))
        if name == "ping_client":
            await ctx.request("ping")
            return _text("pong")
        if name == "touch":
            uri = str(args.get("uri"))
            if uri in self.subscriptions:
                await ctx.notify("notifications/resources/updated", {"uri": uri})
            return _text({"subscribed": uri in self.subscriptions})
        if name == "change_lists":
            for what in ("tools", "prompts", "resources"):
                await ctx.notify(f"notifications/{what}/list_changed")
            return _text("changed")
        if name == "state":
            return _text(
                {
                    "events": self.events,
                    "subscriptions": sorted(self.subscriptions),
                    "roots_changed": self.roots_changed,
                }
            )
        if name == "print_stdout":
            print("this is not JSON-RPC", flush=True)
            sys.stdout.write("neither is this\n")
            sys.stdout.flush()
            return _text("printed")
        if name == "exit":
            os._exit(int(args.get("code", 3)))
        raise McpError(INVALID_PARAMS, f"Unknown tool: {name}", {"errors": [{"path": "params.name"}]})

    # -- resources, prompts, completion -------------------------------------------------------

    async def list_resources(
        self, params: m.PaginatedRequestParams | None, ctx: RequestContext
    ) -> m.ListResourcesResult:
        page, next_cursor = paginate(RESOURCES, params.cursor if params else None, PAGE_SIZE, scope="resources")
        return m.ListResourcesResult(resources=page, next_cursor=next_cursor)

    async def read_resource(self, params: m.ReadResourceRequestParams, ctx: RequestContext) -> m.ReadResourceResult:
        if not params.uri.startswith("test://r/"):
            raise McpError(-32002, "Resource not found", {"uri": params.uri})
        return m.ReadResourceResult(
            contents=[m.TextResourceContents(uri=params.uri, mime_type="text/plain", text=f"content of {params.uri}")]
        )

    async def subscribe_resource(self, params: m.SubscribeRequestParams, ctx: RequestContext) -> m.EmptyResult:
        self.subscriptions.add(params.uri)
        return {}  # type: ignore[return-value]  # m.EmptyResult is an alias (not callable); see test_runtime_known_bugs

    async def unsubscribe_resource(self, params: m.UnsubscribeRequestParams, ctx: RequestContext) -> m.EmptyResult:
        self.subscriptions.discard(params.uri)
        return {}  # type: ignore[return-value]

    async def list_prompts(self, params: m.PaginatedRequestParams | None, ctx: RequestContext) -> m.ListPromptsResult:
        page, next_cursor = paginate(PROMPTS, params.cursor if params else None, PAGE_SIZE, scope="prompts")
        return m.ListPromptsResult(prompts=page, next_cursor=next_cursor)

    async def get_prompt(self, params: m.GetPromptRequestParams, ctx: RequestContext) -> m.GetPromptResult:
        topic = (params.arguments or {}).get("topic", "nothing")
        return m.GetPromptResult(
            description=f"prompt {params.name}",
            messages=[m.PromptMessage(role="user", content=m.TextContent(type="text", text=f"talk about {topic}"))],
        )

    async def complete(self, params: m.CompleteRequestParams, ctx: RequestContext) -> m.CompleteResult:
        prefix = params.argument.value
        values = [c for c in COLOURS if c.startswith(prefix)]
        return m.CompleteResult(completion=m.CompleteResultCompletion(values=values, total=len(values), has_more=False))

    # -- notifications -----------------------------------------------------------------------

    async def on_roots_list_changed(self, params: m.NotificationParams | None, ctx: NotificationContext) -> None:
        self.roots_changed += 1


def main() -> None:
    limit = int(os.environ.get("MCP_TEST_MAX_MESSAGE_BYTES", DEFAULT_MAX_MESSAGE_BYTES))
    options: dict[str, Any] = {}
    if os.environ.get("MCP_TEST_VERSIONS"):
        options["supported_versions"] = os.environ["MCP_TEST_VERSIONS"].split(",")
    serve_stdio(TestServer(), max_message_bytes=limit, **options)


if __name__ == "__main__":
    main()
