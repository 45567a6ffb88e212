"""The typed client's side of the tasks extension at 2026-07-28 (runtime/client/tasks_ext.py):
our client against our `examples/everything_server.py`, over real Streamable HTTP on 127.0.0.1 and
over stdio (a real process).

A client that declares the extension (`handlers.use_extension(EXTENSION)`) gets a `ToolTask` from
`call_tool` when the server makes the call a task; `result()` polls it to the `CallToolResult`
(answering input requests through the client's own handlers), raises the task's error or
`TaskCancelledError`; `cancel()`, `get()`, `update()`; another principal's client cannot read the
task, an unknown id is -32602. Without the opt-in nothing changes.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_bindings.ext.io_modelcontextprotocol_tasks.methods import EXTENSION as TASKS
from mcp_bindings.runtime import tasks
from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.runtime.client.tasks_ext import TaskCancelledError, ToolTask, finished
from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.protocol.context import RequestContext
from mcp_bindings.runtime.rpc.errors import McpError
from mcp_bindings.runtime.stdio.connect import connect_stdio
from mcp_bindings.runtime.tasks.core import wire as tasks_wire
from mcp_bindings.runtime.tasks.core.wire import EXTENSION
from mcp_bindings.v2026_07_28 import client as c
from mcp_bindings.v2026_07_28 import models as m
from mcp_bindings.v2026_07_28.server import Server
from tests.peers.harness import server_env
from tests.support import REPO_ROOT
from tests.support.http import load_example, serve_in_thread

pytestmark = pytest.mark.anyio

VERSION = "2026-07-28"
LIMIT = 20  # seconds any one test may take
WHO = "x-test-principal"  # the test middleware's stand-in for a bearer token


@dataclass
class _Principal:
    principal: str


class PrincipalFromHeader:
    """What the bearer middleware does (`scope["auth"].principal`), from a plain test header."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            who = dict(scope["headers"]).get(WHO.encode())
            if who is not None:
                scope = {**scope, "auth": _Principal(who.decode())}
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    server = load_example("everything_server").EverythingServer()
    tasks.configure(server, poll_interval_ms=50)
    with serve_in_thread(PrincipalFromHeader(create_app(server))) as base:
        yield base + "/mcp"


@pytest.fixture(scope="module")
def slow_poll_url() -> Iterator[str]:
    """Polls every 5 s: only the status notifications can make a result arrive sooner."""
    server = load_example("everything_server").EverythingServer()
    tasks.configure(server, poll_interval_ms=5000)
    with serve_in_thread(create_app(server)) as base:
        yield base + "/mcp"


class Handlers(c.ClientHandlers):
    """Answers every elicitation: confirms, and gives names in turn."""

    def __init__(self, *, opt_in: bool = True) -> None:
        super().__init__()
        self.asked: list[str] = []
        if opt_in:
            self.use_extension(EXTENSION)

    async def elicit(self, params: m.ElicitRequestParams, ctx: RequestContext) -> m.ElicitResult:
        message = str(getattr(params, "message", ""))
        self.asked.append(message)
        return m.ElicitResult(action="accept", content={"confirm": True, "name": f"n{len(self.asked)}"})


def _text(result: Any) -> str:
    assert isinstance(result, m.CallToolResult), result
    return str(result.content[0].text)  # pyright: ignore[reportAttributeAccessIssue]


async def test_long_task_polled_to_completion(url: str) -> None:
    with anyio.fail_after(LIMIT):
        async with connect_http(url, c.Client, handlers=Handlers(), protocol_version=VERSION) as client:
            answer = await client.call_tool(name="slow_compute", arguments={"seconds": 0.3, "label": "x"})
            assert isinstance(answer, ToolTask) and answer.status == "working"
            task: ToolTask[m.CallToolResult] = answer
            assert (await task.get()).status == "working"
            assert _text(await task.result()) == "Computed x after 0.3s"
            assert task.status == "completed"
            quick = await client.call_tool(name="slow_compute", arguments={"seconds": 0, "label": "y"})
            assert _text(await finished(quick)) == "Computed y after 0s"


async def test_input_required_tasks_answered_by_the_handlers(url: str) -> None:
    handlers = Handlers()
    with anyio.fail_after(LIMIT):
        async with connect_http(url, c.Client, handlers=handlers, protocol_version=VERSION) as client:
            task = await client.call_tool(name="confirm_delete", arguments={"filename": "a.txt"})
            assert isinstance(task, ToolTask)
            assert _text(await task.result()) == "Deleted a.txt"
            assert handlers.asked == ["Delete a.txt?"]
            two = await client.call_tool(name="multi_input", arguments={})
            assert isinstance(two, ToolTask)
            assert _text(await two.result()).startswith("Got n")
            assert sorted(handlers.asked[1:]) == ["First name?", "Second name?"]


async def test_update_by_hand(url: str) -> None:
    with anyio.fail_after(LIMIT):
        async with connect_http(url, c.Client, handlers=Handlers(), protocol_version=VERSION) as client:
            task = await client.call_tool(name="confirm_delete", arguments={"filename": "b.txt"})
            assert isinstance(task, ToolTask)
            while (state := await task.get()).status != "input_required":
                await anyio.sleep(0.02)
            (key,) = state.input_requests  # pyright: ignore[reportAttributeAccessIssue]
            await task.update({key: {"action": "decline"}})
            assert _text(await task.result()) == "Kept b.txt"


async def test_cancel_and_errors(url: str) -> None:
    with anyio.fail_after(LIMIT):
        async with connect_http(url, c.Client, handlers=Handlers(), protocol_version=VERSION) as client:
            task = await client.call_tool(name="slow_compute", arguments={"seconds": 60})
            assert isinstance(task, ToolTask)
            await task.cancel()
            assert (await task.get()).status == "cancelled"
            with pytest.raises(TaskCancelledError, match=task.task_id):
                await task.result()
            await task.cancel()  # a finished task: acknowledged all the same
            failing = await client.call_tool(name="protocol_error_job", arguments={})
            assert isinstance(failing, ToolTask)
            with pytest.raises(McpError) as failed:
                await failing.result()
            assert failed.value.code == -32603
            tool_error = await client.call_tool(name="failing_job", arguments={})
            assert isinstance(tool_error, ToolTask)
            assert (await tool_error.result()).is_error is True  # a tool error completes the task


async def test_another_client_cannot_read_it_and_unknown_ids(url: str) -> None:
    with anyio.fail_after(LIMIT):
        async with (
            connect_http(url, c.Client, handlers=Handlers(), protocol_version=VERSION, headers={WHO: "alice"}) as alice,
            connect_http(url, c.Client, handlers=Handlers(), protocol_version=VERSION, headers={WHO: "bob"}) as bob,
        ):
            task = await alice.call_tool(name="slow_compute", arguments={"seconds": 60})
            assert isinstance(task, ToolTask)
            for method in ("tasks/get", "tasks/cancel"):
                with pytest.raises(McpError) as foreign:
                    await bob.session.call_extension(TASKS[method], {"taskId": task.task_id})
                assert foreign.value.code == -32602, method
            assert (await task.get()).status == "working"  # bob's cancel changed nothing
            with pytest.raises(McpError) as unknown:
                await alice.session.call_extension(TASKS["tasks/get"], {"taskId": "no-such-task"})
            assert unknown.value.code == -32602
            await task.cancel()


async def test_without_the_opt_in_nothing_changes(url: str) -> None:
    handlers = Handlers(opt_in=False)
    with anyio.fail_after(LIMIT):
        async with connect_http(url, c.Client, handlers=handlers, protocol_version=VERSION) as client:
            result = await client.call_tool(name="slow_compute", arguments={"seconds": 0, "label": "z"})
            assert _text(result) == "Computed z after 0s"
            result = await client.call_tool(name="confirm_delete", arguments={"filename": "c.txt"})  # MRTR
            assert _text(result) == "Deleted c.txt" and handlers.asked == ["Delete c.txt?"]
            with pytest.raises(McpError) as refused:
                await client.call_tool(name="failing_job", arguments={})  # requires a task
            assert refused.value.code == -32021


async def test_follow_wakes_on_status_notifications(slow_poll_url: str) -> None:
    with anyio.fail_after(LIMIT):
        async with connect_http(slow_poll_url, c.Client, handlers=Handlers(), protocol_version=VERSION) as client:
            task = await client.call_tool(name="slow_compute", arguments={"seconds": 0.5, "label": "f"})
            assert isinstance(task, ToolTask) and task.poll_interval == 5.0
            started = time.monotonic()
            assert _text(await task.result(follow=True)) == "Computed f after 0.5s"
            assert time.monotonic() - started < 4.0  # woken by notifications/tasks, not the 5 s poll


async def test_over_stdio(tmp_path: Path) -> None:
    handlers = Handlers()
    command = [sys.executable, str(REPO_ROOT / "examples" / "everything_server.py"), "--transport", "stdio"]
    with anyio.fail_after(LIMIT), open(tmp_path / "server.stderr", "wb") as stderr:
        async with connect_stdio(
            command, c.Client, handlers=handlers, protocol_version=VERSION, env=server_env(), stderr=stderr
        ) as client:
            task = await client.call_tool(name="slow_compute", arguments={"seconds": 0.2, "label": "io"})
            assert isinstance(task, ToolTask)
            assert _text(await task.result()) == "Computed io after 0.2s"
            asking = await client.call_tool(name="confirm_delete", arguments={"filename": "d.txt"})
            assert isinstance(asking, ToolTask)
            assert _text(await asking.result()) == "Deleted d.txt"
            long = await client.call_tool(name="slow_compute", arguments={"seconds": 60})
            assert isinstance(long, ToolTask)
            await long.cancel()
            with pytest.raises(TaskCancelledError):
                await long.result()
            with pytest.raises(McpError) as unknown:
                await client.session.call_extension(TASKS["tasks/get"], {"taskId": "no-such-task"})
            assert unknown.value.code == -32602


@pytest.fixture(scope="module")
def short_url() -> Iterator[str]:
    """Tasks that live 1.5 s."""
    server = load_example("everything_server").EverythingServer()
    tasks.configure(server, default_ttl_ms=1500, poll_interval_ms=100)
    with serve_in_thread(create_app(server)) as base:
        yield base + "/mcp"


async def test_result_is_bounded_by_the_ttl(short_url: str) -> None:
    with anyio.fail_after(LIMIT):
        async with connect_http(short_url, c.Client, handlers=Handlers(), protocol_version=VERSION) as client:
            task = await client.call_tool(name="slow_compute", arguments={"seconds": 60})
            assert isinstance(task, ToolTask)
            started = time.monotonic()
            with pytest.raises(McpError):  # expired here, or failed / gone on the server
                await task.result()
            assert time.monotonic() - started < 5.0


async def test_a_client_without_input_handlers(url: str) -> None:
    """The server asks for input this client cannot give: `result()` says so; the task can be cancelled."""
    handlers = c.ClientHandlers()
    handlers.use_extension(EXTENSION)
    with anyio.fail_after(LIMIT):
        async with connect_http(url, c.Client, handlers=handlers, protocol_version=VERSION) as client:
            task = await client.call_tool(name="confirm_delete", arguments={"filename": "e.txt"})
            assert isinstance(task, ToolTask)
            with pytest.raises(McpError) as unanswered:
                await task.result()
            assert unanswered.value.code == -32601 and "elicit" in unanswered.value.message
            await task.cancel()
            assert (await task.get()).status == "cancelled"


class RogueServer(Server):
    """Answers every tools/call with a task, whatever the client declared."""

    declared_capabilities = {"tools": {}, "extensions": {EXTENSION: {}}}

    async def list_tools(self, params: m.PaginatedRequestParams | None, ctx: RequestContext) -> m.ListToolsResult:
        return m.ListToolsResult(tools=[])

    async def call_tool(self, params: m.CallToolRequestParams, ctx: RequestContext) -> Any:
        now = "2026-01-01T00:00:00Z"
        task = {"taskId": "t1", "status": "working", "createdAt": now, "lastUpdatedAt": now, "ttlMs": None}
        return tasks_wire.CreateTaskResult.model_validate({"resultType": "task", **task})


async def test_a_task_the_client_did_not_opt_into_is_an_error() -> None:
    with anyio.fail_after(LIMIT):
        async with connect_in_memory(
            RogueServer(), c.Client, handlers=Handlers(opt_in=False), protocol_version=VERSION
        ) as client:
            with pytest.raises(McpError) as refused:
                await client.call_tool(name="anything")
            assert refused.value.code == -32603 and "did not declare the extension" in refused.value.message
