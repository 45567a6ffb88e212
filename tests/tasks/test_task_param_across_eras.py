"""Issue 44, item 7: the 2026-07-28 client stub on a 2025-11-25 session creates the task it can then
poll. `call_tool(..., task=...)` (the 2025-11-25 task-augmented call, a param the 2026-07-28 schema
dropped: policy/era_methods.json `params`) answers a `TaskHandle` whose `get()` / `wait()` /
`result()` / `cancel()` ask the session's `tasks/*` and whose result is the stub's own
`CallToolResult`; on a 2026-07-28 session the same call is `NotExpressible` naming that version,
nothing sent. Against tests/peers/task_app.py, this project's task-supporting app, a real stdio
process."""

from __future__ import annotations

import sys

import anyio
import pytest

from mcp_bindings.runtime.client.task_handle import TaskHandle
from mcp_bindings.runtime.errors import NotExpressible
from mcp_bindings.runtime.stdio.connect import connect_stdio
from mcp_bindings.v2026_07_28 import client as c26
from mcp_bindings.v2026_07_28 import models as m26
from tests.peers.harness import PEERS
from tests.support import REPO_ROOT

pytestmark = pytest.mark.anyio
LIMIT = 30  # seconds


def task_app(protocol: str) -> list[str]:
    return [sys.executable, str(PEERS / "task_app.py"), protocol]


async def test_the_2026_stub_creates_and_polls_a_task_on_a_2025_session() -> None:
    with anyio.fail_after(LIMIT):
        async with connect_stdio(
            task_app("2025-11-25"), c26.Client, protocol_version="2025-11-25", cwd=str(REPO_ROOT)
        ) as client:
            assert client.protocol_version == "2025-11-25"
            handle = await client.call_tool(name="slow", arguments={"seconds": 0.2}, task={"ttl": 60000})
            assert isinstance(handle, TaskHandle) and handle.task_id
            assert (await handle.get()).status == "working"
            assert (await handle.wait(poll_interval=0.05)).status == "completed"
            result = await handle.result()
            assert isinstance(result, m26.CallToolResult)  # the stub's type, crossed from 2025-11-25
            assert result.content[0].text == "slept 0.2 in a task: True"  # pyright: ignore[reportAttributeAccessIssue]
            required = await client.call_tool(name="batch", arguments={"n": 4}, task={})
            assert (await required.result()).structured_content == {"total": 6}
            long = await client.call_tool(name="slow", arguments={"seconds": 60}, task={"ttl": 60000})
            assert (await long.cancel()).status == "cancelled"
            plain = await client.call_tool(name="slow", arguments={"seconds": 0})  # no task=: the result
            assert isinstance(plain, m26.CallToolResult)


async def test_task_param_on_a_2026_session_is_not_expressible() -> None:
    with anyio.fail_after(LIMIT):
        async with connect_stdio(task_app("2026-07-28"), c26.Client, cwd=str(REPO_ROOT)) as client:
            assert client.protocol_version == "2026-07-28"
            with pytest.raises(NotExpressible) as refused:
                await client.call_tool(name="slow", arguments={"seconds": 0}, task={"ttl": 60000})
            plain = await client.call_tool(name="slow", arguments={"seconds": 0})
    assert refused.value.message.startswith(
        "cannot send tools/call with task= in MCP 2026-07-28, which this session speaks: "
        "params.task does not exist there"
    )
    assert plain.content[0].text == "slept 0.0 in a task: False"  # pyright: ignore[reportAttributeAccessIssue]
