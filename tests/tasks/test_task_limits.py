"""A task quota the client reached is the client's limit, not a server fault (issue 28, item 3): the
refusal carries `LIMIT_REACHED` (-32050, HTTP 429 on stateless HTTP) and names the bound, where it
was -32603 "Internal error" (HTTP 500).

Per-client fairness (hardening issue, item 2): anonymous stateless clients (no principal, no
connection) are counted by their address (`tasks.quota_of`), not in one bucket for everyone; their
tasks are still found by id from anywhere."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from mcp_bindings.runtime import tasks
from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.http.stateless import stateless_status
from mcp_bindings.runtime.rpc.errors import LIMIT_REACHED, McpError
from mcp_bindings.runtime.rpc.jsonrpc import Request
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.server.runtime import ServerRuntime
from mcp_bindings.runtime.tasks.core.store import InMemoryTaskStore, TaskLimitError
from mcp_bindings.runtime.tasks.core.wire import EXTENSION as TASKS_EXTENSION
from mcp_bindings.v2026_07_28 import models as m
from mcp_bindings.v2026_07_28.server import Server
from tests.support.http import ACCEPT, META, rpc, serve_in_thread

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


async def test_the_store_bounds_by_quota_key_not_by_requester() -> None:
    """Tasks without a requester counted against different quota keys have a bound each; the
    requester (what reads them) stays None, and a deleted task frees its quota key's room."""
    store = InMemoryTaskStore(max_tasks_per_requester=2)
    x = [await store.create(None, "tools/call", ttl_ms=None, poll_interval_ms=None, quota="address:x") for _ in "ab"]
    with pytest.raises(TaskLimitError) as raised:
        await store.create(None, "tools/call", ttl_ms=None, poll_interval_ms=None, quota="address:x")
    assert raised.value.data == {"bound": "max_tasks_per_requester", "limit": 2}
    y = await store.create(None, "tools/call", ttl_ms=None, poll_interval_ms=None, quota="address:y")
    assert y.requester is None and y.quota_key == "address:y"
    assert await store.get(None, x[0].task_id) == x[0]  # found as before: no requester
    assert [t.task_id for t in (await store.list(None, None, 10))[0]] == [*(t.task_id for t in x), y.task_id]
    await store.delete(x[0].task_id)
    await store.create(None, "tools/call", ttl_ms=None, poll_interval_ms=None, quota="address:x")
    # A quota equal to the requester is the requester's bound, as without one.
    await store.create("a", "tools/call", ttl_ms=None, poll_interval_ms=None, quota="a")
    await store.create("a", "tools/call", ttl_ms=None, poll_interval_ms=None)
    with pytest.raises(TaskLimitError):
        await store.create("a", "tools/call", ttl_ms=None, poll_interval_ms=None, quota="a")


EXT = "io.modelcontextprotocol/tasks"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"


class Endless(Server):
    """A tool whose work runs as a task that never finishes (so every task stays live)."""

    declared_capabilities = {"tools": {}, "extensions": {EXT: {}}}

    async def list_tools(self, params: m.PaginatedRequestParams, ctx: Any) -> m.ListToolsResult:
        schema = m.ToolInputSchema.model_validate({"type": "object"})
        return m.ListToolsResult(tools=[m.Tool(name="endless", input_schema=schema)])

    async def call_tool(self, params: m.CallToolRequestParams, ctx: Any) -> Any:
        async def work(task_ctx: Any) -> m.CallToolResult:
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

        return await tasks.run_as_task(ctx, work)


async def test_anonymous_stateless_clients_have_a_task_quota_each() -> None:
    """Client X (127.0.0.2) fills its quota and is refused (429, -32050 naming the bound); client Y
    (127.0.0.1), also anonymous and stateless, can still create tasks, and can read X's task by id."""
    server = Endless()
    tasks.configure(server, InMemoryTaskStore(max_tasks_per_requester=2))
    meta = {**META, CAPS_KEY: {**META[CAPS_KEY], "extensions": {EXT: {}}}}

    async def call(client: httpx.AsyncClient, url: str, n: int) -> httpx.Response:
        headers = {**ACCEPT, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "endless"}
        body = rpc(n, "tools/call", {"name": "endless", "arguments": {}, "_meta": meta})
        return await client.post(url, json=body, headers=headers)

    with serve_in_thread(create_app(server)) as base, anyio.fail_after(20):
        url = base + "/mcp"
        x_transport = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
        async with httpx.AsyncClient(transport=x_transport, timeout=10) as x, httpx.AsyncClient(timeout=10) as y:
            created = [await call(x, url, n) for n in (1, 2)]
            assert [r.status_code for r in created] == [200, 200]
            assert all(r.json()["result"]["resultType"] == "task" for r in created), created[0].json()
            refused = await call(x, url, 3)
            assert refused.status_code == 429
            error = refused.json()["error"]
            assert error["code"] == LIMIT_REACHED and "max_tasks_per_requester" in error["message"]
            assert error["data"] == {"bound": "max_tasks_per_requester", "limit": 2}
            for n in (4, 5):
                mine = await call(y, url, n)
                assert mine.status_code == 200 and mine.json()["result"]["resultType"] == "task", mine.json()
            assert (await call(y, url, 6)).status_code == 429  # Y's own bound
            task_id = created[0].json()["result"]["taskId"]
            get = rpc(7, "tasks/get", {"taskId": task_id, "_meta": meta})
            headers = {**ACCEPT, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tasks/get", "Mcp-Name": task_id}
            found = await y.post(url, json=get, headers=headers)
            assert found.status_code == 200 and found.json()["result"]["taskId"] == task_id, found.json()
