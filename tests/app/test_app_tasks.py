"""Tasks on decorated tools (`@app.tool(task=True | "required")`), end to end in memory.

2025-11-25: the tool is listed with `execution.taskSupport`, the app declares the `tasks`
capability, a task-augmented call comes back as a `TaskHandle` whose result is the tool's; a plain
call runs at once; a required one refuses a plain call (-32601). The function's `Context` asks the
client from inside the task (the task is `input_required` meanwhile).
2026-07-28: the app declares the tasks extension; a client that declared it gets a `ToolTask`, one
that did not gets the answer at once, or -32021 for a required task; asks inside the task go
through `inputRequests`, answered by the client's handlers.
Clients of the other era get the work done at once (what the app's stub version cannot declare,
it does not offer).
`input_first=True` + `ctx.start_task()`: at 2026-07-28 the asks before `start_task()` are input
rounds of the call, then the call is answered with the task (which replays those asks from the
record and asks on through `inputRequests`); refused up front without the extension if required;
at 2025-11-25 a task from its start.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from mcp_bindings.runtime.app import Accepted, App, AppDefinitionError, Context
from mcp_bindings.runtime.app.testing import client_handlers
from mcp_bindings.runtime.client.task_handle import TaskHandle
from mcp_bindings.runtime.client.tasks_ext import ToolTask
from mcp_bindings.runtime.rpc.errors import McpError
from mcp_bindings.runtime.tasks.core.wire import EXTENSION
from mcp_bindings.runtime.tasks.server.service import current_task_id
from tests.peers.task_app import Name, build

pytestmark = pytest.mark.anyio

LIMIT = 20  # seconds any one test may take


def text_of(result: Any) -> str:
    return str(result.content[0].text)


async def test_2025_11_25_task_augmented_calls() -> None:
    app = build("2025-11-25")
    with anyio.fail_after(LIMIT):
        async with app.test_client(elicit=lambda message, schema: {"name": "ada"}) as client:
            declared = client.server_capabilities["tasks"]
            assert declared == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["slow"].execution.task_support == "optional"
            assert tools["batch"].execution.task_support == "required"
            assert tools["plain"].execution is None

            assert text_of(await client.call_tool(name="slow", arguments={"seconds": 0})) == (
                "slept 0.0 in a task: False"
            )
            handle = await client.call_tool(name="slow", arguments={"seconds": 0.2}, task={"ttl": 60_000})
            assert isinstance(handle, TaskHandle) and handle.task.status == "working"
            assert text_of(await handle.result()) == "slept 0.2 in a task: True"

            batch = await client.call_tool(name="batch", arguments={"n": 5}, task={})
            assert isinstance(batch, TaskHandle)
            assert (await batch.result()).structured_content == {"total": 10}
            with pytest.raises(McpError) as refused:
                await client.call_tool(name="batch", arguments={"n": 5})
            assert refused.value.code == -32601

            greeting = await client.call_tool(name="greet", task={})
            assert isinstance(greeting, TaskHandle)
            assert text_of(await greeting.result()) == "hello ada"

            # Invalid arguments are answered at once; the runtime hands a task-augmented caller that
            # answer as a finished task (what a task-augmented request must get back).
            bad = await client.call_tool(name="slow", arguments={"seconds": "soon"}, task={})
            assert isinstance(bad, TaskHandle)
            invalid = await bad.result()
            assert invalid.is_error and "seconds" in text_of(invalid)


async def test_2026_07_28_tasks_through_the_extension() -> None:
    app = build("2026-07-28")
    handlers = with_extension(lambda message, schema: {"name": "grace"})
    with anyio.fail_after(LIMIT):
        async with app.test_client(handlers=handlers) as client:
            task = await client.call_tool(name="slow", arguments={"seconds": 0.2})
            assert isinstance(task, ToolTask)
            assert text_of(await task.result()) == "slept 0.2 in a task: True"
            batch = await client.call_tool(name="batch", arguments={"n": 4})
            assert isinstance(batch, ToolTask)
            assert (await batch.result()).structured_content == {"total": 6}
            greeting = await client.call_tool(name="greet")
            assert isinstance(greeting, ToolTask)
            assert text_of(await greeting.result()) == "hello grace"
            assert text_of(await client.call_tool(name="plain")) == "plain"


async def test_2026_07_28_without_the_opt_in() -> None:
    app = build("2026-07-28")
    with anyio.fail_after(LIMIT):
        async with app.test_client(elicit=lambda message, schema: {"name": "lin"}) as client:
            assert text_of(await client.call_tool(name="slow", arguments={"seconds": 0})) == (
                "slept 0.0 in a task: False"
            )
            assert text_of(await client.call_tool(name="greet")) == "hello lin"  # an input round instead
            with pytest.raises(McpError) as refused:
                await client.call_tool(name="batch", arguments={"n": 1})
            assert refused.value.code == -32021


async def test_a_client_of_the_other_era_gets_the_work_at_once() -> None:
    app = build("2026-07-28")  # declares the extension only: a 2025-11-25 client sees no `tasks`
    with anyio.fail_after(LIMIT):
        async with app.test_client("2025-11-25") as client:
            assert "tasks" not in client.server_capabilities
            assert text_of(await client.call_tool(name="slow", arguments={"seconds": 0})) == (
                "slept 0.0 in a task: False"
            )
            with pytest.raises(McpError) as refused:
                await client.call_tool(name="batch", arguments={"n": 1})
            assert refused.value.code == -32601


def test_a_bad_task_option_is_refused_at_definition() -> None:
    app = App("bad")
    with pytest.raises(AppDefinitionError, match=r"tool 'x': task='sometimes'; use False, True"):

        @app.tool(name="x", task="sometimes")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
        def x() -> str:
            return "x"


# -- input first, then the task (`@app.tool(task=..., input_first=True)` + `ctx.start_task()`) --------


class Sure(BaseModel):
    sure: bool


def input_first_app() -> tuple[App, list[str]]:
    """A tool that asks for a name as a plain call, then runs as a task that asks once more; and one
    that calls `ctx.start_task()` without declaring `input_first`. `events` records each run."""
    app = App("input-first", protocol="2026-07-28")
    events: list[str] = []

    @app.tool(task="required", input_first=True)
    async def enrol(ctx: Context) -> str:
        events.append(f"run, task={current_task_id() is not None}")
        name = await ctx.elicit("Your name?", Name, key="who")
        await ctx.start_task()
        events.append(f"after start_task, task={current_task_id() is not None}")
        sure = await ctx.elicit("Sure?", Sure)
        who = name.data.name if isinstance(name, Accepted) else "?"
        confirmed = isinstance(sure, Accepted) and sure.data.sure
        return f"{who} enrolled: {confirmed}, in a task: {current_task_id() is not None}"

    @app.tool(task=True, input_first=True)
    async def maybe(ctx: Context) -> str:
        name = await ctx.elicit("Your name?", Name, key="who")
        await ctx.start_task()
        return f"{name.data.name if isinstance(name, Accepted) else '?'}, in a task: {current_task_id() is not None}"

    @app.tool(task=True)
    async def undeclared(ctx: Context) -> str:
        await ctx.start_task()
        return "unreachable"

    return app, events


def with_extension(elicit: Any) -> Any:
    """2026-07-28 client handlers that answer asks with `elicit` and declare the tasks extension."""
    handlers = client_handlers("2026-07-28", elicit=elicit)
    handlers.use_extension(EXTENSION)
    return handlers


def answer(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": "ada"} if message == "Your name?" else {"sure": True}


async def until(client: Any, meta: Any, task_id: str, status: str) -> dict[str, Any]:
    """tasks/get, polled (bounded) until the task has `status`."""
    for _ in range(200):
        got = await client.session.session.request("tasks/get", {"taskId": task_id, "_meta": meta}, timeout=10)
        if got["status"] == status:
            return got
        await anyio.sleep(0.05)
    raise AssertionError(f"task {task_id} never reached {status}")


async def test_2026_07_28_input_rounds_before_the_task() -> None:
    app, events = input_first_app()
    handlers = with_extension(answer)
    with anyio.fail_after(LIMIT):
        async with app.test_client(handlers=handlers) as client:
            # On the wire: round 1 is an input round (no task yet); round 2 answers it with the task.
            meta = client.session.request_meta()
            first = await client.session.session.request("tools/call", {"name": "enrol", "_meta": meta}, timeout=10)
            assert first["resultType"] == "input_required" and "taskId" not in first
            assert list(first["inputRequests"]) == ["who"]
            params = {
                "name": "enrol",
                "_meta": meta,
                "inputResponses": {"who": {"action": "accept", "content": {"name": "grace"}}},
                "requestState": first["requestState"],
            }
            second = await client.session.session.request("tools/call", params, timeout=10)
            assert second["resultType"] == "task" and second["taskId"]
            assert "requestState" not in second and "inputRequests" not in second
            task_id = second["taskId"]
            got = await until(client, meta, task_id, "input_required")  # the task asks once more
            assert len(got["inputRequests"]) == 1
            (key,) = got["inputRequests"]
            responses = {key: {"action": "accept", "content": {"sure": True}}}
            await client.session.session.request(
                "tasks/update", {"taskId": task_id, "inputResponses": responses, "_meta": meta}, timeout=10
            )
            got = await until(client, meta, task_id, "completed")
            assert got["result"]["content"][0]["text"] == "grace enrolled: True, in a task: True"
            # Rounds 1 and 2 run in the call; the task runs the function again, its first ask
            # answered from the record.
            assert events == [
                "run, task=False",
                "run, task=False",
                "run, task=True",
                "after start_task, task=True",
            ]

            # The same through the client's own loop: it answers the round, then the task's ask.
            task = await client.call_tool(name="enrol")
            assert isinstance(task, ToolTask)
            assert text_of(await task.result()) == "ada enrolled: True, in a task: True"


async def test_2026_07_28_input_first_without_the_opt_in() -> None:
    app, events = input_first_app()
    with anyio.fail_after(LIMIT):
        async with app.test_client(elicit=answer) as client:
            with pytest.raises(McpError) as refused:  # refused before asking anything
                await client.call_tool(name="enrol")
            assert refused.value.code == -32021 and events == []
            # An optional one runs at once; its asks are input rounds, `start_task()` passes.
            assert text_of(await client.call_tool(name="maybe")) == "ada, in a task: False"


async def test_2025_11_25_input_first_is_a_task_from_its_start() -> None:
    app = App("input-first-2025", protocol="2025-11-25")

    @app.tool(task=True, input_first=True)
    async def maybe(ctx: Context) -> str:
        name = await ctx.elicit("Your name?", Name, key="who")
        await ctx.start_task()  # nothing to do: the call is a task already (or runs at once)
        return f"{name.data.name if isinstance(name, Accepted) else '?'}, in a task: {current_task_id() is not None}"

    with anyio.fail_after(LIMIT):
        async with app.test_client(elicit=answer) as client:
            handle = await client.call_tool(name="maybe", task={})
            assert isinstance(handle, TaskHandle)
            assert text_of(await handle.result()) == "ada, in a task: True"
            assert text_of(await client.call_tool(name="maybe")) == "ada, in a task: False"


async def test_start_task_needs_input_first() -> None:
    app, _ = input_first_app()
    handlers = with_extension(answer)
    with anyio.fail_after(LIMIT):
        async with app.test_client(handlers=handlers) as client:
            task = await client.call_tool(name="undeclared")
            assert isinstance(task, ToolTask)
            with pytest.raises(McpError, match=r"not declared with @app.tool\(task=..., input_first=True\)"):
                await task.result()
    with pytest.raises(AppDefinitionError, match="input_first=True needs task=True"):

        @app.tool(input_first=True)
        def plain() -> str:
            return "plain"

    with pytest.raises(AppDefinitionError, match="input_first=True needs a Context parameter"):

        @app.tool(task=True, input_first=True)
        def no_context() -> str:
            return "no context"
