"""Tasks at 2025-11-25 (runtime/tasks/server/, runtime/tasks/core/store.py): task-augmented `tools/call`
answered with `CreateTaskResult`, `tasks/get|result|list|cancel` served by the runtime from the task
store, status notifications, TTL expiry, requester scoping, tool-level negotiation, and the typed
client's `TaskHandle`.

The store on its own; the protocol in memory; then real processes: the peer script (written into
tmp_path) over stdio (`connect_stdio`) and on uvicorn over HTTP (127.0.0.1), where a result is also
fetched on new connections after the one that created the task closed, and a second client can
neither read nor cancel the first one's task. Bad input gets the spec's errors: -32602 for an
unknown, foreign or expired task, a bad cursor and cancelling a finished task; -32601 for a
task-augmented call of a tool that does not support tasks (and for a "required" one called plainly).
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import orjson
import pytest
from jsonschema import Draft202012Validator

from mcp_bindings.runtime import tasks
from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.runtime.client.task_handle import TaskHandle
from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, CapabilityError, McpError
from mcp_bindings.runtime.stdio.connect import connect_stdio
from mcp_bindings.runtime.tasks.core.store import InMemoryTaskStore, InvalidCursor, TaskLimitError
from mcp_bindings.runtime.tasks.server.service import RELATED_TASK
from mcp_bindings.v2025_11_25 import client as c
from mcp_bindings.v2025_11_25 import models as m
from tests.peers.harness import server_env
from tests.support import REPO_ROOT
from tests.support.http import ACCEPT, open_session, rpc, serve_in_thread, sse_messages
from tests.support.pipeline import cached_source

pytestmark = pytest.mark.anyio

LIMIT = 30  # seconds any one test may take
VERSION = "2025-11-25"

PEER = '''
"""A 2025-11-25 server whose tools run as tasks (tests/tasks/test_tasks.py). argv[1]: "tasks" or "plain"."""

import sys

import anyio

from mcp_bindings.runtime import tasks
from mcp_bindings.runtime.rpc.errors import McpError
from mcp_bindings.v2025_11_25 import models as m
from mcp_bindings.v2025_11_25 import server as s

SCHEMA = {"type": "object", "properties": {"seconds": {"type": "number"}}}


def tool(name, support=None):
    return m.Tool(name=name, input_schema=SCHEMA, execution=None if support is None else {"taskSupport": support})


TOOLS = [
    tool("sleep", "optional"),
    tool("fail", "optional"),
    tool("tool_error", "optional"),
    tool("ask", "optional"),
    tool("inline", "optional"),
    tool("must", "required"),
    tool("plain"),
    tool("rogue", "forbidden"),
]


def text(value):
    return m.CallToolResult(content=[m.TextContent(type="text", text=value)])


class TaskServer(s.Server):
    name = "task-peer"
    declared_capabilities = {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}
    calls = 0

    async def list_tools(self, params, ctx):
        return m.ListToolsResult(tools=TOOLS)

    async def call_tool(self, params, ctx):
        type(self).calls += 1
        name, args = params.name, params.arguments or {}
        if name in ("inline", "plain"):
            return text(f"{name} done")
        if name == "rogue":  # a task nobody asked for
            now = "2025-11-25T00:00:00Z"
            task = m.Task(task_id="x", status="working", created_at=now, last_updated_at=now, ttl=None)
            return m.CreateTaskResult(task=task)
        return await tasks.run_as_task(ctx, lambda task_ctx: self.work(name, args, task_ctx))

    async def work(self, name, args, ctx):
        if name in ("sleep", "must"):
            await anyio.sleep(float(args.get("seconds", 0)))
            return text(f"slept {args.get('seconds', 0)}")
        if name == "fail":
            raise McpError(-32050, "the job failed", {"job": "fail"})
        if name == "tool_error":
            return m.CallToolResult(content=[m.TextContent(type="text", text="bad input")], is_error=True)
        answer = await ctx.request(  # "ask": the task needs the user
            "elicitation/create",
            m.ElicitRequestFormParams(
                message="Your name?", requested_schema={"type": "object", "properties": {"name": {"type": "string"}}}
            ),
        )
        return text(f"hello {answer.content['name']}")


class PlainServer(s.Server):
    """Tools, but no tasks capability: task-augmented requests are processed normally."""

    name = "plain-peer"
    calls = 0

    async def list_tools(self, params, ctx):
        return m.ListToolsResult(tools=TOOLS)

    async def call_tool(self, params, ctx):
        type(self).calls += 1

        async def at_once(task_ctx):
            return text("ran at once")

        return await tasks.run_as_task(ctx, at_once)


def make_server(kind="tasks"):
    if kind == "plain":
        return PlainServer()
    server = TaskServer()
    tasks.configure(server, default_ttl_ms=60_000, max_ttl_ms=120_000, poll_interval_ms=20)
    return server


if __name__ == "__main__":
    from mcp_bindings.runtime.stdio.serve import serve_stdio

    serve_stdio(make_server(sys.argv[1]))
'''


@pytest.fixture(scope="module")
def peer_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("task_peer") / "peer.py"
    path.write_text(PEER, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def peer(peer_script: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("_task_peer", peer_script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class Handlers(c.ClientHandlers):
    """Answers elicitations (with the related-task `_meta` recorded) and records status notifications."""

    def __init__(self) -> None:
        super().__init__()
        self.statuses: list[tuple[str, str]] = []
        self.elicited: list[Any] = []

    async def elicit(self, params: Any, ctx: Any) -> Any:
        self.elicited.append(params.meta)
        return m.ElicitResult(action="accept", content={"name": "Ada"})

    async def on_task_status(self, params: Any, ctx: Any) -> None:
        self.statuses.append((params.task_id, params.status))


async def started(client: Any, name: str, **task: Any) -> TaskHandle:
    handle = await client.call_tool(name=name, arguments={"seconds": task.pop("seconds", 0)}, task=task)
    assert isinstance(handle, TaskHandle)
    return handle


async def raises(code: int, call: Any, match: str = "") -> McpError:
    with pytest.raises(McpError) as caught:
        await call
    assert caught.value.code == code, caught.value
    assert match in caught.value.message
    return caught.value


def text_of(result: Any) -> str:
    return result.content[0].text


# -- the store -----------------------------------------------------------------------------------------


async def test_store_ids_scopes_and_bounds() -> None:
    store = InMemoryTaskStore(max_tasks=4, max_tasks_per_requester=2)
    a1 = await store.create("a", "tools/call", ttl_ms=None, poll_interval_ms=None)
    a2 = await store.create("a", "tools/call", ttl_ms=None, poll_interval_ms=None)
    assert a1.task_id != a2.task_id and len(a1.task_id) >= 32  # 192 random bits, URL-safe
    assert await store.get("a", a1.task_id) == a1
    assert await store.get("b", a1.task_id) is None  # another requester: as if unknown
    assert await store.get("a", "no-such-task") is None
    with pytest.raises(TaskLimitError):  # both of a's tasks are live
        await store.create("a", "tools/call", ttl_ms=None, poll_interval_ms=None)
    await store.update(a1.task_id, status="completed", result={"content": []})
    a3 = await store.create("a", "tools/call", ttl_ms=None, poll_interval_ms=None)  # the finished one made room
    assert await store.get("a", a1.task_id) is None and await store.get("a", a3.task_id) is not None
    await store.create("b", "tools/call", ttl_ms=None, poll_interval_ms=None)
    await store.create("b", "tools/call", ttl_ms=None, poll_interval_ms=None)
    with pytest.raises(TaskLimitError):  # 4 live tasks in all
        await store.create("c", "tools/call", ttl_ms=None, poll_interval_ms=None)


async def test_store_ttl_terminal_states_and_waiting() -> None:
    store = InMemoryTaskStore()
    short = await store.create("a", "tools/call", ttl_ms=20, poll_interval_ms=None)
    assert not short.expired()
    await anyio.sleep(0.05)
    assert short.expired()
    assert (await store.get("a", short.task_id)) is not None  # reported expired until purged
    await store.create("a", "tools/call", ttl_ms=None, poll_interval_ms=None)  # creating purges
    assert await store.get("a", short.task_id) is None

    task = await store.create("a", "tools/call", ttl_ms=None, poll_interval_ms=None)
    waited: list[Any] = []

    async def wait(task_id: str) -> None:
        waited.append(await store.wait(task_id))

    async with anyio.create_task_group() as group:
        group.start_soon(wait, task.task_id)
        await anyio.sleep(0.01)
        assert waited == []
        await store.update(task.task_id, status="input_required")
        await anyio.sleep(0.01)
        assert waited == []  # not terminal yet
        await store.update(task.task_id, status="failed", error={"code": -1, "message": "x"})
    assert waited[0].status == "failed"
    final = await store.update(task.task_id, status="completed", status_message="too late")
    assert final is not None and final.status == "failed" and final.status_message is None  # terminal is final

    gone = await store.create("a", "tools/call", ttl_ms=None, poll_interval_ms=None)
    async with anyio.create_task_group() as group:
        group.start_soon(wait, gone.task_id)
        await anyio.sleep(0.01)
        await store.delete(gone.task_id)
    assert waited[1] is None


async def test_store_lists_in_pages() -> None:
    store = InMemoryTaskStore(page_size=2)
    ids = [(await store.create("a", "tools/call", ttl_ms=None, poll_interval_ms=None)).task_id for _ in range(5)]
    await store.create("b", "tools/call", ttl_ms=None, poll_interval_ms=None)
    seen: list[str] = []
    cursor = None
    while True:
        page, cursor = await store.list("a", cursor, 10)
        assert len(page) <= 2
        seen += [state.task_id for state in page]
        if cursor is None:
            break
    assert seen == ids
    with pytest.raises(InvalidCursor):
        await store.list("a", "not-a-cursor!", 2)


# -- the protocol, in memory ------------------------------------------------------------------------------


@asynccontextmanager
async def connected(server: Any, handlers: Any = None) -> AsyncIterator[Any]:
    async with connect_in_memory(server, c.Client, handlers=handlers or Handlers(), request_timeout=10) as client:
        await client.list_tools()  # the runtime learns each tool's execution.taskSupport from the listing
        yield client


async def test_task_lifecycle(peer: ModuleType) -> None:
    server = peer.make_server()
    handlers = Handlers()
    with anyio.fail_after(LIMIT):
        async with connected(server, handlers) as client:
            assert client.server_capabilities["tasks"] == {
                "list": {},
                "cancel": {},
                "requests": {"tools": {"call": {}}},
            }
            handle = await started(client, "sleep", seconds=0.3, ttl=90_000)
            assert handle.task.status == "working" and handle.task.ttl == 90_000 and handle.task.poll_interval == 20
            assert (await handle.status()).status == "working"
            result = await handle.result()  # blocks until the task is terminal
            assert text_of(result) == "slept 0.3"
            assert result.meta == {RELATED_TASK: {"taskId": handle.task_id}}
            assert (await handle.status()).status == "completed"
            listed = await client.list_tasks()
            assert [t.task_id for t in listed.tasks] == [handle.task_id]
            assert (handle.task_id, "completed") in handlers.statuses
            capped = await started(client, "sleep", ttl=10**9)
            assert capped.task.ttl == 120_000  # the server's maximum
            assert (await started(client, "sleep")).task.ttl == 60_000  # its default
            assert (await capped.wait()).status == "completed"


async def test_failures_cancellation_and_inline_answers(peer: ModuleType) -> None:
    server = peer.make_server()
    with anyio.fail_after(LIMIT):
        async with connected(server) as client:
            failing = await started(client, "fail")
            error = await raises(-32050, failing.result(), "the job failed")
            assert error.data == {"job": "fail"}  # exactly what the request would have answered
            assert (await failing.status()).status == "failed"

            erring = await started(client, "tool_error")
            assert (await erring.result()).is_error is True  # the result itself, though the task failed
            assert (await erring.status()).status == "failed"

            long = await started(client, "sleep", seconds=30)
            cancelled = await long.cancel()
            assert cancelled.status == "cancelled"
            assert (await long.status()).status == "cancelled"
            await raises(INVALID_PARAMS, long.cancel(), "already in terminal status 'cancelled'")
            await raises(INVALID_PARAMS, long.result(), "cancelled")

            done = await started(client, "sleep")
            await done.result()
            await raises(INVALID_PARAMS, done.cancel(), "already in terminal status 'completed'")

            inline = await started(client, "inline")  # the handler answered at once: a finished task
            assert inline.task.status == "completed"
            assert text_of(await inline.result()) == "inline done"

            # A handler that answers a request without `task` with a CreateTaskResult: refused.
            await raises(INTERNAL_ERROR, client.call_tool(name="rogue"), "without `task`")


async def test_expiry(peer: ModuleType) -> None:
    server = peer.make_server()
    with anyio.fail_after(LIMIT):
        async with connected(server) as client:
            polled = await started(client, "sleep", seconds=30, ttl=200)
            waiting = await started(client, "sleep", seconds=30, ttl=300)
            begun = time.monotonic()
            await raises(INVALID_PARAMS, waiting.result(), "Task has expired")  # tasks/result: bounded by the TTL
            assert time.monotonic() - begun < 5
            await raises(INVALID_PARAMS, polled.status(), "Task has expired")
            await raises(INVALID_PARAMS, polled.status(), "Task not found")  # purged once reported
            assert (await client.list_tasks()).tasks == []


async def test_input_required_task(peer: ModuleType) -> None:
    server = peer.make_server()
    handlers = Handlers()
    with anyio.fail_after(LIMIT):
        async with connected(server, handlers) as client:
            handle = await started(client, "ask")
            assert text_of(await handle.result()) == "hello Ada"
            assert handlers.elicited[0].model_extra == {RELATED_TASK: {"taskId": handle.task_id}}
            statuses = [status for task_id, status in handlers.statuses if task_id == handle.task_id]
            assert statuses[:2] == ["input_required", "working"] and statuses[-1] == "completed"


async def test_as_task_decorator() -> None:
    from mcp_bindings.v2025_11_25 import server as s

    class Decorated(s.Server):
        declared_capabilities = {"tasks": {"requests": {"tools": {"call": {}}}}}

        async def list_tools(self, params: Any, ctx: Any) -> Any:
            execution = m.ToolExecution(task_support="optional")
            return m.ListToolsResult(tools=[m.Tool(name="t", input_schema=m.ToolInputSchema(), execution=execution)])

        @tasks.as_task
        async def call_tool(self, params: Any, ctx: Any) -> Any:
            task_id = tasks.current_task_id()
            return m.CallToolResult(content=[m.TextContent(type="text", text=f"in task {task_id is not None}")])

    with anyio.fail_after(LIMIT):
        async with connected(Decorated()) as client:
            assert text_of(await client.call_tool(name="t")) == "in task False"
            handle = await client.call_tool(name="t", task={})
            assert isinstance(handle, TaskHandle)
            assert text_of(await handle.result()) == "in task True"
            await raises(METHOD_NOT_FOUND, client.list_tasks())  # `tasks.list` not declared


async def test_tasks_are_scoped_to_their_client(peer: ModuleType) -> None:
    """Two connections to one server object: neither reads, waits for, lists nor cancels the other's task."""
    server = peer.make_server()
    with anyio.fail_after(LIMIT):
        async with connected(server) as first, connected(server) as second:
            mine = await started(first, "sleep", seconds=30)
            theirs = TaskHandle(second.session, *_specs(), mine.task)
            for call in (theirs.status(), theirs.result(), theirs.cancel()):
                await raises(INVALID_PARAMS, call, "Task not found")
            assert (await second.list_tasks()).tasks == []
            assert (await mine.status()).status == "working"  # nothing changed for its owner
            await mine.cancel()


async def test_unlimited_task_has_a_null_ttl_on_the_wire(peer: ModuleType) -> None:
    """`Task.ttl` is required and null means unlimited: a server with no default TTL writes
    `"ttl": null` (the runtime serialises with `exclude_none`, which must not drop it), and what it
    sends is valid under the official 2025-11-25 schema."""
    server = peer.TaskServer()
    tasks.configure(server, default_ttl_ms=None, poll_interval_ms=20)
    official = orjson.loads(cached_source(VERSION).raw)

    def check(name: str, instance: Any) -> None:
        validator = Draft202012Validator({"$defs": official["$defs"], "$ref": f"#/$defs/{name}"})
        assert list(validator.iter_errors(instance)) == [], f"{name} is invalid: {instance}"

    with anyio.fail_after(LIMIT):
        async with connected(server) as client:
            session = client.session.session
            created = await session.request("tools/call", {"name": "sleep", "arguments": {"seconds": 30}, "task": {}})
            assert "ttl" in created["task"] and created["task"]["ttl"] is None, created
            check("CreateTaskResult", created)
            polled = await session.request("tasks/get", {"taskId": created["task"]["taskId"]})
            assert polled["ttl"] is None and polled["status"] == "working", polled
            check("GetTaskResult", polled)
            listed = await session.request("tasks/list", {})
            assert [t["ttl"] for t in listed["tasks"]] == [None]
            check("ListTasksResult", listed)
            cancelled = await session.request("tasks/cancel", {"taskId": created["task"]["taskId"]})
            assert cancelled["ttl"] is None and cancelled["status"] == "cancelled", cancelled
            check("CancelTaskResult", cancelled)
    # Serialised by name or with the field excluded explicitly, the model still does what it is told.
    task = m.Task(task_id="x", status="working", created_at="t", last_updated_at="t", ttl=None)
    assert task.model_dump(exclude_none=True, by_alias=False)["ttl"] is None
    assert "ttl" not in task.model_dump(exclude_none=True, exclude={"ttl"})
    assert "statusMessage" not in task.model_dump(exclude_none=True)  # optional: absent, not null


def _specs() -> tuple[Any, Any]:
    spec = c.Client.protocol.client_requests["tools/call"]
    return spec, spec


async def test_bad_input(peer: ModuleType) -> None:
    server = peer.make_server()
    with anyio.fail_after(LIMIT):
        async with connected(server) as client:
            live = await started(client, "sleep", seconds=30)
            session = client.session.session
            await raises(INVALID_PARAMS, client.get_task(task_id="no-such-task"), "Task not found")
            await raises(INVALID_PARAMS, client.get_task_result(task_id="no-such-task"), "Task not found")
            await raises(INVALID_PARAMS, client.cancel_task(task_id="no-such-task"), "Task not found")
            missing = await raises(INVALID_PARAMS, session.request("tasks/get", {}))
            assert missing.data["errors"][0]["path"] == "params.taskId"
            await raises(INVALID_PARAMS, client.list_tasks(cursor="not-a-cursor"), "params.cursor")
            # Tool-level negotiation: not for a tool without task support; always for a "required" one.
            await raises(METHOD_NOT_FOUND, session.request("tools/call", {"name": "plain", "task": {}}), "'plain'")
            await raises(METHOD_NOT_FOUND, session.request("tools/call", {"name": "rogue", "task": {}}), "forbidden")
            await raises(METHOD_NOT_FOUND, client.call_tool(name="must"), "must be called as a task")
            must = await started(client, "must")
            assert text_of(await must.result()) == "slept 0"
            # Nothing else changed.
            states = {t.task_id: t.status for t in (await client.list_tasks()).tasks}
            assert states == {live.task_id: "working", must.task_id: "completed"}
            await live.cancel()


async def test_server_without_task_support(peer: ModuleType) -> None:
    """The typed client does not send `task` to a server that did not advertise it (CapabilityError,
    nothing sent); on the wire such a server processes the request normally (the spec's MUST)."""
    server = peer.make_server("plain")
    with anyio.fail_after(LIMIT):
        async with connected(server) as client:
            assert "tasks" not in client.server_capabilities
            before = type(server).calls
            with pytest.raises(CapabilityError, match=r"tasks\.requests\.tools\.call"):
                await client.call_tool(name="sleep", task={"ttl": 1000})
            assert type(server).calls == before  # nothing was sent
            raw = await client.session.session.request("tools/call", {"name": "sleep", "task": {"ttl": 1000}})
            assert raw == {"content": [{"type": "text", "text": "ran at once"}]}
            await raises(METHOD_NOT_FOUND, client.session.session.request("tasks/list", {}))


# -- real processes --------------------------------------------------------------------------------------


async def lifecycle_checks(client: Any) -> None:
    """Started, polled, cancelled; another completed; one expired; the bad input of the spec."""
    long = await started(client, "sleep", seconds=30)
    assert (await long.status()).status == "working"
    assert (await long.cancel()).status == "cancelled"
    await raises(INVALID_PARAMS, long.cancel(), "terminal status 'cancelled'")

    short = await started(client, "sleep", seconds=0.2)
    assert (await short.wait(timeout=10)).status == "completed"
    assert text_of(await short.result()) == "slept 0.2"
    await raises(INVALID_PARAMS, short.cancel(), "terminal status 'completed'")

    expiring = await started(client, "sleep", seconds=30, ttl=200)
    await anyio.sleep(0.4)
    await raises(INVALID_PARAMS, expiring.result(), "Task has expired")

    await raises(INVALID_PARAMS, client.get_task(task_id="0" * 32), "Task not found")
    await raises(METHOD_NOT_FOUND, client.session.session.request("tools/call", {"name": "plain", "task": {}}))
    states = {t.task_id: t.status for t in (await client.list_tasks()).tasks}
    assert states == {long.task_id: "cancelled", short.task_id: "completed"}


async def test_stdio(peer_script: Path, tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT), open(tmp_path / "server.stderr", "wb") as stderr:
        async with connect_stdio(
            [sys.executable, str(peer_script), "tasks"],
            c.Client,
            handlers=Handlers(),
            request_timeout=10,
            env=server_env(),
            cwd=str(REPO_ROOT),
            stderr=stderr,
        ) as client:
            await client.list_tools()
            await lifecycle_checks(client)
            asking = await started(client, "ask")
            assert text_of(await asking.result()) == "hello Ada"


@pytest.fixture(scope="module")
def http_url(peer: ModuleType) -> Iterator[str]:
    with serve_in_thread(create_app(peer.make_server())) as base:
        yield base + "/mcp"


async def post(url: str, headers: dict[str, str], message: dict[str, Any]) -> dict[str, Any]:
    """One JSON-RPC request on a connection of its own (closed when the answer is in)."""
    async with httpx.AsyncClient(timeout=10) as http, http.stream("POST", url, json=message, headers=headers) as reply:
        assert reply.status_code == 200, await reply.aread()
        if reply.headers["content-type"].startswith("application/json"):
            return orjson.loads(await reply.aread())
        async for item in sse_messages(reply):
            if item.get("id") == message["id"]:
                return item
    raise AssertionError("no answer")


async def test_http(http_url: str) -> None:
    with anyio.fail_after(LIMIT):
        async with connect_http(http_url, c.Client, handlers=Handlers(), request_timeout=10) as client:
            await client.list_tools()
            await lifecycle_checks(client)
            asking = await started(client, "ask")  # the elicitation reaches the client on its GET stream
            assert text_of(await asking.result()) == "hello Ada"

            # A second client cannot read, wait for, list or cancel the first one's tasks.
            mine = await started(client, "sleep", seconds=30)
            async with connect_http(http_url, c.Client, request_timeout=10) as other:
                theirs = TaskHandle(other.session, *_specs(), mine.task)
                for call in (theirs.status(), theirs.result(), theirs.cancel()):
                    await raises(INVALID_PARAMS, call, "Task not found")
                assert (await other.list_tasks()).tasks == []
            assert (await mine.status()).status == "working"
            await mine.cancel()


async def test_http_result_after_the_connection_closed(http_url: str) -> None:
    """The task is created on one connection, which closes; its status and result are fetched on new
    connections of the same session."""
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(timeout=10) as http:
            session = await open_session(http, http_url)
        call = rpc(2, "tools/call", {"name": "sleep", "arguments": {"seconds": 0.5}, "task": {"ttl": 30_000}})
        created = await post(http_url, session, call)
        task = created["result"]["task"]
        assert task["status"] == "working" and task["ttl"] == 30_000 and "pollInterval" in task
        polled = await post(http_url, session, rpc(3, "tasks/get", {"taskId": task["taskId"]}))
        assert polled["result"]["status"] == "working"
        result = await post(http_url, session, rpc(4, "tasks/result", {"taskId": task["taskId"]}))
        assert result["result"]["content"] == [{"type": "text", "text": "slept 0.5"}]
        assert result["result"]["_meta"] == {RELATED_TASK: {"taskId": task["taskId"]}}
        final = await post(http_url, session, rpc(5, "tasks/get", {"taskId": task["taskId"]}))
        assert final["result"]["status"] == "completed"
        # Another session: as if the task did not exist.
        async with httpx.AsyncClient(timeout=10) as http:
            stranger = await open_session(http, http_url)
        refused = await post(http_url, stranger, rpc(6, "tasks/result", {"taskId": task["taskId"]}))
        assert refused["error"]["code"] == INVALID_PARAMS
        assert ACCEPT.items() <= session.items()


# -- the official Python SDK as the requestor -------------------------------------------------------------

SDK_CLIENT = '''
"""The official MCP Python SDK (mcp==2.3.0) driving a task-augmented tools/call over stdio. Its types
cover the 2025-11-25 task wire, but its ClientSession has no `task=` on call_tool and refuses a
CreateTaskResult for tools/call; the call goes through its dispatcher, the rest through
`send_request`. Prints a JSON report."""

import json
import sys

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


async def main():
    report = {}
    server = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        init = await session.send_request(
            types.InitializeRequest(
                params=types.InitializeRequestParams(
                    protocol_version="2025-11-25",
                    capabilities=session._build_capabilities("2025-11-25"),
                    client_info=types.Implementation(name="sdk-task-client", version="2.3.0"),
                )
            ),
            types.InitializeResult,
        )
        session.adopt(init)
        await session.send_notification(types.InitializedNotification())
        report["tasks"] = init.capabilities.model_dump(by_alias=True, exclude_none=True, mode="json").get("tasks")
        call = types.CallToolRequestParams(name="sleep", arguments={"seconds": 0.2}, task=types.TaskMetadata(ttl=30000))
        try:  # the public path: the SDK checks a tools/call result as a CallToolResult, whatever was asked
            await session.send_request(types.CallToolRequest(params=call), types.CreateTaskResult)
            report["public"] = "accepted"
        except Exception as exc:
            report["public"] = type(exc).__name__
        raw = await session._dispatcher.send_raw_request(  # the SDK's own dispatcher, past that check
            "tools/call", call.model_dump(by_alias=True, exclude_none=True, mode="json"), {}
        )
        created = types.CreateTaskResult.model_validate(raw, by_name=False)
        task_id = created.task.task_id
        report["created"] = [created.task.status, created.task.ttl]
        seen = []
        while True:
            state = await session.send_request(
                types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id)), types.GetTaskResult
            )
            seen.append(state.status)
            if state.status in ("completed", "failed", "cancelled"):
                break
            await anyio.sleep((state.poll_interval or 100) / 1000)
        report["polled"] = [seen[0], seen[-1]]
        result = await session.send_request(
            types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id)), types.CallToolResult
        )
        report["result"] = result.model_dump(by_alias=True, exclude_none=True, mode="json")
        listed = await session.send_request(types.ListTasksRequest(), types.ListTasksResult)
        report["listed"] = task_id in [task.task_id for task in listed.tasks]
    print(json.dumps(report))


anyio.run(main)
'''


def test_official_sdk_client_drives_a_task(sdk_python: str, peer_script: Path, tmp_path: Path) -> None:
    import json
    import subprocess

    script = tmp_path / "sdk_task_client.py"
    script.write_text(SDK_CLIENT, encoding="utf-8")
    argv = [sdk_python, str(script), sys.executable, str(peer_script), "tasks"]
    done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=60, cwd=str(REPO_ROOT))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    assert report["created"] == ["working", 30000]
    assert report["polled"] == ["working", "completed"]
    assert report["result"]["content"] == [{"type": "text", "text": "slept 0.2"}]
    assert report["result"]["_meta"] == {RELATED_TASK: {"taskId": report["result"]["_meta"][RELATED_TASK]["taskId"]}}
    assert report["listed"] is True
    # What the SDK lacks: `call_tool` has no `task=`, and `send_request` validates every tools/call result
    # as a CallToolResult (mcp_types.methods.validate_server_result), refusing the CreateTaskResult.
    assert report["public"] == "ValidationError"
