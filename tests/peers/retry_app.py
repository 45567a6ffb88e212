"""The app tests/scaleout/test_scaleout_retry.py runs on N uvicorn workers (`uvicorn --workers N --factory
tests.peers.retry_app:build`, through `tests.scaleout.test_scaleout.Deployment`); it holds no tests itself.

A 2026-07-28 server whose tools record the pid of the worker running them (a line appended to the
file named by the `mark` argument, so a test knows which worker to kill), report progress, then
sleep: `read_slow` (readOnlyHint), `idempotent_slow` (idempotentHint), `write_slow` (no hint: not
safe to repeat) and `confirm_slow` (idempotentHint; one input round whose second request records
and sleeps). Every response names the worker that answered (`x-worker`). The deployment's backend
and `requestState` secret come from the environment (`MCP_REDIS_URL`, `MCP_REQUEST_STATE_SECRET`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
from starlette.types import Message, Receive, Scope, Send

from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.v2026_07_28 import models as m
from mcp_bindings.v2026_07_28.server import Server
from tests.peers.scaleout_app import confirm_ask

SCHEMA = m.ToolInputSchema(type="object")
PID = str(os.getpid()).encode()
HINTS: dict[str, dict[str, bool]] = {
    "read_slow": {"readOnlyHint": True},
    "idempotent_slow": {"readOnlyHint": False, "idempotentHint": True},
    "write_slow": {"readOnlyHint": False, "idempotentHint": False, "destructiveHint": True},
    "confirm_slow": {"idempotentHint": True},
}


def text(value: str) -> m.CallToolResult:
    return m.CallToolResult(content=[m.TextContent(text=value)])


async def record_and_sleep(args: dict[str, Any], ctx: Any) -> None:
    """Append this worker's pid to the `mark` file, report progress 1 and 2, sleep `sleep` seconds."""
    mark = args.get("mark")
    if isinstance(mark, str):
        with Path(mark).open("a", encoding="utf-8") as out:
            out.write(f"{os.getpid()}\n")
    for step in (1, 2):
        await ctx.report_progress(step, 3)
    await anyio.sleep(float(args.get("sleep", 0)))


class Retried(Server):
    name = "retried"
    version = "1.0.0"
    declared_capabilities = {"tools": {}}

    async def list_tools(self, params: Any, ctx: Any) -> m.ListToolsResult:
        tools = [
            m.Tool(name=name, input_schema=SCHEMA, annotations=m.ToolAnnotations.model_validate(hints))
            for name, hints in HINTS.items()
        ]
        return m.ListToolsResult(tools=tools)

    async def call_tool(self, params: m.CallToolRequestParams, ctx: Any) -> m.CallToolResult | m.InputRequiredResult:
        args = params.arguments or {}
        pid = str(os.getpid())
        if params.name == "confirm_slow":
            if params.request_state is None:  # the first round: ask, and seal this worker's pid
                return confirm_ask(pid)
            await record_and_sleep(args, ctx)
            return text(f"sealed by {params.request_state}, opened by {pid}")
        if params.name in HINTS:
            await record_and_sleep(args, ctx)
            return text(f"{args.get('n')} from {pid}")
        raise ValueError(params.name)


class Tagged:
    """The app, with every response naming its worker (`x-worker`)."""

    def __init__(self) -> None:
        self.app = create_app(Retried(), json_only=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def tagged(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"x-worker", PID)]
            await send(message)

        await self.app(scope, receive, tagged if scope["type"] == "http" else send)


def build() -> Any:
    """The ASGI app (uvicorn `--factory`)."""
    return Tagged()
