"""What the authoring layer tells the author (issue 32, item 7): an expected `ToolError` logged on
one line without a traceback (an unexpected exception with it), `@app.resource` without a URI
refused where it is written, a wrong return value reported at its place in the value (and logged
on the server), and tool schemas written without `$ref` / `$defs` on request (`inline_refs`),
which `mcp-bindgen lint` then no longer warns about."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic import BaseModel

from mcp_bindings.live.contract.lint import no_refs
from mcp_bindings.runtime.app import App, AppDefinitionError, ToolError
from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.rpc.errors import McpError

pytestmark = pytest.mark.anyio

VERSIONS = ["2025-11-25", "2026-07-28"]


class Point(BaseModel):
    x: int
    y: int


class Segment(BaseModel):
    start: Point
    end: Point


class Tree(BaseModel):
    children: list[Tree] = []


class Report(BaseModel):
    count: int
    where: Point


@pytest.mark.parametrize("version", VERSIONS)
async def test_an_expected_tool_error_is_logged_without_a_traceback(
    version: str, caplog: pytest.LogCaptureFixture
) -> None:
    app = App("errors")

    @app.tool
    def refuse(city: str) -> str:
        raise ToolError(f"no forecast for {city}")

    @app.tool
    def crash() -> str:
        raise ValueError("a bug")

    caplog.set_level(logging.INFO, logger="mcp_bindings")
    async with app.test_client(version) as client:
        refused = await client.call_tool(name="refuse", arguments={"city": "Atlantis"})
        crashed = await client.call_tool(name="crash")
    assert refused.is_error and refused.content[0].text == "no forecast for Atlantis"
    masked = "Error executing tool crash (an unexpected error; the server's log has the details)"
    assert crashed.is_error and crashed.content[0].text == masked
    expected = [r for r in caplog.records if "Atlantis" in r.getMessage()]
    assert [(r.levelno, r.exc_info) for r in expected] == [(logging.INFO, None)]
    assert expected[0].getMessage() == "tool 'refuse' answered an error: no forecast for Atlantis"
    unexpected = [r for r in caplog.records if "'crash'" in r.getMessage()]
    assert len(unexpected) == 1 and unexpected[0].levelno == logging.ERROR
    assert unexpected[0].exc_info is not None and isinstance(unexpected[0].exc_info[1], ValueError)


def test_resource_without_a_uri_is_refused_where_it_is_written() -> None:
    app = App("resources")
    with pytest.raises(AppDefinitionError, match=r"@app.resource needs the resource's URI: @app.resource\(\"config://"):

        @app.resource  # type: ignore[arg-type]  # what a user writes by mistake
        def config() -> str:
            return "debug=false"

    assert not app.registries.resources and not app.registries.templates


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_wrong_return_value_is_reported_where_it_is_wrong(
    version: str, caplog: pytest.LogCaptureFixture
) -> None:
    app = App("returns")

    @app.tool
    def measure() -> Report:
        return {"count": 3, "where": {"x": 1, "y": "up"}}  # type: ignore[return-value]

    @app.tool
    def number() -> int:
        return "three"  # type: ignore[return-value]

    async with app.test_client(version) as client:
        with pytest.raises(McpError) as nested:
            await client.call_tool(name="measure")
        with pytest.raises(McpError) as plain:
            await client.call_tool(name="number")
    assert nested.value.code == -32603
    assert nested.value.message == (
        "tool 'measure' returned a value that does not match its return type Report:\n"
        "- return value.where.y: Input should be a valid integer, unable to parse string as an integer"
    )
    assert plain.value.message == (
        "tool 'number' returned a value that does not match its return type int:\n"
        "- return value: Input should be a valid integer, unable to parse string as an integer"
    )
    logged = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert nested.value.message in logged and plain.value.message in logged


def _walk(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [key for key, value in node.items() for key in [key, *_walk(value)]]  # type: ignore[misc]
    if isinstance(node, list):
        return [key for item in node for key in _walk(item)]
    return []


@pytest.mark.parametrize("version", VERSIONS)
async def test_inline_refs_writes_model_arguments_out(version: str) -> None:
    def length(segment: Segment, scale: float = 1.0) -> float:
        return scale * (abs(segment.end.x - segment.start.x) + abs(segment.end.y - segment.start.y))

    plain = App("refs")
    plain.tool(length)
    inlined = App("inlined", inline_refs=True)
    inlined.tool(length)
    inlined.tool(name="length_with_refs", inline_refs=False)(length)
    async with plain.test_client(version) as client:
        (with_refs,) = versions.dump(await client.list_tools())["tools"]
    async with inlined.test_client(version) as client:
        tools = {t["name"]: t for t in versions.dump(await client.list_tools())["tools"]}
        result = await client.call_tool(
            name="length", arguments={"segment": {"start": {"x": 0, "y": 0}, "end": {"x": 3, "y": 4}}}
        )
        refused = await client.call_tool(name="length", arguments={"segment": {"start": {"x": 0}}})
    assert "$defs" in with_refs["inputSchema"] and list(no_refs(with_refs))
    written = tools["length"]["inputSchema"]
    assert "$ref" not in _walk(written) and "$defs" not in _walk(written)
    assert written["properties"]["segment"]["properties"]["start"] == {
        "title": "Point",
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
        "required": ["x", "y"],
    }
    assert list(no_refs(tools["length"])) == []
    assert "$defs" in tools["length_with_refs"]["inputSchema"]  # the tool's own choice wins
    assert result.structured_content == {"result": 7.0}
    assert refused.is_error and "$.segment.start: 'y' is a required property" in refused.content[0].text


def test_a_recursive_model_cannot_be_inlined() -> None:
    app = App("recursive", inline_refs=True)

    def grow(tree: Tree) -> int:
        return len(tree.children)

    with pytest.raises(AppDefinitionError, match=r"tool 'grow': input schema: 'Tree' refers to itself"):
        app.tool(grow)
    App("recursive").tool(grow)  # with references: fine


def test_the_lint_suggests_inlining() -> None:
    (warning,) = no_refs({"inputSchema": {"$defs": {"P": {}}, "properties": {"p": {"$ref": "#/$defs/P"}}}})
    assert warning.endswith("(an mcp-bindgen App writes them out with App(inline_refs=True))")
