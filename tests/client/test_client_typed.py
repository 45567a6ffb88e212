"""The typed clients' conveniences (#16 item 4): MRTR hidden behind the handlers, `ping()`,
`set_logging_level()`, `listen()` (2026-07-28 `subscriptions/listen`), a per-call `timeout=`, and
one shared `Meta` type for every `meta=`.

Against our own server in memory and over HTTP (127.0.0.1) at 2026-07-28 and 2025-11-25, and
against the official SDK's server (PyPI `mcp`, its own venv) over stdio at a handshake version.
"""

from __future__ import annotations

import importlib
import inspect
import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.client.handling import answer_input_requests
from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.runtime.client.runtime import ClientRuntime
from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.protocol.request_state import MAX_INPUT_ROUNDS
from mcp_bindings.runtime.rpc.calls import REQUEST_TIMEOUT
from mcp_bindings.runtime.rpc.errors import METHOD_NOT_FOUND, CapabilityError, McpError
from mcp_bindings.v2025_11_25 import client as client_25
from mcp_bindings.v2025_11_25 import models as m25
from mcp_bindings.v2025_11_25.server import Server as Server25
from mcp_bindings.v2026_07_28 import client as client_26
from mcp_bindings.v2026_07_28 import models as m26
from mcp_bindings.v2026_07_28.server import Server as Server26
from tests.support.http import serve_in_thread
from tests.support.sdk import sdk_server

pytestmark = pytest.mark.anyio
LIMIT = 20


def _ask_name() -> m26.ElicitRequest:
    schema = m26.ElicitRequestFormParamsRequestedSchema.model_validate(
        {"type": "object", "properties": {"name": {"type": "string"}}}
    )
    return m26.ElicitRequest(
        method="elicitation/create", params=m26.ElicitRequestFormParams(message="name?", requested_schema=schema)
    )


def _text(result: Any) -> str:
    return result.content[0].text


class Server2026(Server26):
    """`greet` asks for a name (MRTR) then greets; `forever` asks again every round; `slow` sleeps;
    `change` announces a changed tool list (to `subscriptions/listen` streams); logging declared."""

    name = "typed-2026"
    declared_capabilities = {"tools": {"listChanged": True}, "logging": {}}

    async def list_tools(self, params: Any, ctx: Any) -> m26.ListToolsResult:
        schema = m26.ToolInputSchema(type="object")
        return m26.ListToolsResult(
            tools=[m26.Tool(name=n, input_schema=schema) for n in ("greet", "forever", "slow", "change")]
        )

    async def call_tool(
        self, params: m26.CallToolRequestParams, ctx: Any
    ) -> m26.CallToolResult | m26.InputRequiredResult:
        if params.name == "slow":
            await anyio.sleep(5)
        if params.name == "change":  # the tool list changed: tell the listen streams that asked
            sent = await self.broadcast("notifications/tools/list_changed")
            return m26.CallToolResult(content=[m26.TextContent(type="text", text=str(sent))])
        answers = params.input_responses or {}
        if params.name == "forever" or "name" not in answers:
            return m26.InputRequiredResult(input_requests={"name": _ask_name()}, request_state=params.request_state)
        answer = answers["name"]
        content = answer.get("content") if isinstance(answer, dict) else getattr(answer, "content", None)
        name = content["name"] if isinstance(content, dict) else "?"
        return m26.CallToolResult(content=[m26.TextContent(type="text", text=f"hello {name}")])


class Naming(client_26.ClientHandlers):
    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    async def elicit(self, params: m26.ElicitRequestParams, ctx: Any) -> m26.ElicitResult:
        self.asked += 1
        return m26.ElicitResult(action="accept", content={"name": "Ada"})


# -- the generated signatures ----------------------------------------------------------------------


def test_no_mrtr_plumbing_and_one_meta_type_in_every_typed_client() -> None:
    for version in registry.names():
        client = importlib.import_module(f"{registry.load_version(version).__name__}.client").Client
        calls = [
            (name, inspect.signature(fn))
            for name, fn in vars(client).items()
            if inspect.iscoroutinefunction(fn) and name not in ("ping", "set_logging_level")
        ]
        assert calls, version
        for name, signature in calls:
            assert "input_responses" not in signature.parameters, (version, name)
            assert "request_state" not in signature.parameters, (version, name)
            if "meta" in signature.parameters:
                assert signature.parameters["meta"].annotation == "Meta | None", (version, name)
            if not name.startswith("notify_"):
                assert signature.parameters["timeout"].annotation == "float | None", (version, name)
        assert hasattr(client, "set_logging_level"), version


def test_ping_and_listen_exist_in_both_eras_stubs() -> None:
    # Either era's calls on either stub: the negotiated version decides (tests/client/test_client_eras.py).
    for stub in (client_25.Client, client_26.Client):
        assert all(hasattr(stub, name) for name in ("ping", "listen", "subscribe_resource", "get_task")), stub


# -- MRTR answered by the handlers (2026-07-28) ------------------------------------------------------


async def test_input_required_is_answered_by_the_handlers_and_resent() -> None:
    handlers = Naming()
    with anyio.fail_after(LIMIT):
        async with connect_in_memory(Server2026(), client_26.Client, handlers=handlers) as client:
            result = await client.call_tool(name="greet", meta={"progressToken": "p1", "example.com/k": 1})
    assert _text(result) == "hello Ada" and handlers.asked == 1


async def test_input_required_without_a_handler_is_a_clear_error() -> None:
    # Our server does not ask a client for what it did not declare (a clear -32021)...
    with anyio.fail_after(LIMIT):
        async with connect_in_memory(Server2026(), client_26.Client) as client:
            with pytest.raises(McpError, match="did not declare: elicitation"):
                await client.call_tool(name="greet")
    # ...and a server that does anyway gets no answer from the client, which says what is missing.
    runtime = ClientRuntime(client_26.Client, None)
    runtime.protocol = registry.protocol("2026-07-28")
    with pytest.raises(McpError) as caught:
        await answer_input_requests(runtime, {"name": _ask_name().model_dump(by_alias=True, exclude_none=True)})
    assert caught.value.code == METHOD_NOT_FOUND
    assert "'elicitation/create'" in caught.value.message and "ClientHandlers.elicit" in caught.value.message


async def test_input_rounds_are_bounded() -> None:
    handlers = Naming()
    with anyio.fail_after(LIMIT):
        async with connect_in_memory(Server2026(), client_26.Client, handlers=handlers) as client:
            with pytest.raises(McpError) as caught:
                await client.call_tool(name="forever")
    assert f"after {MAX_INPUT_ROUNDS} rounds" in caught.value.message
    assert handlers.asked == MAX_INPUT_ROUNDS + 1


# -- per-call timeout, ping, logging level ------------------------------------------------------------


async def test_a_per_call_timeout_overrides_the_clients() -> None:
    with anyio.fail_after(LIMIT):
        async with connect_in_memory(Server2026(), client_26.Client, request_timeout=30) as client:
            started = time.monotonic()
            with pytest.raises(McpError) as caught:
                await client.call_tool(name="slow", timeout=0.3)
            assert caught.value.code == REQUEST_TIMEOUT and time.monotonic() - started < 3
            assert len((await client.list_tools(timeout=5)).tools) == 4  # the session still works


class Logging25(Server25):
    declared_capabilities = {"logging": {}}

    async def list_tools(self, params: Any, ctx: Any) -> m25.ListToolsResult:
        return m25.ListToolsResult(tools=[m25.Tool(name="log", input_schema=m25.ToolInputSchema(type="object"))])

    async def call_tool(self, params: m25.CallToolRequestParams, ctx: Any) -> m25.CallToolResult:
        for level in ("debug", "warning", "error"):
            await ctx.log(level, {"level": level})
        return m25.CallToolResult(content=[])


class Heard25(client_25.ClientHandlers):
    def __init__(self) -> None:
        super().__init__()
        self.levels: list[str] = []

    async def on_logging_message(self, params: m25.LoggingMessageNotificationParams, ctx: Any) -> None:
        self.levels.append(params.level)


async def test_ping_and_set_logging_level_at_2025_11_25() -> None:
    handlers = Heard25()
    with anyio.fail_after(LIMIT):
        async with connect_in_memory(Logging25(), client_25.Client, handlers=handlers) as client:
            await client.ping(timeout=5)
            await client.set_logging_level("warning")
            await client.call_tool(name="log")
            await client.ping()  # the notifications were sent before the result; let them land
    assert handlers.levels == ["warning", "error"]


async def test_set_logging_level_needs_the_logging_capability() -> None:
    class Bare(Server25):
        async def list_prompts(self, params: Any, ctx: Any) -> m25.ListPromptsResult:
            return m25.ListPromptsResult(prompts=[])

        async def get_prompt(self, params: Any, ctx: Any) -> m25.GetPromptResult:
            raise NotImplementedError

    with anyio.fail_after(LIMIT):
        async with connect_in_memory(Bare(), client_25.Client) as client:
            with pytest.raises(CapabilityError, match="logging"):
                await client.set_logging_level("error")


async def test_set_logging_level_at_2026_rides_in_meta() -> None:
    seen: list[Any] = []

    class Recording(Server2026):
        async def list_tools(self, params: Any, ctx: Any) -> m26.ListToolsResult:
            seen.append(params.meta.model_dump(by_alias=True) if params and params.meta else {})
            return await super().list_tools(params, ctx)

    with anyio.fail_after(LIMIT):
        async with connect_in_memory(Recording(), client_26.Client, protocol_version="2026-07-28") as client:
            await client.set_logging_level("error")
            await client.list_tools()
    assert seen and seen[-1].get("io.modelcontextprotocol/logLevel") == "error"


# -- subscriptions/listen (2026-07-28) -----------------------------------------------------------------


async def _listen_round_trip(client: client_26.Client) -> None:
    async with client.listen({"toolsListChanged": True, "promptsListChanged": True}) as stream:
        assert getattr(stream, "agreed", None) == {"toolsListChanged": True}  # prompts: not advertised
        assert _text(await client.call_tool(name="change")) == "1"
        with anyio.fail_after(5):
            notification = await anext(aiter(stream))
        assert isinstance(notification, m26.ToolListChangedNotification)
    # The stream closed: the server drops the subscription as soon as it sees the request end.
    with anyio.fail_after(5):
        while _text(await client.call_tool(name="change")) != "0":
            await anyio.sleep(0.05)
    assert len((await client.list_tools()).tools) == 4  # the session goes on


async def test_listen_in_memory() -> None:
    with anyio.fail_after(LIMIT):
        async with connect_in_memory(Server2026(), client_26.Client, protocol_version="2026-07-28") as client:
            await _listen_round_trip(client)


async def test_listen_over_http() -> None:
    with serve_in_thread(create_app(Server2026())) as url:
        with anyio.fail_after(LIMIT):
            async with connect_http(f"{url}/mcp", client_26.Client, protocol_version="2026-07-28") as client:
                await _listen_round_trip(client)


async def test_listen_with_a_bad_filter_is_refused_before_sending() -> None:
    with anyio.fail_after(LIMIT):
        async with connect_in_memory(Server2026(), client_26.Client, protocol_version="2026-07-28") as client:
            with pytest.raises(McpError, match="toolsListChanged") as caught:
                async with client.listen({"toolsListChanged": "yes"}) as stream:  # the schema wants a boolean
                    del stream
            assert caught.value.code == -32602
            assert len((await client.list_tools()).tools) == 4


# -- a real peer: the official SDK's server over stdio -------------------------------------------------


@pytest.mark.slow
async def test_against_the_official_sdk_server(sdk_python: str, tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with sdk_server(sdk_python, "2025-11-25", tmp_path) as (client, _recorder):
            await client.ping(timeout=10)
            await client.set_logging_level("critical")
            await client.call_tool(name="log_all")
            state = json.loads(_text(await client.call_tool(name="state")))
            assert state["level"] == "critical"
            with pytest.raises(McpError) as caught:
                await client.call_tool(name="sleep", arguments={"seconds": 5}, timeout=0.5)
            assert caught.value.code == REQUEST_TIMEOUT
            await client.ping()
