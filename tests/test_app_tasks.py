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
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.app import App, AppDefinitionError
from mcp_bindings.runtime.app.testing import client_handlers
from mcp_bindings.runtime.client_tasks_ext import ToolTask
from mcp_bindings.runtime.errors import McpError
from mcp_bindings.runtime.tasks import TaskHandle
from mcp_bindings.runtime.tasks_wire import EXTENSION
from tests.peers.task_app import build

pytestmark = pytest.mark.anyio

LIMIT = 20  # seconds any one test may take


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


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
    handlers = client_handlers("2026-07-28", elicit=lambda message, schema: {"name": "grace"})
    handlers.use_extension(EXTENSION)
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
