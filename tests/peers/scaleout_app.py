"""The app the scale-out tests and `benchmarks/bench_workers.py` run on N uvicorn workers
(`uvicorn --workers N --factory tests.peers.scaleout_app:build`); it holds no tests itself.

Two servers behind one port: `/mcp`, a 2026-07-28 (stateless) server whose tools say which worker
answered (its pid), seal input rounds, and raise broadcasts; `/tasks`, a 2025-11-25 server behind
bearer auth (so a task belongs to a principal, not to one worker's connection) whose `sleep` tool
runs as a task. Both share the deployment's backend (`MCP_REDIS_URL`) and `requestState` secret.
The stateless server also offers the tasks extension (`slow_task`), and the task server broadcasts a
custom notification of extension `com.example/pings` (`ping_all`).
"""

from __future__ import annotations

import os
from typing import Any

import anyio
from starlette.types import Message, Receive, Scope, Send

from mcp_bindings.runtime import tasks
from mcp_bindings.runtime.auth.resource_server import AccessToken, InvalidTokenError, require_bearer
from mcp_bindings.runtime.http.app import StreamableHTTPApp, create_app
from mcp_bindings.runtime.server import extensions
from mcp_bindings.v2025_11_25 import models as m25
from mcp_bindings.v2025_11_25.server import Server as Server25
from mcp_bindings.v2026_07_28 import models as m
from mcp_bindings.v2026_07_28.server import Server

SCHEMA = m.ToolInputSchema(type="object")
PID = str(os.getpid()).encode()
TOOLS = ("whoami", "confirm", "echo", "change_tools", "update_resource", "slow_task")
PINGS = "com.example/pings"
PINGED = extensions.notification("notifications/example/pinged", None, extension=PINGS, sender="server")


def text(value: str) -> m.CallToolResult:
    return m.CallToolResult(content=[m.TextContent(text=value)])


class Scaled(Server):
    name = "scaled"
    version = "1.0.0"
    declared_capabilities = {
        "tools": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "extensions": {"io.modelcontextprotocol/tasks": {}},
    }

    async def list_tools(self, params: Any, ctx: Any) -> m.ListToolsResult:
        return m.ListToolsResult(tools=[m.Tool(name=n, input_schema=SCHEMA) for n in TOOLS])

    async def list_resources(self, params: Any, ctx: Any) -> m.ListResourcesResult:
        return m.ListResourcesResult(resources=[m.Resource(name="doc", uri="file:///doc")])

    async def read_resource(self, params: Any, ctx: Any) -> m.ReadResourceResult:
        return m.ReadResourceResult(contents=[m.TextResourceContents(uri=params.uri, text=f"pid {os.getpid()}")])

    async def call_tool(self, params: m.CallToolRequestParams, ctx: Any) -> m.CallToolResult | m.InputRequiredResult:
        args = params.arguments or {}
        pid = str(os.getpid())
        if params.name == "whoami":
            return text(pid)
        if params.name == "echo":  # the concurrency check: the answer names its request
            await anyio.sleep(float(args.get("sleep", 0)))
            return text(f"{args.get('n')} from {pid}")
        if params.name == "confirm":  # one input round; the state names the worker that sealed it
            if params.request_state is None:
                return confirm_ask(pid)
            return text(f"sealed by {params.request_state}, opened by {pid}")
        if params.name == "change_tools":
            await self.broadcast("notifications/tools/list_changed")
            return text(pid)
        if params.name == "update_resource":
            await self.broadcast("notifications/resources/updated", {"uri": args.get("uri", "file:///doc")})
            return text(pid)
        if params.name == "slow_task":  # a task of the tasks extension, its work running in this worker
            seconds = float(args.get("seconds", 60))

            async def work(task_ctx: Any) -> m.CallToolResult:
                await anyio.sleep(seconds)
                return text(f"slept {seconds} on {pid}")

            return await tasks.run_as_task(ctx, work, required=True)
        raise ValueError(params.name)


class TaskServer(Server25):
    name = "scaled-tasks"
    version = "1.0.0"
    declared_capabilities = {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}

    async def list_tools(self, params: Any, ctx: Any) -> m25.ListToolsResult:
        schema = m25.ToolInputSchema(type="object")
        tool = m25.Tool(name="sleep", input_schema=schema, execution={"taskSupport": "optional"})  # pyright: ignore[reportArgumentType]
        names = ("running", "ping_all")
        return m25.ListToolsResult(tools=[tool, *(m25.Tool(name=n, input_schema=schema) for n in names)])

    async def call_tool(self, params: m25.CallToolRequestParams, ctx: Any) -> Any:
        if params.name == "running":  # task work running in this worker
            running = len(tasks.service_for(self).running)
            return m25.CallToolResult(content=[m25.TextContent(type="text", text=str(running))])
        if params.name == "ping_all":  # a custom broadcast: to the clients (of every worker) that declared it
            sent = await extensions.broadcast(self, PINGED, {"from": os.getpid()})
            return m25.CallToolResult(content=[m25.TextContent(type="text", text=str(sent))])
        seconds = float((params.arguments or {}).get("seconds", 0))

        async def work(task_ctx: Any) -> m25.CallToolResult:
            await anyio.sleep(seconds)
            return m25.CallToolResult(content=[m25.TextContent(type="text", text=f"slept {seconds} on {os.getpid()}")])

        return await tasks.run_as_task(ctx, work)


class Tokens:
    """Bearer tokens `<name>-token` for the users alice and bob."""

    async def verify(self, token: str, *, resource: str) -> AccessToken:
        user = token.removesuffix("-token")
        if user not in ("alice", "bob") or not token.endswith("-token"):
            raise InvalidTokenError("unknown token")
        return AccessToken(scopes=("mcp",), client_id="cli", subject=user, issuer="https://as.example")


class Both:
    """`/tasks...` to the task server (behind bearer auth), everything else to the stateless one; one lifespan."""

    def __init__(self) -> None:
        self.stateless = create_app(Scaled(), json_only=False)
        self.tasks_app = create_app(TaskServer(), path="/tasks", legacy_sse=False)
        self.authed: Any = require_bearer(
            self.tasks_app,  # pyright: ignore[reportArgumentType]
            Tokens(),
            resource="http://127.0.0.1/tasks",
            authorization_servers=["https://as.example"],
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return

        async def tagged(message: Message) -> None:  # every response names its worker
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"x-worker", PID)]
            await send(message)

        if scope["type"] == "http" and scope["path"].startswith("/tasks"):
            await self.authed(scope, receive, tagged)
        else:
            await self.stateless(scope, receive, tagged)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await serve_lifespan((self.stateless, self.tasks_app), receive, send)


async def serve_lifespan(apps: tuple[StreamableHTTPApp, ...], receive: Receive, send: Send) -> None:
    """The ASGI lifespan of several apps behind one: each started on startup, drained and stopped on
    shutdown (what `StreamableHTTPApp` does for itself alone)."""
    async with anyio.create_task_group() as group:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    for app in apps:
                        await app.start(group)
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    group.cancel_scope.cancel()
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                for app in apps:
                    app.drain()
                    app.streamable.close_all()
                group.cancel_scope.cancel()
                for app in apps:
                    await app.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return


def confirm_ask(state: str) -> m.InputRequiredResult:
    """One input round asking `ok?`, with `state` (a worker's pid) sealed as its requestState."""
    schema = m.ElicitRequestFormParamsRequestedSchema.model_validate(
        {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    )
    ask = m.ElicitRequest(
        method="elicitation/create", params=m.ElicitRequestFormParams(message="ok?", requested_schema=schema)
    )
    return m.InputRequiredResult(input_requests={"confirm": ask}, request_state=state)


def build() -> Any:
    """The ASGI app (uvicorn `--factory`)."""
    return Both()
