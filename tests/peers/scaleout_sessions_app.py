"""The app `tests/scaleout/test_scaleout_sessions.py` runs on N uvicorn workers (`uvicorn --workers N --factory
tests.peers.scaleout_sessions_app:build`); it holds no tests itself.

Two servers behind one port, sharing the deployment's backend (`MCP_REDIS_URL`): `/mcp`, a
2025-11-25 handshake server (no auth) whose tools say which worker ran them (its pid), ask the
client (`ask`: elicitation/create), log (`log`: one message per level, filtered by the session's
logging level), raise a resource update (`touch`) and notify the session outside any request
(`notify`: a message for its GET stream), or sleep until cancelled (`sleep`); `/ext`, a 2026-07-28 server offering the
tasks extension, whose `ask_task` tool runs as a task whose work asks the client through the
task's `inputRequests`. Every response carries the pid of the worker that answered it (`x-worker`).
"""

from __future__ import annotations

import os
from typing import Any

import anyio
from starlette.types import Message, Receive, Scope, Send

from mcp_bindings.runtime import tasks
from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.server.peer import LOG_LEVELS
from mcp_bindings.v2025_11_25 import models as m25
from mcp_bindings.v2025_11_25.server import Server as Server25
from mcp_bindings.v2026_07_28 import models as m
from mcp_bindings.v2026_07_28.server import Server
from tests.peers.scaleout_app import serve_lifespan

PID = str(os.getpid())
ASK = {
    "message": "your name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
}


def text25(value: str) -> m25.CallToolResult:
    return m25.CallToolResult(content=[m25.TextContent(type="text", text=value)])


class Handshake(Server25):
    name = "scaled-sessions"
    version = "1.0.0"
    declared_capabilities = {
        "tools": {},
        "logging": {},
        "resources": {"subscribe": True},
        "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
    }

    async def list_tools(self, params: Any, ctx: Any) -> m25.ListToolsResult:
        schema = m25.ToolInputSchema(type="object")
        return m25.ListToolsResult(
            tools=[m25.Tool(name=n, input_schema=schema) for n in ("whoami", "ask", "log", "touch")]
        )

    async def list_resources(self, params: Any, ctx: Any) -> m25.ListResourcesResult:
        return m25.ListResourcesResult(resources=[m25.Resource(name="doc", uri="file:///doc")])

    async def read_resource(self, params: Any, ctx: Any) -> m25.ReadResourceResult:
        return m25.ReadResourceResult(contents=[m25.TextResourceContents(uri=params.uri, text=PID)])

    async def subscribe_resource(self, params: Any, ctx: Any) -> m25.EmptyResult:
        return {}  # type: ignore[return-value]  # m25.EmptyResult is an alias; the runtime records the URI

    async def unsubscribe_resource(self, params: Any, ctx: Any) -> m25.EmptyResult:
        return {}  # type: ignore[return-value]

    async def call_tool(self, params: m25.CallToolRequestParams, ctx: Any) -> m25.CallToolResult:
        if params.name == "whoami":
            return text25(PID)
        if params.name == "ask":  # a request to the client; its response may reach another worker
            answer = await ctx.request("elicitation/create", ASK, raw=True, timeout=20)
            return text25(f"{answer.get('content', {}).get('name')} asked by {PID}")
        if params.name == "touch":  # a resource update: to the sessions subscribed to it, on every worker
            uri = (params.arguments or {}).get("uri", "file:///doc")
            await self.broadcast("notifications/resources/updated", {"uri": uri})
            return text25(PID)
        if params.name == "notify":  # to this session's GET stream, whichever worker holds it
            await ctx.session.notify("notifications/message", {"level": "error", "data": f"from {PID}"})
            return text25(PID)
        if params.name == "sleep":  # until cancelled (by a notifications/cancelled reaching any worker)
            await anyio.sleep(float((params.arguments or {}).get("seconds", 30)))
            return text25(PID)
        if params.name == "nap":  # a core task (no auth: it belongs to the session, on every worker)
            seconds = float((params.arguments or {}).get("seconds", 30))

            async def work(task_ctx: Any) -> m25.CallToolResult:
                await anyio.sleep(seconds)
                return text25(f"napped {seconds} on {PID}")

            return await tasks.run_as_task(ctx, work)
        if params.name == "countdown":  # 1, 2, its stream ended early (SEP-1699), 3, 4: resumed with Last-Event-ID
            await ctx.log("info", 1)
            await ctx.log("info", 2)
            await ctx.close_sse_stream()
            await anyio.sleep(float((params.arguments or {}).get("pause", 0.5)))
            await ctx.log("info", 3)
            await ctx.log("info", 4)
            return text25(PID)
        if params.name == "log":
            for level in LOG_LEVELS:
                await ctx.log(level, f"{level} from {PID}")
            return text25(PID)
        raise ValueError(params.name)


class Extension(Server):
    name = "scaled-ext"
    version = "1.0.0"
    declared_capabilities = {"tools": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}

    async def list_tools(self, params: Any, ctx: Any) -> m.ListToolsResult:
        return m.ListToolsResult(tools=[m.Tool(name="ask_task", input_schema=m.ToolInputSchema(type="object"))])

    async def call_tool(self, params: m.CallToolRequestParams, ctx: Any) -> m.CallToolResult:
        async def work(task_ctx: Any) -> m.CallToolResult:
            answer = await task_ctx.request("elicitation/create", {"mode": "form", **ASK}, raw=True, timeout=60)
            await anyio.sleep(0)
            name = answer.get("content", {}).get("name")
            return m.CallToolResult(content=[m.TextContent(text=f"{name} asked by {PID}")])

        return await tasks.run_as_task(ctx, work, required=True)


class Both:
    """`/ext...` to the tasks-extension server, everything else to the handshake one; one lifespan."""

    def __init__(self) -> None:
        self.handshake = create_app(Handshake())
        self.ext = create_app(Extension(), path="/ext", legacy_sse=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return

        async def tagged(message: Message) -> None:  # every response names its worker
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"x-worker", PID.encode())]
            await send(message)

        app = self.ext if scope["type"] == "http" and scope["path"].startswith("/ext") else self.handshake
        await app(scope, receive, tagged)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await serve_lifespan((self.handshake, self.ext), receive, send)


def build() -> Any:
    """The ASGI app (uvicorn `--factory`)."""
    return Both()
