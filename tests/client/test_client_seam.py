"""The client's call seam (`mcp_bindings.runtime.client.seam`): hooks registered from outside the
runtime wrap real calls (before the send, instead of it, after it), each method's chain is built
once, and a stateless request's `_meta` is built once per call."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Annotated, Any

import pytest
from pydantic import Field

from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.client import CallHook, ClientOptions, OutgoingCall, Send
from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.protocol.spec import MethodSpec
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError
from mcp_bindings.runtime.rpc.jsonrpc import Notification
from tests.support import REPO_ROOT

pytestmark = pytest.mark.anyio

app = App("seam-app", version="1.0")
calls: list[int] = []


@app.tool
def add(a: int, b: int = 2) -> int:
    """Add two numbers."""
    calls.append(a)
    return a + b


class Timing:
    """The docs' example (docs/architecture.md, "The client's call seam"): how long each method took."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.results: list[Any] = []
        self.wrapped: list[str] = []

    def wrap(self, spec: MethodSpec, send: Send) -> Send:
        self.wrapped.append(spec.method)

        async def timed(call: OutgoingCall) -> Any:
            started = time.perf_counter()
            try:
                result = await send(call)
                self.results.append(result)
                return result
            finally:
                self.seconds[call.method] = time.perf_counter() - started

        return timed


class OnlyTools:
    """Refuses some calls before they are sent, and changes the arguments of others."""

    def wrap(self, spec: MethodSpec, send: Send) -> Send:
        if spec.method != "tools/call":
            return send  # nothing to do for the other methods: no extra frame on their calls

        async def checked(call: OutgoingCall) -> Any:
            arguments = call.params.get("arguments") or {}
            if arguments.get("a") == 13:
                raise McpError(INVALID_PARAMS, "13 is refused by the hook")
            if arguments.get("a") == 7:
                call = replace(call, params={**call.params, "arguments": {**arguments, "b": 100}})
            return await send(call)

        return checked


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_a_users_hook_wraps_real_calls_and_sees_typed_results(version: str) -> None:
    timing = Timing()
    hook: CallHook = timing  # the protocol is structural: any object with `wrap`
    async with app.test_client(version) as client:
        client.session.add_hook(hook)
        listed = await client.list_tools()
        assert "add" in [tool.name for tool in listed.tools]
        for a in (1, 2):
            result = await client.call_tool(name="add", arguments={"a": a})
            assert result.structured_content == {"result": a + 2}
    assert set(timing.seconds) == {"tools/list", "tools/call"}
    assert all(seconds >= 0 for seconds in timing.seconds.values())
    assert type(timing.results[0]).__name__ == "ListToolsResult"  # outside the runtime's hooks: typed
    assert timing.wrapped == ["tools/list", "tools/call"]  # each method's chain is built once


async def test_a_hook_may_refuse_a_call_before_it_is_sent_or_change_it() -> None:
    calls.clear()
    async with app.test_client() as client:
        client.session.add_hook(OnlyTools())
        with pytest.raises(McpError, match="13 is refused by the hook") as caught:
            await client.call_tool(name="add", arguments={"a": 13})
        assert caught.value.code == INVALID_PARAMS
        assert (await client.call_tool(name="add", arguments={"a": 7})).structured_content == {"result": 107}
        await client.list_tools()
    assert calls == [7]  # the refused call never reached the server


async def test_hooks_given_to_connect_are_outermost_in_their_order() -> None:
    order: list[str] = []

    class Named:
        def __init__(self, name: str) -> None:
            self.name = name

        def wrap(self, spec: MethodSpec, send: Send) -> Send:
            async def named(call: OutgoingCall) -> Any:
                order.append(self.name)
                return await send(call)

            return named

    async with app.test_client(hooks=[Named("first"), Named("second")]) as client:
        client.session.add_hook(Named("added"))
        await client.list_tools()
    assert order == ["first", "second", "added"]


async def test_every_connect_takes_the_same_client_options() -> None:
    import inspect

    from mcp_bindings.runtime.client.http import connect_http, connect_sse
    from mcp_bindings.runtime.client.runtime import connect
    from mcp_bindings.runtime.stdio.connect import connect_stdio

    for function in (connect, connect_http, connect_sse, connect_stdio, connect_in_memory):
        parameters = inspect.signature(function).parameters
        assert parameters["options"].annotation == "ClientOptions | None", function.__name__
        assert parameters["args"].annotation == "Unpack[ClientArgs]", function.__name__
    from mcp_bindings.v2025_11_25.client import Client

    options = ClientOptions(protocol_version="2026-07-28", retry="never", probe_timeout=1.0)
    async with connect_in_memory(app.server, Client, options=options, request_timeout=5.0) as client:
        runtime = client.session
        assert (runtime.version, runtime.retry.mode, runtime.probe_timeout) == ("2026-07-28", "never", 1.0)
        assert runtime.request_timeout == 5.0  # a keyword argument on top of the options
    with pytest.raises(ValueError, match="retry must be one of"):
        ClientOptions(retry="sometimes")  # pyright: ignore[reportArgumentType]


async def test_a_stateless_requests_meta_is_built_once_per_call() -> None:
    async with app.test_client("2026-07-28") as client:
        runtime = client.session
        built: list[int] = []
        request_meta = runtime.request_meta

        def counted() -> dict[str, Any]:
            built.append(1)
            return request_meta()

        runtime.request_meta = counted
        seen: list[Any] = []

        class Meta:
            def wrap(self, spec: MethodSpec, send: Send) -> Send:
                async def meta(call: OutgoingCall) -> Any:
                    seen.append(call.params["_meta"])
                    return await send(call)

                return meta

        runtime.add_hook(Meta())
        await client.call_tool(name="add", arguments={"a": 1})
    assert len(built) == 1
    assert runtime.protocol is not None and runtime.protocol.meta.protocol_version in seen[0]


@app.tool
def tag(
    label: Annotated[dict[str, str], Field(json_schema_extra={"x-mcp-header": "Label"})],
) -> str:
    """A tool whose x-mcp-header annotation is invalid (on an object): a client must not call it."""
    return "tagged"


@app.tool
def region(name: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    """A tool whose x-mcp-header annotation is valid."""
    return name


async def test_header_mirroring_drops_and_refuses_tools_with_invalid_annotations() -> None:
    async with app.test_client("2026-07-28") as client:
        runtime = client.session
        runtime._header_wire = True  # as an HTTP transport sets it: the wire mirrors arguments into headers
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert "tag" not in names and "region" in names and "add" in names
        assert runtime.tools.last_listed["tag"].headers is None
        assert runtime.tools.last_listed["region"].headers == {"name": "Region"}
        with pytest.raises(McpError, match="tool 'tag' has invalid x-mcp-header annotations"):
            await client.call_tool(name="tag", arguments={"label": {}})
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "region", "arguments": {"name": "eu"}},
        }
        assert runtime.http_headers(message)["Mcp-Param-Region"] == "eu"
        changed = "notifications/tools/list_changed"
        await runtime.on_notification(Notification(changed, None, {"method": changed}), runtime.session)  # pyright: ignore[reportArgumentType]
        assert runtime.tools.tools == {}  # the one invalidation: checks and retry safety forget
        assert runtime.http_headers(message)["Mcp-Param-Region"] == "eu"  # the last listing still mirrors


def test_the_docs_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    text = (REPO_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text[text.index("## The client's call seam") :]
    block = section[section.index("```python\n") + len("```python\n") : section.index("\n```\n")]
    exec(compile(block, "docs/architecture.md", "exec"), {"__name__": "docs_example"})  # noqa: S102 - our own docs
    assert capsys.readouterr().out.strip() == "['tools/call', 'tools/list']"


async def test_a_task_to_a_version_without_tasks_is_refused_before_it_is_sent() -> None:
    from mcp_bindings.runtime.rpc.errors import CapabilityError
    from mcp_bindings.v2025_11_25 import models as m25
    from mcp_bindings.v2025_11_25.client import Client

    calls.clear()
    async with connect_in_memory(app.server, Client, protocol_version="2025-06-18") as client:
        assert client.session.version == "2025-06-18"  # the stub's tools/call has `task`, this version's not
        with pytest.raises(CapabilityError, match=r"tasks\.requests\.tools\.call"):
            await client.call_tool(name="add", arguments={"a": 1}, task=m25.TaskMetadata(ttl=1000))
    assert calls == []
