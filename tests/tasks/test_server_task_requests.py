"""Task-augmented requests from a server's handler to its client at MCP 2025-11-25
(runtime/tasks/server/outgoing.py), against our own client as the receiver (runtime/client/tasks.py): in
one process and over real Streamable HTTP on 127.0.0.1.

The handler gets a `ClientTask` whose `result()` is the plain `CreateMessageResult` (what
`ctx.request` returns), `get()` shows the task, `cancel()` cancels it; a client that did not
declare `tasks.requests.sampling.createMessage` is not sent one (`NotExpressible`, nothing sent);
a client that answers at once gives a handle holding that result.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.protocol.context import RequestContext
from mcp_bindings.runtime.rpc.errors import McpError
from mcp_bindings.runtime.server.bridge import NotExpressible
from mcp_bindings.runtime.tasks.server.outgoing import ClientTask, request_as_task
from mcp_bindings.v2025_11_25 import client as c
from mcp_bindings.v2025_11_25 import models as m
from mcp_bindings.v2025_11_25 import server as s
from tests.support.http import serve_in_thread
from tests.support.tasks import SleepServer, text

pytestmark = pytest.mark.anyio

VERSION = "2025-11-25"
LIMIT = 20
ASK = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 10}
TASK_CAPS = {"sampling": {}, "tasks": {"cancel": {}, "requests": {"sampling": {"createMessage": {}}}}}


class AskingServer(s.Server):
    declared_capabilities = {"tools": {}}

    async def list_tools(self, params: m.PaginatedRequestParams | None, ctx: RequestContext) -> m.ListToolsResult:
        schema = m.ToolInputSchema.model_validate({"type": "object"})
        return m.ListToolsResult(tools=[m.Tool(name=name, input_schema=schema) for name in ("ask", "cancel")])

    async def call_tool(self, params: m.CallToolRequestParams, ctx: RequestContext) -> m.CallToolResult:
        try:
            handle = await request_as_task(ctx, "sampling/createMessage", ASK, ttl_ms=30_000)
        except NotExpressible as exc:
            return text(f"refused: {exc}")
        assert isinstance(handle, ClientTask)
        if params.name == "cancel":
            cancelled = await handle.cancel()
            with pytest.raises(McpError) as gone:
                await handle.result()
            return text(f"{cancelled.status} {gone.value.code}")
        seen = await handle.get() if handle.task_id is not None else None
        result = await handle.result()
        assert isinstance(result, m.CreateMessageResult)
        content = result.content
        assert isinstance(content, m.TextContent)
        first = "at once" if seen is None else seen.status
        return text(f"{first} -> {content.text}")


class Sampler(c.ClientHandlers):
    """Samples after `delay` seconds, and takes sampling as a task."""

    declared_capabilities: Any = TASK_CAPS
    delay = 0.3

    async def create_message(self, params: m.CreateMessageRequestParams, ctx: RequestContext) -> m.CreateMessageResult:
        await anyio.sleep(self.delay)
        return m.CreateMessageResult(role="assistant", content=m.TextContent(type="text", text="sampled"), model="t")


class PlainSampler(Sampler):
    """Samples at once, and does not take sampling as a task."""

    declared_capabilities: Any = {"sampling": {}}
    delay = 0


def _text(result: m.CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, m.TextContent)
    return content.text


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serve_in_thread(create_app(AskingServer())) as base:
        yield base + "/mcp"


async def test_in_memory() -> None:
    with anyio.fail_after(LIMIT):
        async with connect_in_memory(AskingServer(), c.Client, handlers=Sampler(), protocol_version=VERSION) as client:
            assert _text(await client.call_tool(name="ask")) == "working -> sampled"
            assert _text(await client.call_tool(name="cancel")) == "cancelled -32602"
        async with connect_in_memory(
            AskingServer(), c.Client, handlers=PlainSampler(), protocol_version=VERSION
        ) as client:
            refused = _text(await client.call_tool(name="ask"))
            assert refused.startswith("refused: ") and "tasks.requests.sampling.createMessage" in refused


async def test_over_http(url: str) -> None:
    with anyio.fail_after(LIMIT):
        async with connect_http(url, c.Client, handlers=Sampler(), protocol_version=VERSION) as client:
            assert _text(await client.call_tool(name="ask")) == "working -> sampled"
            assert _text(await client.call_tool(name="cancel")) == "cancelled -32602"


async def test_the_2025_client_handle_reads_like_the_2026_one() -> None:
    """`call_tool(..., task=...)` at 2025-11-25: a `TaskHandle` with the same `get()` / `result()` /
    `cancel()` as the 2026-07-28 `ToolTask`, and `finished()` takes either."""
    from mcp_bindings.runtime.client.task_handle import TaskHandle
    from mcp_bindings.runtime.client.tasks_ext import finished

    with anyio.fail_after(LIMIT):
        async with connect_in_memory(SleepServer(), c.Client, protocol_version=VERSION) as client:
            await client.list_tools()
            handle = await client.call_tool(name="sleep", arguments={"seconds": 0.2}, task=m.TaskMetadata())
            assert isinstance(handle, TaskHandle)
            assert (await handle.get()).status == "working"
            assert _text(await finished(handle)) == "slept 0.2"
            long = await client.call_tool(name="sleep", arguments={"seconds": 60}, task=m.TaskMetadata())
            assert isinstance(long, TaskHandle)
            assert (await long.cancel()).status == "cancelled"
