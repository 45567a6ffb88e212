"""The generated clients' static types say what a call that may become a task returns (issue #14).

2025-11-25: `Client.call_tool` has two overloads, `task=None` -> `CallToolResult` and
`task=TaskMetadata(...)` -> `TaskHandle[CallToolResult]` (whose `result()` is the `CallToolResult`).
2026-07-28: the core `Client.call_tool` stays `-> CallToolResult` (a client that did not declare the
tasks extension never gets a task) unless it is given `task=` (the 2025-11-25 task-augmented call,
for a 2025-11-25 session: `-> TaskHandle[CallToolResult]`, issue 44 item 7); the extension's
generated `Calls.call_tool` answers `CallToolResult | ToolTask[CallToolResult]`, one typed call per
request of the policy's `task_results` (the extension's "Supported Methods", which must match the
runtime's `tasks_wire.SUPPORTED_METHODS`).

Checked by pyright strict on a snippet (with deliberately wrong `assert_type`s that must fail) and at
run time: the typed calls return what they say, against our own servers, in memory.
"""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_bindgen import pipeline
from mcp_bindgen.errors import BindgenError
from mcp_bindgen.render import extension_modules
from mcp_bindgen.surface import derive_surface
from mcp_bindings.ext.io_modelcontextprotocol_tasks import client as ext_client
from mcp_bindings.runtime.client.task_handle import TaskHandle
from mcp_bindings.runtime.client.tasks_ext import ToolTask
from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.tasks.core import wire as tasks_wire
from mcp_bindings.v2025_11_25 import client as c25
from mcp_bindings.v2025_11_25 import models as m25
from mcp_bindings.v2026_07_28 import client as c26
from mcp_bindings.v2026_07_28 import models as m26
from tests.support.http import load_example
from tests.support.pyright_snippet import strict_errors
from tests.support.tasks import SleepServer

pytestmark = pytest.mark.anyio

TASKS = tasks_wire.EXTENSION
LIMIT = 20  # seconds any one run-time test may take


# -- the policy's task_results: not stale ---------------------------------------------------------


def test_task_results_policy_matches_the_runtime() -> None:
    # The runtime's list and the policy's must agree: a method added to one only fails here.
    assert extension_modules.task_results(TASKS) == sorted(tasks_wire.SUPPORTED_METHODS)


def test_the_extension_client_has_one_typed_call_per_task_result() -> None:
    own = {"get_task", "update_task", "cancel_task"}  # the extension's own client requests
    calls = {name for name, member in vars(ext_client.Calls).items() if inspect.iscoroutinefunction(member)}
    assert calls - own == {"call_tool"}  # tools/call's handler name


def test_a_task_result_the_core_version_lacks_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    core = pipeline.build_ir(pipeline.pinned_source("2026-07-28"))
    monkeypatch.setattr(extension_modules, "task_results", lambda identifier: ["tools/nope"])
    with pytest.raises(BindgenError, match="names tools/nope, which is no request of core version 2026-07-28"):
        extension_modules._task_calls(TASKS, (core, derive_surface(core)))  # pyright: ignore[reportPrivateUsage]


# -- pyright strict knows the types -----------------------------------------------------------------

SNIPPET = """
from typing import assert_type

from mcp_bindings.ext.io_modelcontextprotocol_tasks.client import Calls
from mcp_bindings.runtime.client.tasks_ext import ToolTask
from mcp_bindings.runtime.client.task_handle import TaskHandle
from mcp_bindings.v2025_11_25 import client as c25
from mcp_bindings.v2025_11_25 import models as m25
from mcp_bindings.v2026_07_28 import client as c26
from mcp_bindings.v2026_07_28 import models as m26


async def at_2025(client: c25.Client, maybe: m25.TaskMetadata | None) -> None:
    assert_type(await client.call_tool(name="x"), m25.CallToolResult)
    assert_type(await client.call_tool(name="x", task=None), m25.CallToolResult)
    handle = await client.call_tool(name="x", arguments={{}}, task=m25.TaskMetadata(ttl=1000))
    assert_type(handle, TaskHandle[m25.CallToolResult])
    assert_type(await handle.result(), m25.CallToolResult)
    either = await client.call_tool(name="x", task=maybe)
    assert_type(either, m25.CallToolResult | TaskHandle[m25.CallToolResult])
    {extra_2025}


async def at_2026(client: c26.Client) -> None:
    assert_type(await client.call_tool(name="x"), m26.CallToolResult)
    on_2025 = await client.call_tool(name="x", task={{"ttl": 1000}})  # a 2025-11-25 session's task
    assert_type(on_2025, TaskHandle[m26.CallToolResult])
    assert_type(await on_2025.result(), m26.CallToolResult)
    answer = await Calls(client.session).call_tool(name="x", arguments={{}})
    assert_type(answer, m26.CallToolResult | ToolTask[m26.CallToolResult])
    if isinstance(answer, ToolTask):
        assert_type(await answer.result(), m26.CallToolResult)
    else:
        assert_type(answer, m26.CallToolResult)
    {extra_2026}
"""

WRONG_2025 = "assert_type(await client.call_tool(name='x', task=m25.TaskMetadata()), m25.CallToolResult)"
WRONG_2026 = "assert_type(await Calls(client.session).call_tool(name='x'), m26.CallToolResult)"


def _pyright_errors(tmp_path: Path, extra_2025: str = "", extra_2026: str = "") -> list[str]:
    return strict_errors(tmp_path, textwrap.dedent(SNIPPET.format(extra_2025=extra_2025, extra_2026=extra_2026)))


@pytest.mark.slow
def test_pyright_strict_knows_what_a_task_call_returns(tmp_path: Path) -> None:
    assert _pyright_errors(tmp_path) == []
    # Not vacuous: claiming a task call answers the plain result is an error, at each version.
    wrong = _pyright_errors(tmp_path, WRONG_2025, WRONG_2026)
    assert len(wrong) == 2 and all("assert_type" in error for error in wrong), wrong


# -- at run time the typed calls return what they say ----------------------------------------------


def _text(result: Any) -> str:
    return str(result.content[0].text)


async def test_2025_call_tool_returns_the_result_or_a_typed_task_handle() -> None:
    with anyio.fail_after(LIMIT):
        async with connect_in_memory(SleepServer(), c25.Client, protocol_version="2025-11-25") as client:
            await client.list_tools()
            plain = await client.call_tool(name="sleep", arguments={"seconds": 0})
            assert type(plain) is m25.CallToolResult and _text(plain) == "slept 0"
            handle = await client.call_tool(name="sleep", arguments={"seconds": 0.1}, task=m25.TaskMetadata())
            assert type(handle) is TaskHandle and handle.task_id is not None
            result = await handle.result()
            assert type(result) is m25.CallToolResult and _text(result) == "slept 0.1"


class OptedIn(c26.ClientHandlers):
    def __init__(self, *, opt_in: bool) -> None:
        super().__init__()
        if opt_in:
            self.use_extension(TASKS)


async def test_2026_extension_call_tool_returns_a_tool_task_only_when_opted_in() -> None:
    server = load_example("everything_server").EverythingServer()
    arguments = {"seconds": 0.1, "label": "t"}
    with anyio.fail_after(LIMIT):
        async with connect_in_memory(
            server, c26.Client, handlers=OptedIn(opt_in=True), protocol_version="2026-07-28"
        ) as client:
            answer = await ext_client.Calls(client.session).call_tool(name="slow_compute", arguments=arguments)
            assert type(answer) is ToolTask
            result = await answer.result()
            assert type(result) is m26.CallToolResult and _text(result) == "Computed t after 0.1s"
        async with connect_in_memory(
            server, c26.Client, handlers=OptedIn(opt_in=False), protocol_version="2026-07-28"
        ) as client:
            plain = await client.call_tool(name="slow_compute", arguments=arguments)
            assert type(plain) is m26.CallToolResult and _text(plain) == "Computed t after 0.1s"
            same = await ext_client.Calls(client.session).call_tool(name="slow_compute", arguments=arguments)
            assert type(same) is m26.CallToolResult
