"""The client as a task receiver at 2025-11-25 (`client_tasks`): a server's task-augmented
`sampling/createMessage` is answered with a `CreateTaskResult` while the client's handler runs on;
`tasks/get`, `tasks/result` (blocking), `tasks/list`, `tasks/cancel` are served from the client's
store, with the specified errors; a client that did not declare it gets no tasks.

The "server" here is our 2025-11-25 stub, whose tool drives the task protocol against the client
over the connection's raw session (our server API sends only plain requests to a client).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, METHOD_NOT_FOUND, McpError
from mcp_bindings.runtime.tasks.server.service import RELATED_TASK
from mcp_bindings.v2025_11_25 import client as client_module
from mcp_bindings.v2025_11_25 import models as m
from mcp_bindings.v2025_11_25.server import Server

pytestmark = pytest.mark.anyio
LIMIT = 20
SAMPLE = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}


class Driver(Server):
    """Tool `drive` runs a script of requests to the client (`arguments.steps`: [method, params]),
    each step's params may name the task of step 0 as "$task"; returns what each step got."""

    async def list_tools(self, params: Any, ctx: Any) -> m.ListToolsResult:
        return m.ListToolsResult(tools=[m.Tool(name="drive", input_schema=m.ToolInputSchema(type="object"))])

    async def call_tool(self, params: m.CallToolRequestParams, ctx: Any) -> m.CallToolResult:
        session = getattr(ctx, "_session")  # the raw session: the task protocol, by hand  # noqa: B009
        outcomes: list[Any] = []
        task_id: str | None = None
        for method, step_params in (params.arguments or {})["steps"]:
            data = json.loads(json.dumps(step_params).replace('"$task"', json.dumps(task_id)))
            try:
                answer = await session.request(method, data, timeout=10, related=ctx.request_id)
            except McpError as exc:
                answer = {"error": exc.code, "message": exc.message}
            if task_id is None and isinstance(answer, dict) and isinstance(answer.get("task"), dict):
                task_id = answer["task"]["taskId"]
            outcomes.append(answer)
        return m.CallToolResult(content=[m.TextContent(type="text", text=json.dumps(outcomes))])


class Sampler(client_module.ClientHandlers):
    declared_capabilities = {
        "tasks": {"list": {}, "cancel": {}, "requests": {"sampling": {"createMessage": {}}}},
    }

    def __init__(self, delay: float = 0.2, fail: bool = False) -> None:
        super().__init__()
        self.delay = delay
        self.fail = fail
        self.cancelled = False

    async def create_message(self, params: m.CreateMessageRequestParams, ctx: Any) -> m.CreateMessageResult:
        try:
            await anyio.sleep(self.delay)
        except anyio.get_cancelled_exc_class():
            self.cancelled = True
            raise
        if self.fail:
            raise McpError(INVALID_PARAMS, "no model for that")
        return m.CreateMessageResult(role="assistant", content=m.TextContent(type="text", text="sampled"), model="t")


async def _drive(handlers: Any, steps: list[Any]) -> list[Any]:
    with anyio.fail_after(LIMIT):
        async with connect_in_memory(Driver(), client_module.Client, handlers=handlers) as client:
            result = await client.call_tool(name="drive", arguments={"steps": steps})
    return json.loads(result.content[0].text)  # type: ignore[union-attr]


async def test_a_task_augmented_sampling_runs_as_a_task() -> None:
    created, got, listed, result, after = await _drive(
        Sampler(),
        [
            ["sampling/createMessage", {**SAMPLE, "task": {"ttl": 60000}}],
            ["tasks/get", {"taskId": "$task"}],
            ["tasks/list", {}],
            ["tasks/result", {"taskId": "$task"}],  # blocks until the handler is done
            ["tasks/get", {"taskId": "$task"}],
        ],
    )
    task = created["task"]
    assert task["status"] == "working" and task["ttl"] == 60000 and len(task["taskId"]) >= 32
    assert got["status"] == "working" and got["taskId"] == task["taskId"]
    assert [t["taskId"] for t in listed["tasks"]] == [task["taskId"]]
    assert result["content"] == {"type": "text", "text": "sampled"}
    assert result["_meta"][RELATED_TASK] == {"taskId": task["taskId"]}
    assert after["status"] == "completed"


async def test_cancel_and_the_specified_errors() -> None:
    handlers = Sampler(delay=30)
    created, cancelled, again, result, unknown = await _drive(
        handlers,
        [
            ["sampling/createMessage", {**SAMPLE, "task": {"ttl": 60000}}],
            ["tasks/cancel", {"taskId": "$task"}],
            ["tasks/cancel", {"taskId": "$task"}],  # a terminal task cannot be cancelled
            ["tasks/result", {"taskId": "$task"}],  # cancelled: no result
            ["tasks/get", {"taskId": "nope"}],
        ],
    )
    assert created["task"]["status"] == "working" and cancelled["status"] == "cancelled"
    assert handlers.cancelled  # the handler's work was stopped
    assert again["error"] == INVALID_PARAMS and "terminal status 'cancelled'" in again["message"]
    assert result["error"] == INVALID_PARAMS and unknown["error"] == INVALID_PARAMS
    assert "Task not found" in unknown["message"]


async def test_a_failed_handler_fails_the_task() -> None:
    _, result, got = await _drive(
        Sampler(fail=True),
        [
            ["sampling/createMessage", {**SAMPLE, "task": {}}],
            ["tasks/result", {"taskId": "$task"}],
            ["tasks/get", {"taskId": "$task"}],
        ],
    )
    assert result == {"error": INVALID_PARAMS, "message": "no model for that"}
    assert got["status"] == "failed"


async def test_a_client_that_did_not_declare_tasks_runs_no_tasks() -> None:
    class Plain(Sampler):
        declared_capabilities = {}

    answer, got = await _drive(
        Plain(delay=0),
        [["sampling/createMessage", {**SAMPLE, "task": {"ttl": 1000}}], ["tasks/get", {"taskId": "x"}]],
    )
    assert answer["content"]["text"] == "sampled" and "task" not in answer  # answered as a plain request
    assert got["error"] == METHOD_NOT_FOUND
