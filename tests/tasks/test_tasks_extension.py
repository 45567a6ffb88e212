"""Tasks at 2026-07-28: the `io.modelcontextprotocol/tasks` extension (runtime/tasks/server/extension.py,
runtime/tasks/core/wire.py), over real stateless HTTP against the conformance everything-server on uvicorn
(127.0.0.1).

What a requestor sees: the extension advertised under `capabilities.extensions` (and not at
2025-11-25, where tasks are core); server-directed creation answering a flat `CreateTaskResult`
(`resultType: "task"`, `ttlMs`) only to a request whose client capabilities declare the extension;
tasks/get inlining the result (a tool error is `completed`, a JSON-RPC error `failed`); tasks/update
answering outstanding `inputRequests` one key at a time; tasks/cancel acknowledged, idempotently;
the TTL honoured, then the task gone. Bad input: -32021 (with `requiredCapabilities`) for a client
without the extension, -32602 for an unknown or expired task id or a malformed param, -32601 for
the removed tasks/result and tasks/list, -32020 (HTTP 400) for an `Mcp-Name` that is not the task id.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcp_bindings.runtime import tasks
from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.protocol.context import RequestContext
from mcp_bindings.runtime.stdio.connect import connect_stdio
from mcp_bindings.v2026_07_28 import client as c
from mcp_bindings.v2026_07_28 import models as m
from mcp_bindings.v2026_07_28.server import Server
from tests.peers.harness import server_env
from tests.support import REPO_ROOT
from tests.support.http import ACCEPT, META, load_example, open_session, rpc, serve_in_thread, sse_messages

pytestmark = pytest.mark.anyio

EXT = "io.modelcontextprotocol/tasks"
VERSION = "2026-07-28"
LIMIT = 20  # seconds any one test may take
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
WITH_EXT = {**META[CAPS_KEY], "extensions": {EXT: {}}}
NAME_METHODS = {"tools/call": "name", "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    module = load_example("everything_server")
    with serve_in_thread(create_app(module.EverythingServer())) as base:
        yield base + "/mcp"


@pytest.fixture(scope="module")
def short_url() -> Iterator[str]:
    """The everything-server with tasks that live 1.5 s."""
    module = load_example("everything_server")
    server = module.EverythingServer()
    tasks.configure(server, default_ttl_ms=1500, poll_interval_ms=100)
    with serve_in_thread(create_app(server)) as base:
        yield base + "/mcp"


class StructuredServer(Server):
    """Tools with an outputSchema whose work runs as a task: one keeps to it, one does not."""

    declared_capabilities = {"tools": {}, "extensions": {EXT: {}}}
    OUTPUT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

    async def list_tools(self, params: m.PaginatedRequestParams, ctx: RequestContext) -> m.ListToolsResult:
        schema = m.ToolInputSchema.model_validate({"type": "object"})
        output = m.ToolOutputSchema.model_validate(self.OUTPUT)
        return m.ListToolsResult(
            tools=[m.Tool(name=name, input_schema=schema, output_schema=output) for name in ("good", "bad")]
        )

    async def call_tool(self, params: m.CallToolRequestParams, ctx: RequestContext) -> Any:
        value: Any = 7 if params.name == "good" else "seven"

        async def work(task_ctx: RequestContext) -> m.CallToolResult:
            content: list[m.ContentBlock] = [m.TextContent(type="text", text=str(value))]
            return m.CallToolResult(content=content, structured_content={"n": value})

        return await tasks.run_as_task(ctx, work)


@pytest.fixture(scope="module")
def structured_url() -> Iterator[str]:
    with serve_in_thread(create_app(StructuredServer())) as base:
        yield base + "/mcp"


class Wire:
    """A stateless-era client as raw HTTP: each request carries the protocol `_meta` and headers."""

    def __init__(self, http: httpx.AsyncClient, url: str, *, declare: bool = True) -> None:
        self.http = http
        self.url = url
        self.capabilities = WITH_EXT if declare else META[CAPS_KEY]
        self.ids = iter(range(1, 10_000))

    async def post(self, method: str, params: dict[str, Any], headers: dict[str, str] | None = None) -> httpx.Response:
        meta = {**META, CAPS_KEY: self.capabilities, **params.pop("_meta", {})}
        sent = {**ACCEPT, "MCP-Protocol-Version": VERSION, "Mcp-Method": method}
        key = NAME_METHODS.get(method)
        if key is not None and isinstance(params.get(key), str):
            sent["Mcp-Name"] = params[key]
        sent.update(headers or {})
        return await self.http.post(self.url, json=rpc(next(self.ids), method, {**params, "_meta": meta}), headers=sent)

    async def call(self, method: str, params: dict[str, Any], headers: dict[str, str] | None = None) -> dict[str, Any]:
        body = (await self.post(method, params, headers)).json()
        assert "result" in body, body
        return body["result"]

    async def error(self, method: str, params: dict[str, Any], headers: dict[str, str] | None = None) -> dict[str, Any]:
        body = (await self.post(method, params, headers)).json()
        assert "error" in body, body
        return body["error"]

    async def tool(self, name: str, **arguments: Any) -> dict[str, Any]:
        return await self.call("tools/call", {"name": name, "arguments": arguments})

    async def until(self, task_id: str, *statuses: str) -> dict[str, Any]:
        """tasks/get until the task's status is one of `statuses` (bounded by the test's limit)."""
        while True:
            got = await self.call("tasks/get", {"taskId": task_id})
            if got["status"] in statuses:
                return got
            await anyio.sleep(0.05)


async def test_advertised_under_extensions_and_only_in_the_stateless_era(url: str) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        caps = (await Wire(http, url).call("server/discover", {}))["capabilities"]
        assert caps["extensions"] == {EXT: {}} and "tasks" not in caps
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
        old = (await http.post(url, json=rpc(1, "initialize", hello), headers=ACCEPT)).json()["result"]
        assert EXT not in old["capabilities"].get("experimental", {}) and "extensions" not in old["capabilities"]


async def test_handshake_era_clients_get_no_extension_tasks(url: str) -> None:
    """At 2025-11-25 the same server runs task-supporting tools at once, refuses one that needs a task
    (-32601, as a tool whose taskSupport is "required") and has no tasks/get (-32601)."""
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(timeout=10) as http:
            session = await open_session(http, url)

            async def post(method: str, params: dict[str, Any]) -> dict[str, Any]:
                return (await http.post(url, json=rpc(2, method, params), headers=session)).json()

            quick = await post("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}})
            assert quick["result"]["content"] and "taskId" not in quick["result"]
            assert (await post("tools/call", {"name": "failing_job", "arguments": {}}))["error"]["code"] == -32601
            assert (await post("tasks/get", {"taskId": "x"}))["error"]["code"] == -32601


async def test_lifecycle_create_poll_complete(url: str) -> None:
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(timeout=10) as http:
            wire = Wire(http, url)
            created = await wire.tool("slow_compute", seconds=0.3, label="x")
            assert created["resultType"] == "task" and "task" not in created and "result" not in created
            assert created["status"] == "working" and isinstance(created["ttlMs"], int)
            assert "ttl" not in created and "pollInterval" not in created and "requestState" not in created
            assert created["createdAt"].endswith("Z")
            now = await wire.call("tasks/get", {"taskId": created["taskId"]})  # durable at once
            assert now["taskId"] == created["taskId"] and now["resultType"] == "complete"
            assert "result" not in now
            done = await wire.until(created["taskId"], "completed", "failed", "cancelled")
            assert done["status"] == "completed" and done["resultType"] == "complete"
            assert done["result"]["content"][0]["text"] == "Computed x after 0.3s"
            assert "io.modelcontextprotocol/related-task" not in done["result"].get("_meta", {})


async def test_tool_error_completes_and_protocol_error_fails(url: str) -> None:
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(timeout=10) as http:
            wire = Wire(http, url)
            tool_error = await wire.until((await wire.tool("failing_job"))["taskId"], "completed", "failed")
            assert tool_error["status"] == "completed" and tool_error["result"]["isError"] is True
            crashed = await wire.until((await wire.tool("protocol_error_job"))["taskId"], "completed", "failed")
            assert crashed["status"] == "failed" and "result" not in crashed
            assert crashed["error"]["code"] == -32603 and isinstance(crashed["error"]["message"], str)


async def test_cancel_is_acknowledged_and_idempotent(url: str) -> None:
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(timeout=10) as http:
            wire = Wire(http, url)
            task_id = (await wire.tool("slow_compute", seconds=60))["taskId"]
            for _ in range(2):  # live, then already cancelled: the same empty acknowledgement
                ack = await wire.call("tasks/cancel", {"taskId": task_id})
                assert set(ack) <= {"resultType", "_meta"} and ack["resultType"] == "complete"
                assert (await wire.call("tasks/get", {"taskId": task_id}))["status"] == "cancelled"


async def test_input_requests_answered_one_key_at_a_time(url: str) -> None:
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(timeout=10) as http:
            wire = Wire(http, url)
            task_id = (await wire.tool("multi_input"))["taskId"]
            while True:
                asked = await wire.until(task_id, "input_required")
                if len(asked["inputRequests"]) == 2:
                    break
                await anyio.sleep(0.05)
            first, second = sorted(asked["inputRequests"])
            assert asked["inputRequests"][first]["method"] == "elicitation/create"
            answer = {"action": "accept", "content": {"name": "Ada"}}
            ack = await wire.call("tasks/update", {"taskId": task_id, "inputResponses": {first: answer, "bogus": {}}})
            assert ack["resultType"] == "complete" and "status" not in ack
            still = await wire.call("tasks/get", {"taskId": task_id})
            assert still["status"] == "input_required" and list(still["inputRequests"]) == [second]
            # an answered key is not outstanding any more: answering it again changes nothing
            await wire.call("tasks/update", {"taskId": task_id, "inputResponses": {first: answer}})
            assert (await wire.call("tasks/get", {"taskId": task_id}))["status"] == "input_required"
            await wire.call("tasks/update", {"taskId": task_id, "inputResponses": {second: answer}})
            done = await wire.until(task_id, "completed", "failed")
            assert done["result"]["content"][0]["text"] == "Got Ada, Ada"


async def test_input_round_then_task(url: str) -> None:
    """An input round (InputRequiredResult) first, then the task: no taskId before, no requestState after."""
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(timeout=10) as http:
            wire = Wire(http, url)
            first = await wire.tool("test_tool_with_task")
            assert first["resultType"] == "input_required" and "taskId" not in first
            answers = {"user_name": {"action": "accept", "content": {"name": "Alice"}}}
            second = await wire.call(
                "tools/call", {"name": "test_tool_with_task", "arguments": {}, "inputResponses": answers}
            )
            assert second["resultType"] == "task" and "requestState" not in second and "inputRequests" not in second
            done = await wire.until(second["taskId"], "completed", "failed")
            assert "Alice" in done["result"]["content"][0]["text"]


async def test_a_client_without_the_extension(url: str) -> None:
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(timeout=10) as http:
            plain = Wire(http, url, declare=False)
            for method, params in (
                ("tasks/get", {"taskId": "x"}),
                ("tasks/update", {"taskId": "x", "inputResponses": {}}),
                ("tasks/cancel", {"taskId": "x"}),
            ):
                error = await plain.error(method, params)
                assert error["code"] == -32021, (method, error)
                assert error["data"]["requiredCapabilities"] == {"extensions": {EXT: {}}}
            sync = await plain.tool("slow_compute", seconds=0)  # task-supporting: runs at once
            assert sync["resultType"] == "complete" and "taskId" not in sync and sync["content"]
            asked = await plain.tool("confirm_delete", filename="a.txt")  # not a task: an input round instead
            assert asked["resultType"] == "input_required" and list(asked["inputRequests"]) == ["confirm"]
            answers = {"confirm": {"action": "accept", "content": {"confirm": True}}}
            deleted = await plain.call(
                "tools/call", {"name": "confirm_delete", "arguments": {"filename": "a.txt"}, "inputResponses": answers}
            )
            assert deleted["content"][0]["text"] == "Deleted a.txt"
            required = await plain.error("tools/call", {"name": "failing_job", "arguments": {}})
            assert required["code"] == -32021 and EXT in required["data"]["requiredCapabilities"]["extensions"]
            # ... and opting in on one request is enough (per-request capabilities)
            opted = await plain.call(
                "tools/call",
                {"name": "slow_compute", "arguments": {"seconds": 0}, "_meta": {CAPS_KEY: {"extensions": {EXT: {}}}}},
            )
            assert opted["resultType"] == "task"


async def test_bad_input(url: str) -> None:
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(timeout=10) as http:
            wire = Wire(http, url)
            assert (await wire.error("tasks/get", {"taskId": "no-such-task"}))["code"] == -32602
            assert (await wire.error("tasks/cancel", {"taskId": "no-such-task"}))["code"] == -32602
            missing = await wire.error("tasks/update", {"taskId": "no-such-task"})
            assert missing["code"] == -32602 and "inputResponses" in missing["message"]
            for removed in ("tasks/result", "tasks/list"):
                assert (await wire.error(removed, {"taskId": "x"}))["code"] == -32601
            task_id = (await wire.tool("slow_compute", seconds=60))["taskId"]
            reply = await wire.post("tasks/get", {"taskId": task_id}, {"Mcp-Name": "another-task"})
            assert reply.status_code == 400 and reply.json()["error"]["code"] == -32020
            # nothing changed: the task is still there, still working
            assert (await wire.call("tasks/get", {"taskId": task_id}))["status"] == "working"
            await wire.call("tasks/cancel", {"taskId": task_id})


async def test_ttl_is_honoured_then_the_task_is_gone(short_url: str) -> None:
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(timeout=10) as http:
            wire = Wire(http, short_url)
            created = await wire.tool("slow_compute", seconds=0.1)
            assert created["ttlMs"] == 1500 and created["pollIntervalMs"] == 100
            started = time.monotonic()
            done = await wire.until(created["taskId"], "completed")
            assert done["result"]["content"]
            await anyio.sleep(max(0.0, 1.7 - (time.monotonic() - started)))
            assert (await wire.error("tasks/get", {"taskId": created["taskId"]}))["code"] == -32602


async def test_a_tasks_result_is_checked_against_the_output_schema(structured_url: str) -> None:
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(timeout=10) as http:
            wire = Wire(http, structured_url)
            await wire.call("tools/list", {})  # the server's outputSchemas, as listed
            good = await wire.until((await wire.tool("good"))["taskId"], "completed", "failed")
            assert good["status"] == "completed" and good["result"]["structuredContent"] == {"n": 7}
            bad = await wire.until((await wire.tool("bad"))["taskId"], "completed", "failed")
            assert bad["status"] == "failed" and "result" not in bad
            assert bad["error"]["code"] == -32603 and "outputSchema" in bad["error"]["message"]


async def test_status_notifications_over_listen(url: str) -> None:
    """`subscriptions/listen` with `taskIds`: agreed for the requester's existing tasks only, then a
    `notifications/tasks` (the task as tasks/get shows it) on each status change; -32021 without the
    extension."""
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as http:
            wire = Wire(http, url)
            task_id = (await wire.tool("slow_compute", seconds=60))["taskId"]
            headers = {**ACCEPT, "MCP-Protocol-Version": VERSION, "Mcp-Method": "subscriptions/listen"}
            plain = {"notifications": {"taskIds": [task_id]}, "_meta": META}
            refused = await http.post(url, json=rpc("l0", "subscriptions/listen", plain), headers=headers)
            body = refused.json() if refused.headers["content-type"].startswith("application/json") else None
            if body is None:
                body = [message async for message in sse_messages(refused)][-1]
            assert body["error"]["code"] == -32021
            params = {"notifications": {"taskIds": [task_id, "not-a-task"]}, "_meta": {**META, CAPS_KEY: WITH_EXT}}
            listen = rpc("l1", "subscriptions/listen", params)
            async with http.stream("POST", url, json=listen, headers=headers) as stream:
                messages = sse_messages(stream)
                ack = await anext(messages)
                assert ack["method"] == "notifications/subscriptions/acknowledged"
                assert ack["params"]["notifications"] == {"taskIds": [task_id]}
                await wire.call("tasks/cancel", {"taskId": task_id})
                note = await anext(messages)
                assert note["method"] == "notifications/tasks" and "id" not in note
                assert note["params"]["taskId"] == task_id and note["params"]["status"] == "cancelled"


async def test_over_stdio(tmp_path: Path) -> None:
    """The same extension over stdio (a real process): created, polled to its result, another cancelled."""
    handlers = c.ClientHandlers()
    handlers.use_extension(EXT)  # declared in every request's client capabilities
    command = [sys.executable, str(REPO_ROOT / "examples" / "everything_server.py"), "--transport", "stdio"]
    with anyio.fail_after(LIMIT), open(tmp_path / "server.stderr", "wb") as stderr:
        async with connect_stdio(
            command, c.Client, handlers=handlers, protocol_version=VERSION, env=server_env(), stderr=stderr
        ) as client:
            assert client.server_capabilities["extensions"] == {EXT: {}}
            runtime = client.session

            async def raw(method: str, params: dict[str, Any]) -> Any:
                return await runtime.session.request(method, {**params, "_meta": runtime.request_meta()}, timeout=10)

            created = await raw("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0.2, "label": "io"}})
            assert created["resultType"] == "task"
            while (got := await raw("tasks/get", {"taskId": created["taskId"]}))["status"] == "working":
                await anyio.sleep(0.05)
            assert got["status"] == "completed" and got["result"]["content"][0]["text"] == "Computed io after 0.2s"
            long = await raw("tools/call", {"name": "slow_compute", "arguments": {"seconds": 60}})
            assert (await raw("tasks/cancel", {"taskId": long["taskId"]}))["resultType"] == "complete"
            assert (await raw("tasks/get", {"taskId": long["taskId"]}))["status"] == "cancelled"
