"""Re-validating every outgoing result is a choice (architecture issue #29, item 6): on by default
(`ServerStub.check_results`), off on the classes the authoring layer builds, whose results are
validated as they are built, and on everywhere with MCP_BINDINGS_CHECK_RESULTS=1 (the tests set it).
These tests prove the authoring layer's unchecked results are the bytes the checked path writes,
for every kind of value a tool returns, at both eras, and show why a hand-written stub keeps the
check: a result it builds with `model_construct` is refused, not sent."""

from __future__ import annotations

import importlib
import math
from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.rpc import jsonrpc
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, McpError
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.server.runtime import ServerRuntime

pytestmark = pytest.mark.anyio

VERSIONS = ("2025-11-25", "2026-07-28")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
}


class Point(BaseModel):
    x: float
    y: float
    label: str | None = None


def make_app(version: str) -> App:
    app = App("results", protocol=version)

    @app.tool()
    def text() -> str:
        return "hello"

    @app.tool()
    def number() -> int:
        return 42

    @app.tool()
    def not_a_number() -> float:
        return math.nan

    @app.tool()
    def point() -> Point:
        return Point(x=1.5, y=-2)

    @app.tool()
    def listing() -> list[dict[str, Any]]:
        return [{"a": 1}, {"b": [True, None]}]

    @app.tool()
    def nothing() -> None:
        return None

    @app.tool()
    def failing() -> str:
        raise RuntimeError("boom")

    return app


TOOLS = ("text", "number", "not_a_number", "point", "listing", "nothing", "failing")


async def answers(server: Any, version: str) -> list[bytes]:
    runtime = ServerRuntime(server)
    session = Session(None, runtime)  # type: ignore[arg-type]  # no transport: nothing is sent
    stateless = version == "2026-07-28"
    if not stateless:
        init = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
        await runtime.on_request(jsonrpc.Request(0, "initialize", init, {}), session)
    out: list[bytes] = []
    for number, name in enumerate(TOOLS, 1):
        params: dict[str, Any] = {"name": name, "arguments": {}}
        if stateless:
            params["_meta"] = META
        out.append(await runtime.on_request(jsonrpc.Request(number, "tools/call", params, {}), session))
    return out


@pytest.mark.parametrize("version", VERSIONS)
async def test_the_apps_unchecked_results_are_the_checked_bytes(version: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_BINDINGS_CHECK_RESULTS", raising=False)
    unchecked_app = make_app(version)
    assert type(unchecked_app.server).check_results is False
    unchecked = await answers(unchecked_app.server, version)
    monkeypatch.setenv("MCP_BINDINGS_CHECK_RESULTS", "1")
    checked = await answers(make_app(version).server, version)
    assert unchecked == checked
    assert [orjson.loads(a).get("isError", False) for a in unchecked] == [False] * 6 + [True]


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")  # the broken result, on purpose
async def test_a_stub_keeps_the_check_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hand-written stub may build a result the schema does not allow (`model_construct`, a field
    changed after validation): the default check refuses it with -32603."""
    monkeypatch.delenv("MCP_BINDINGS_CHECK_RESULTS", raising=False)
    m: Any = importlib.import_module("mcp_bindings.v2025_11_25")
    base: Any = importlib.import_module("mcp_bindings.v2025_11_25.server").Server

    class Broken(base):  # type: ignore[misc, valid-type]
        async def list_tools(self, params: Any, ctx: Any) -> Any:
            return m.ListToolsResult(tools=[])

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            return m.CallToolResult.model_construct(content="not a list")

    assert Broken.check_results is True
    runtime = ServerRuntime(Broken())
    session = Session(None, runtime)  # type: ignore[arg-type]
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    await runtime.on_request(jsonrpc.Request(0, "initialize", init, {}), session)
    with pytest.raises(McpError) as raised:
        await runtime.on_request(jsonrpc.Request(1, "tools/call", {"name": "x", "arguments": {}}, {}), session)
    assert raised.value.code == INTERNAL_ERROR and "the tools/call result is invalid" in raised.value.message


def test_a_result_model_is_known_by_identity_not_by_its_name() -> None:
    """`-> CallToolResult` passes the stub's result on as it is; a model of the user's that is only
    named CallToolResult is data like any other (issue 44, item 9: the type was compared by name)."""
    from pydantic import BaseModel

    from mcp_bindings.runtime.app.signature import output_kind
    from mcp_bindings.v2025_11_25 import CallToolResult as Generated
    from mcp_bindings.v2026_07_28 import CallToolResult as Newest

    class CallToolResult(BaseModel):  # the user's own, named like the generated one
        total: int

    assert output_kind(Generated) == "result" and output_kind(Newest) == "result"
    assert output_kind(CallToolResult) == "structured"
