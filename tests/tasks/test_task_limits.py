"""A task quota the client reached is the client's limit, not a server fault (issue 28, item 3): the
refusal carries `LIMIT_REACHED` (-32050, HTTP 429 on stateless HTTP) and names the bound, where it
was -32603 "Internal error" (HTTP 500)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.http.stateless import stateless_status
from mcp_bindings.runtime.protocol.tasks_wire import EXTENSION as TASKS_EXTENSION
from mcp_bindings.runtime.rpc.errors import LIMIT_REACHED, McpError
from mcp_bindings.runtime.rpc.jsonrpc import Request
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.server.runtime import ServerRuntime
from mcp_bindings.runtime.tasks import service as tasks
from mcp_bindings.runtime.tasks.store import InMemoryTaskStore, TaskLimitError

pytestmark = pytest.mark.anyio


async def test_the_store_names_the_bound() -> None:
    store = InMemoryTaskStore(max_tasks=3, max_tasks_per_requester=1)
    await store.create("a", "tools/call", ttl_ms=None, poll_interval_ms=None)
    with pytest.raises(TaskLimitError) as raised:
        await store.create("a", "tools/call", ttl_ms=None, poll_interval_ms=None)
    assert raised.value.code == LIMIT_REACHED
    assert raised.value.data == {"bound": "max_tasks_per_requester", "limit": 1}
    assert "max_tasks_per_requester" in raised.value.message and "Internal error" not in raised.value.message
    await store.create("b", "tools/call", ttl_ms=None, poll_interval_ms=None)
    await store.create("c", "tools/call", ttl_ms=None, poll_interval_ms=None)
    with pytest.raises(TaskLimitError) as raised:
        await store.create("d", "tools/call", ttl_ms=None, poll_interval_ms=None)
    assert raised.value.data == {"bound": "max_tasks", "limit": 3}


def test_stateless_http_answers_429() -> None:
    assert stateless_status(LIMIT_REACHED) == 429


async def test_a_task_over_the_quota_is_refused_with_the_limit_code() -> None:
    app = App("quota", protocol="2026-07-28")

    @app.tool(task=True)
    async def work(text: str) -> str:
        return text

    server = app.server
    tasks.configure(server, InMemoryTaskStore(max_tasks=1))
    runtime = ServerRuntime(server)
    session = Session(None, runtime)  # type: ignore[arg-type]  # no transport: nothing is sent
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
    }
    params = {"name": "work", "arguments": {"text": "x"}, "_meta": meta}
    await runtime.on_request(Request(1, "tools/call", params, {}), session)  # the first task
    with pytest.raises(McpError) as raised:
        await runtime.on_request(Request(2, "tools/call", params, {}), session)
    assert raised.value.code == LIMIT_REACHED and "max_tasks" in raised.value.message
