"""The output check of large results (`protocol.result_checks`, issue #36): a result of `LARGE` bytes
of JSON and more is checked from its JSON-mode dump (its strings not copied), and JSON that passed
is not validated again. Neither may change what is refused: a hand-written stub's bad result gets
the error the JSON check (`versions.checked_json`) gives, whether it is new, changed in place
after a first answer that passed, built with `model_construct`, or holding NaN."""

from __future__ import annotations

import math
from typing import Any

import orjson
import pytest

from mcp_bindings.runtime.protocol import result_checks, versions
from mcp_bindings.runtime.protocol.result_checks import LARGE, ResultChecks
from mcp_bindings.runtime.rpc import jsonrpc
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, McpError
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.server.runtime import ServerRuntime
from mcp_bindings.v2025_11_25 import models as m
from mcp_bindings.v2025_11_25.server import Server

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")]

INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
WHAT = "the tools/list result"


def many_tools(count: int = 600) -> m.ListToolsResult:
    schema = {"text": {"type": "string", "description": "some text to echo back " * 3}}
    tools = [
        m.Tool(name=f"tool_{i}", input_schema=m.ToolInputSchema(type="object", properties=schema)) for i in range(count)
    ]
    result = m.ListToolsResult(tools=tools)
    assert len(versions.to_json(result)) >= LARGE
    return result


def json_check_error(value: Any) -> str:
    """The error the JSON check gives (what every result got before the large-result path)."""
    with pytest.raises(McpError) as raised:
        versions.checked_json(value, WHAT)
    return raised.value.message


class Lister(Server):
    name = "lister"
    version = "1"

    def __init__(self, result: Any) -> None:
        super().__init__()
        self.result = result

    async def list_tools(self, params: Any, ctx: Any) -> Any:
        return self.result

    async def call_tool(self, params: Any, ctx: Any) -> Any:
        return m.CallToolResult(content=[m.TextContent(text="ok")])


async def listed(runtime: ServerRuntime, session: Session, number: int) -> bytes:
    return await runtime.on_request(jsonrpc.Request(number, "tools/list", None, {}), session)


async def served(result: Any) -> tuple[ServerRuntime, Session]:
    runtime = ServerRuntime(Lister(result))
    session = Session(None, runtime)  # type: ignore[arg-type]  # no transport: nothing is sent
    await runtime.on_request(jsonrpc.Request(0, "initialize", INIT, {}), session)
    return runtime, session


async def test_a_large_result_is_written_as_the_json_check_writes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_BINDINGS_CHECK_RESULTS", raising=False)
    result = many_tools()
    runtime, session = await served(result)
    first, again = await listed(runtime, session, 1), await listed(runtime, session, 2)
    assert first == again == versions.checked_json(result, WHAT)
    assert len(orjson.loads(first)["tools"]) == 600


async def test_a_large_result_changed_in_place_after_it_passed_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first answer passes (and is remembered); the stub then changes a tool in place, which no
    hook sees: its JSON differs, so it is checked again and refused as the JSON check refuses it."""
    monkeypatch.delenv("MCP_BINDINGS_CHECK_RESULTS", raising=False)
    result = many_tools()
    runtime, session = await served(result)
    await listed(runtime, session, 1)
    result.tools[599].name = 5  # pyright: ignore[reportAttributeAccessIssue] - not a string, on purpose
    with pytest.raises(McpError) as raised:
        await listed(runtime, session, 2)
    assert raised.value.code == INTERNAL_ERROR
    assert raised.value.message == json_check_error(result)
    assert "tools.599.name" in raised.value.message


async def test_a_large_model_construct_result_is_refused_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_BINDINGS_CHECK_RESULTS", raising=False)
    good = many_tools()
    broken = m.ListToolsResult.model_construct(tools=[*good.tools, m.Tool.model_construct(name="no_schema")])
    runtime, session = await served(broken)
    with pytest.raises(McpError) as raised:
        await listed(runtime, session, 1)
    assert raised.value.message == json_check_error(broken)
    assert "the tools/list result is invalid" in raised.value.message


@pytest.mark.parametrize("bad", [math.nan, math.inf])
async def test_non_finite_floats_in_a_large_result_are_refused_as_before(bad: float) -> None:
    """The dump keeps NaN and Infinity where the JSON writes null: the large path refuses them too."""
    text = m.TextContent(text="x" * LARGE, annotations=m.Annotations(priority=0.5))
    result = m.CallToolResult(content=[text])
    what = "the tools/call result"
    assert ResultChecks().check(result, what) == versions.checked_json(result, what)
    assert text.annotations is not None
    text.annotations.priority = bad
    with pytest.raises(McpError) as raised:
        ResultChecks().check(result, "the tools/call result")
    with pytest.raises(McpError) as before:
        versions.checked_json(result, "the tools/call result")
    assert raised.value.message == before.value.message


def test_what_passed_is_remembered_by_content_and_bounded() -> None:
    checks = ResultChecks()
    validated: list[Any] = []
    original = result_checks._check_dump  # pyright: ignore[reportPrivateUsage]

    def counting(value: Any, what: str) -> None:
        validated.append(value)
        original(value, what)

    result = many_tools()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(result_checks, "_check_dump", counting)
        checks.check(result, WHAT)
        checks.check(result, WHAT)
        assert len(validated) == 1  # the same JSON: not validated again
        result.tools[0].description = "changed in place"
        checks.check(result, WHAT)
        assert len(validated) == 2  # different JSON: validated
        for i in range(result_checks.KEPT + 1):
            result.tools[1].description = f"version {i}"
            checks.check(result, WHAT)
        result.tools[1].description = "version 0"  # the oldest, forgotten since
        checks.check(result, WHAT)
        assert len(validated) == 2 + result_checks.KEPT + 2


def test_a_large_string_is_not_copied_by_the_check() -> None:
    """The dump shares the result's strings: the check builds no second copy of a large text."""
    big = "y" * (4 * LARGE)
    result = m.ReadResourceResult(contents=[m.TextResourceContents(uri="blob://x", text=big)])
    seen: list[Any] = []
    original = versions.checked

    def spying(target: Any, data: Any, what: str) -> Any:
        seen.append(data["contents"][0]["text"])
        return original(target, data, what)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(versions, "checked", spying)
        ResultChecks().check(result, "the resources/read result")
    assert seen and seen[0] is big


STATELESS_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
}


async def test_a_large_stateless_result_stamped_and_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """At 2026-07-28 the server's identity is written into the result's JSON and the whole checked
    (`ResultWriter.stamped_json`): the same list twice is the same answer, a list changed in place
    after it passed is refused as the JSON check refuses it."""
    monkeypatch.delenv("MCP_BINDINGS_CHECK_RESULTS", raising=False)
    from mcp_bindings.v2026_07_28 import models as m2
    from mcp_bindings.v2026_07_28.server import Server as Server2

    tools = [{"name": f"tool_{i}", "inputSchema": {"type": "object", "description": "d" * 100}} for i in range(600)]
    result = versions.validate(m2.ListToolsResult, {"tools": tools})

    class Lister2(Server2):
        name = "lister"
        version = "1"

        async def list_tools(self, params: Any, ctx: Any) -> Any:
            return result

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            return m2.CallToolResult(content=[m2.TextContent(text="ok")])

    runtime = ServerRuntime(Lister2())
    session = Session(None, runtime)  # type: ignore[arg-type]

    async def list_once(number: int) -> bytes:
        request = jsonrpc.Request(number, "tools/list", {"_meta": STATELESS_META}, {})
        return await runtime.on_request(request, session)

    first, again = await list_once(1), await list_once(2)
    assert first == again and len(first) >= LARGE
    assert len(orjson.loads(first)["tools"]) == 600 and "_meta" in orjson.loads(first)
    result.tools[5].name = 7  # pyright: ignore[reportAttributeAccessIssue] - not a string, on purpose
    with pytest.raises(McpError) as raised:
        await list_once(3)
    assert raised.value.code == INTERNAL_ERROR and "tools.5.name" in raised.value.message
