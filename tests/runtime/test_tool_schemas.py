"""Tool schemas enforced on both sides (issue #15 item 8): tools/call arguments against the listed
inputSchema (server: a tool execution error), structuredContent against the outputSchema (server: an
internal error; client: `ToolOutputError`), each schema compiled once, in the version's dialect."""

from __future__ import annotations

import dataclasses
import importlib
import logging
from typing import Any

import anyio
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.validators import validator_for

from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.protocol.json_schema import DRAFT_07, DRAFT_2020_12, MAX_VIOLATIONS, Violation, compiled
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, McpError
from mcp_bindings.runtime.server.tool_schemas import ToolOutputError, default_dialect

pytestmark = pytest.mark.anyio

HANDSHAKE = ["2024-11-05", "2025-06-18", "2025-11-25"]
STRUCTURED = ["2025-06-18", "2025-11-25", "2026-07-28"]  # versions with outputSchema / structuredContent

ADD_INPUT = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}
TOTAL_OUTPUT = {"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]}


def make_server(version: str, *, validate: bool = True, tools: dict[str, tuple[Any, Any]] | None = None) -> Any:
    """A server at `version` whose tools are `{name: (inputSchema, outputSchema or None)}`; each tool
    answers what its name says (see `call_tool`) and records the call."""
    package = registry.load_version(version)
    m: Any = package
    server_cls: Any = importlib.import_module(f"{package.__name__}.server").Server
    structured = "output_schema" in m.Tool.model_fields
    listed = tools or {
        "add": (ADD_INPUT, TOTAL_OUTPUT),
        "bad_output": ({"type": "object"}, TOTAL_OUTPUT),
        "no_structured": ({"type": "object"}, TOTAL_OUTPUT),
        "fails": ({"type": "object"}, TOTAL_OUTPUT),
    }

    class Tools(server_cls):
        name, version = "tools", "1.0.0"
        validate_tools = validate
        declared_capabilities = {"tools": {"listChanged": True}}

        def __init__(self) -> None:
            super().__init__()
            self.calls: list[str] = []
            self.tools = dict(listed)

        async def list_tools(self, params: Any, ctx: Any) -> Any:
            out = []
            for name, (input_schema, output_schema) in self.tools.items():
                fields: dict[str, Any] = {"name": name, "input_schema": m.ToolInputSchema.model_validate(input_schema)}
                if structured and output_schema is not None:
                    fields["output_schema"] = m.ToolOutputSchema.model_validate(output_schema)
                out.append(m.Tool(**fields))
            return m.ListToolsResult(tools=out)

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            self.calls.append(params.name)
            args = params.arguments or {}
            text = [m.TextContent(type="text", text="done")]
            if params.name == "add":
                total = args.get("a", 0) + args.get("b", 0)
                return m.CallToolResult(content=text, structured_content={"total": total})
            if params.name == "bad_output":
                return m.CallToolResult(content=text, structured_content={"total": "five"})
            if params.name == "fails":  # a tool execution error: no structured content needed
                return m.CallToolResult(content=[m.TextContent(type="text", text="no luck")], is_error=True)
            extra = {"structured_content": {"total": 1}} if structured and params.name == "structured" else {}
            return m.CallToolResult(content=text, **extra)

    return Tools()


def client_cls(version: str) -> Any:
    return importlib.import_module(f"mcp_bindings.{registry.info(version).package}.client").Client


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


# -- server: arguments ----------------------------------------------------------------------------


@pytest.mark.parametrize("version", [*HANDSHAKE, "2026-07-28"])
async def test_bad_arguments_are_a_tool_execution_error(version: str) -> None:
    server = make_server(version)
    with anyio.fail_after(10):
        async with connect_in_memory(server, client_cls(version)) as client:
            await client.list_tools()
            result = await client.call_tool(name="add", arguments={"a": "1", "c": 2})
    assert result.is_error is True
    text = text_of(result)
    assert "Input validation error" in text and "'add'" in text
    assert "- $: 'b' is a required property" in text
    assert "- $.a: '1' is not of type 'integer'" in text
    assert "Additional properties are not allowed ('c' was unexpected)" in text
    assert server.calls == []  # the handler never saw them


@pytest.mark.parametrize("version", [*HANDSHAKE, "2026-07-28"])
async def test_good_arguments_pass(version: str) -> None:
    server = make_server(version)
    with anyio.fail_after(10):
        async with connect_in_memory(server, client_cls(version)) as client:
            await client.list_tools()
            result = await client.call_tool(name="add", arguments={"a": 2, "b": 3})
    assert result.is_error is not True
    assert server.calls == ["add"]
    if version in STRUCTURED:
        assert result.structured_content == {"total": 5}


async def test_missing_arguments_are_checked_as_an_empty_object() -> None:
    server = make_server("2025-11-25")
    async with connect_in_memory(server, client_cls("2025-11-25")) as client:
        await client.list_tools()
        result = await client.call_tool(name="add")
    assert result.is_error is True
    assert "'a' is a required property" in text_of(result)
    assert server.calls == []


async def test_the_list_of_violations_is_bounded() -> None:
    many = {"type": "object", "required": [f"p{i:02}" for i in range(MAX_VIOLATIONS + 5)]}
    server = make_server("2025-11-25", tools={"many": (many, None)})
    async with connect_in_memory(server, client_cls("2025-11-25")) as client:
        await client.list_tools()
        result = await client.call_tool(name="many", arguments={})
    lines = [line for line in text_of(result).splitlines() if line.startswith("- ")]
    assert len(lines) == MAX_VIOLATIONS + 1
    assert lines[-1] == "- (further violations not listed)"


async def test_a_tool_never_listed_is_not_checked() -> None:
    server = make_server("2025-11-25")
    async with connect_in_memory(server, client_cls("2025-11-25")) as client:
        result = await client.call_tool(name="add", arguments={"a": 1, "b": 2, "c": "not allowed"})
    assert result.is_error is not True
    assert server.calls == ["add"]


async def test_arguments_are_checked_against_the_list_each_connection_was_shown() -> None:
    """Per-client lists: a connection's calls meet the schemas it was shown; a connection that never
    listed meets the latest definitions the server listed to anyone."""
    wants_a = {"type": "object", "required": ["a"]}
    wants_b = {"type": "object", "required": ["b"]}
    server = make_server("2025-11-25", tools={"t": (wants_a, None)})
    client = client_cls("2025-11-25")
    async with (
        connect_in_memory(server, client) as first,
        connect_in_memory(server, client) as second,
        connect_in_memory(server, client) as third,
    ):
        await first.list_tools()
        server.tools = {"t": (wants_b, None)}
        await second.list_tools()
        assert (await first.call_tool(name="t", arguments={"a": 1})).is_error is not True
        assert (await first.call_tool(name="t", arguments={"b": 1})).is_error is True
        assert (await second.call_tool(name="t", arguments={"b": 1})).is_error is not True
        assert (await second.call_tool(name="t", arguments={"a": 1})).is_error is True
        assert (await third.call_tool(name="t", arguments={"a": 1})).is_error is True  # the latest listed
        assert (await third.call_tool(name="t", arguments={"b": 1})).is_error is not True


async def test_a_client_of_an_older_version_is_checked_against_the_servers_schemas() -> None:
    """Server written against 2025-11-25, client speaking 2025-03-26 (no outputSchema on its wire):
    the arguments are still checked, and the server still holds its handler to its outputSchema."""
    server = make_server("2025-11-25")
    async with connect_in_memory(server, client_cls("2025-03-26")) as client:
        await client.list_tools()
        refused = await client.call_tool(name="add", arguments={"a": 1})
        assert refused.is_error is True and "'b' is a required property" in text_of(refused)
        with pytest.raises(McpError) as caught:
            await client.call_tool(name="bad_output", arguments={})
    assert caught.value.code == INTERNAL_ERROR


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_over_streamable_http(version: str) -> None:
    """A session per client (2025-11-25), one shared runtime for sessionless requests (2026-07-28):
    a client that lists and one that never does are both checked."""
    from mcp_bindings.runtime.client.http import connect_http
    from mcp_bindings.runtime.http.app import create_app
    from tests.support.http import serve_in_thread

    server = make_server(version)
    with serve_in_thread(create_app(server)) as base, anyio.fail_after(30):
        url, client = f"{base}/mcp", client_cls(version)
        async with connect_http(url, client, protocol_version=version, request_timeout=10) as lister:
            await lister.list_tools()
            refused = await lister.call_tool(name="add", arguments={"a": 1})
            assert refused.is_error is True and "'b' is a required property" in text_of(refused)
            with pytest.raises(McpError) as caught:
                await lister.call_tool(name="bad_output", arguments={})
            assert caught.value.code == INTERNAL_ERROR
        async with connect_http(url, client, protocol_version=version, request_timeout=10) as caller:
            assert (await caller.call_tool(name="add", arguments={"a": "x", "b": 1})).is_error is True
            assert (await caller.call_tool(name="add", arguments={"a": 2, "b": 1})).structured_content == {"total": 3}
    assert server.calls == ["bad_output", "add"]


# -- server: structured content --------------------------------------------------------------------


@pytest.mark.parametrize("version", STRUCTURED)
async def test_bad_structured_content_is_refused_by_the_server(version: str, caplog: pytest.LogCaptureFixture) -> None:
    server = make_server(version)
    with caplog.at_level(logging.ERROR, logger="mcp_bindings.runtime.server.tool_schemas"):
        async with connect_in_memory(server, client_cls(version)) as client:
            await client.list_tools()
            with pytest.raises(McpError) as caught:
                await client.call_tool(name="bad_output", arguments={})
    error = caught.value
    assert not isinstance(error, ToolOutputError)  # the server's answer, not the client's own check
    assert error.code == INTERNAL_ERROR
    assert "tool 'bad_output' returned structuredContent that does not match its outputSchema" in error.message
    assert "$.total: 'five' is not of type 'integer'" in error.message
    assert error.data == {
        "tool": "bad_output",
        "violations": [{"path": "$.total", "message": "'five' is not of type 'integer'"}],
    }
    assert any("'bad_output'" in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize("version", STRUCTURED)
async def test_missing_structured_content_is_refused_by_the_server(version: str) -> None:
    server = make_server(version)
    async with connect_in_memory(server, client_cls(version)) as client:
        await client.list_tools()
        with pytest.raises(McpError) as caught:
            await client.call_tool(name="no_structured", arguments={})
    assert caught.value.code == INTERNAL_ERROR
    assert "tool 'no_structured' has an outputSchema but its result has no structuredContent" in caught.value.message


async def test_an_error_result_needs_no_structured_content() -> None:
    server = make_server("2025-11-25")
    async with connect_in_memory(server, client_cls("2025-11-25")) as client:
        await client.list_tools()
        result = await client.call_tool(name="fails", arguments={})
    assert result.is_error is True and text_of(result) == "no luck"


# -- client ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", STRUCTURED)
async def test_the_client_detects_bad_structured_content(version: str) -> None:
    server = make_server(version, validate=False)  # a server that does not hold itself to its schemas
    async with connect_in_memory(server, client_cls(version)) as client:
        await client.list_tools()
        with pytest.raises(ToolOutputError) as caught:
            await client.call_tool(name="bad_output", arguments={})
        assert (await client.call_tool(name="add", arguments={"a": 1, "b": 1})).structured_content == {"total": 2}
    error = caught.value
    assert error.code == INTERNAL_ERROR and error.tool == "bad_output"
    assert "tool 'bad_output' returned structuredContent that does not match its outputSchema" in error.message
    assert [str(v) for v in error.violations] == ["$.total: 'five' is not of type 'integer'"]
    assert server.calls == ["bad_output", "add"]


async def test_the_client_detects_missing_structured_content() -> None:
    server = make_server("2025-11-25", validate=False)
    async with connect_in_memory(server, client_cls("2025-11-25")) as client:
        await client.list_tools()
        with pytest.raises(ToolOutputError, match="has an outputSchema but its result has no structuredContent"):
            await client.call_tool(name="no_structured", arguments={})
        assert (await client.call_tool(name="fails", arguments={})).is_error is True  # isError: not checked


async def test_the_client_checks_nothing_it_was_not_shown_and_can_be_turned_off() -> None:
    server = make_server("2025-11-25", validate=False)
    async with connect_in_memory(server, client_cls("2025-11-25")) as client:
        await client.call_tool(name="bad_output", arguments={})  # never listed: nothing to check against
        await client.list_tools()
        client.session.tool_checks.forget()  # as on notifications/tools/list_changed
        await client.call_tool(name="bad_output", arguments={})
        await client.list_tools()
        client.session.tool_checks.enabled = False
        await client.call_tool(name="bad_output", arguments={})
    assert server.calls == ["bad_output"] * 3


async def test_the_client_forgets_the_tools_when_the_list_changes() -> None:
    server = make_server("2025-11-25", validate=False)
    async with connect_in_memory(server, client_cls("2025-11-25")) as client:
        await client.list_tools()
        assert "bad_output" in client.session.tool_checks.catalog.tools
        assert await server.broadcast("notifications/tools/list_changed") == 1
        with anyio.fail_after(5):
            while client.session.tool_checks.catalog.tools:
                await anyio.sleep(0.01)
        await client.call_tool(name="bad_output", arguments={})  # unchecked until listed again
        await client.list_tools()
        with pytest.raises(ToolOutputError):
            await client.call_tool(name="bad_output", arguments={})


# -- compilation -----------------------------------------------------------------------------------


async def test_each_schema_is_compiled_once() -> None:
    unique = {**ADD_INPUT, "description": f"compiled once {id(object())}"}
    output = {**TOTAL_OUTPUT, "description": f"compiled once {id(object())}"}
    server = make_server("2025-11-25", tools={"add": (unique, output)})
    before = compiled.cache_info()
    async with (
        connect_in_memory(server, client_cls("2025-11-25")) as first,
        connect_in_memory(server, client_cls("2025-11-25")) as second,
    ):
        for client in (first, second):
            client.session.tool_checks.enabled = False  # count the server's compilations only
            for _ in range(3):
                await client.list_tools()
            for n in range(5):
                assert (await client.call_tool(name="add", arguments={"a": n, "b": 1})).is_error is not True
            assert (await client.call_tool(name="add", arguments={"a": "x", "b": 1})).is_error is True
    after = compiled.cache_info()
    assert after.misses - before.misses == 2  # its inputSchema and its outputSchema, once each
    assert after.hits - before.hits <= 2  # at most once more each: the second connection's definitions


def test_the_fast_check_covers_the_usual_tool_schemas() -> None:
    """The common shapes never reach jsonschema when the value is valid (that is what keeps it cheap)."""
    schemas: list[tuple[dict[str, Any], Any]] = [
        ({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}, {"text": "hi"}),
        (ADD_INPUT, {"a": 1, "b": 2}),
        (
            {  # what pydantic writes for a model with an optional field and a nested model
                "$defs": {"Inner": {"properties": {"x": {"title": "X", "type": "number"}}, "type": "object"}},
                "properties": {
                    "name": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "Name"},
                    "inner": {"$ref": "#/$defs/Inner"},
                    "tags": {"items": {"type": "string", "enum": ["a", "b"]}, "type": "array", "maxItems": 3},
                },
                "required": ["inner"],
                "title": "Args",
                "type": "object",
            },
            {"name": None, "inner": {"x": 1.5}, "tags": ["a"]},
        ),
    ]
    for schema, value in schemas:
        check = compiled(orjson.dumps(schema), DRAFT_2020_12)
        assert check.fast is not None and check.fast(value) is True, schema


KEYS = ["a", "b", "c", "n", "s", "next", "x", "yes", "no", "ab", "abc"]
FAST_CASES: list[tuple[Any, list[Any]]] = [
    (ADD_INPUT, [{"a": 1, "b": 2}, {"a": 1}, {"a": 1.0, "b": 2}, {"a": True, "b": 2}, {"a": 1, "b": 2, "c": 3}, []]),
    (
        {"type": ["string", "null"], "minLength": 2, "maxLength": 3, "pattern": "^a"},
        ["ab", "abcd", "a", "ba", None, 1, "", "abc"],
    ),
    ({"type": "number", "minimum": 0, "exclusiveMaximum": 10}, [0, -1, 10, 9.5, True, "5", 10.0]),
    ({"enum": ["x", 1, None, True]}, ["x", 1, 1.0, None, True, False, 0, "y", [], {}]),
    ({"const": 1}, [1, 1.0, True, "1"]),
    (
        {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}, "minItems": 1},
        [[], [{"n": 1}], [{"n": "1"}], [{"m": 1}], [1], "[]"],
    ),
    (
        {"anyOf": [{"type": "string"}, {"type": "integer", "maximum": 3}], "allOf": [{"not": {"const": "no"}}]},
        ["yes", "no", 3, 4, None],
    ),
    (
        {
            "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
            "$ref": "#/$defs/node",
        },
        [{}, {"next": {"next": {}}}, {"next": {"next": 1}}, 1],
    ),
    (
        {"type": "object", "additionalProperties": {"type": "integer"}, "properties": {"s": {"type": "string"}}},
        [{"s": "x", "n": 1}, {"s": 1}, {"n": "x"}, {}, {"s": "x", "m": 1.5}],
    ),
    ({"type": "object", "minProperties": 1, "maxProperties": 2}, [{}, {"a": 1}, {"a": 1, "b": 2, "c": 3}]),
    ({"type": "integer", "format": "int32", "x-custom": True}, [1, 1.0, "1"]),
    ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, ["a", 1, None]),
    (
        {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a", "b"]},
        [{"a": 1}, {"a": 1, "b": 0}],
    ),
    (False, [1]),
]


@pytest.mark.parametrize("dialect", [DRAFT_07, DRAFT_2020_12], ids=["draft-07", "2020-12"])
@pytest.mark.parametrize(("schema", "values"), FAST_CASES)
def test_the_fast_check_agrees_with_jsonschema(dialect: str, schema: Any, values: list[Any]) -> None:
    """The fast check says "valid" only where jsonschema does, and `violations` is jsonschema's verdict."""
    check = compiled(orjson.dumps(schema), dialect)
    reference = validator_for(schema, default=Draft7Validator if dialect == DRAFT_07 else Draft202012Validator)(schema)
    for value in values:
        valid = reference.is_valid(value)
        if check.fast is not None and check.fast(value):
            assert valid, (schema, value)
        assert (check.violations(value) == []) == valid, (schema, value)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 12) | st.floats(-3, 12, allow_nan=False) | st.sampled_from(KEYS),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=JSON)
def test_the_fast_check_never_accepts_what_jsonschema_refuses(value: Any) -> None:
    for schema, _ in FAST_CASES:
        for dialect, cls in ((DRAFT_07, Draft7Validator), (DRAFT_2020_12, Draft202012Validator)):
            fast = compiled(orjson.dumps(schema), dialect).fast
            if fast is not None and fast(value):
                assert validator_for(schema, default=cls)(schema).is_valid(value), (schema, value)


def test_the_generated_check_holds_no_schema_text() -> None:
    """Property names, patterns and values reach the generated code as constants, never as source."""
    name = "x'): return True\nimport os  #"
    pattern = "'\"\\\\"  # the regex '"\\ : a quote, a double quote, a backslash
    schema = {"type": "object", "properties": {name: {"type": "string", "pattern": pattern}}, "required": [name]}
    check = compiled(orjson.dumps(schema), DRAFT_2020_12)
    assert check.fast is not None
    assert check.fast({name: "'\"\\"}) is True
    assert check.fast({name: "no"}) is False
    assert [v.message for v in check.violations({name: 1})] == ["1 is not of type 'string'"]
    assert check.violations({}) == [Violation("$", f"{name!r} is a required property")]


def test_a_schema_nested_deeper_than_python_blocks_is_still_checked() -> None:
    schema: dict[str, Any] = {"type": "string"}
    value: Any = "leaf"
    for _ in range(30):
        schema, value = {"type": "array", "items": schema}, [value]
    check = compiled(orjson.dumps(schema), DRAFT_2020_12)
    assert check.violations(value) == []
    assert len(check.violations([[1]])) == 1


# -- dialects and unusable schemas -----------------------------------------------------------------

PREFIX_ITEMS = {"type": "object", "properties": {"xs": {"type": "array", "prefixItems": [{"type": "string"}]}}}


def test_the_default_dialect_follows_the_protocol_version() -> None:
    assert default_dialect("2025-06-18") == DRAFT_07
    assert default_dialect("2025-11-25") == DRAFT_2020_12
    assert default_dialect("2026-07-28") == DRAFT_2020_12


def test_the_default_dialect_is_the_one_the_versions_schema_is_written_in_not_a_date() -> None:
    # A later version whose schema were written in draft-07 reads its tool schemas in draft-07: the
    # rule attaches to the schema's content (what the generator read), not to the version's name.
    info = registry.info("2026-07-28")
    assert info.schema_dialect == "2020-12"
    later_in_draft_07 = dataclasses.replace(info, version="2099-01-01", schema_dialect="draft-07")
    assert default_dialect(later_in_draft_07) == DRAFT_07
    assert registry.info("2025-06-18").schema_dialect == "draft-07"


@pytest.mark.parametrize(
    ("version", "schema", "refused"),
    [
        ("2025-06-18", PREFIX_ITEMS, False),  # draft-07: prefixItems is no keyword
        ("2025-11-25", PREFIX_ITEMS, True),  # 2020-12: the first item must be a string
        ("2025-06-18", {**PREFIX_ITEMS, "$schema": DRAFT_2020_12}, True),  # $schema is honoured
        ("2025-11-25", {**PREFIX_ITEMS, "$schema": DRAFT_07}, False),
    ],
)
async def test_schemas_are_read_in_their_dialect(version: str, schema: Any, refused: bool) -> None:
    server = make_server(version, tools={"t": (schema, None)})
    async with connect_in_memory(server, client_cls(version)) as client:
        await client.list_tools()
        result = await client.call_tool(name="t", arguments={"xs": [1]})
    assert (result.is_error is True) == refused


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "object", "properties": {"a": {"type": "wat"}}}, "invalid under its dialect"),
        ({"type": "object", "$schema": "https://example.com/my-dialect"}, "unsupported JSON Schema dialect"),
        ({"type": "object", "properties": {"a": {"$ref": "https://example.com/remote.json"}}}, "cannot be evaluated"),
    ],
)
async def test_an_unusable_schema_is_reported_once_and_not_enforced(
    schema: Any, problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    unique = {**schema, "description": f"unusable {id(object())}"}
    server = make_server("2025-11-25", tools={"t": (unique, None)})
    with caplog.at_level(logging.ERROR, logger="mcp_bindings.runtime"):
        async with connect_in_memory(server, client_cls("2025-11-25")) as client:
            await client.list_tools()
            for _ in range(3):
                assert (await client.call_tool(name="t", arguments={"a": 1})).is_error is not True
    told = [record.getMessage() for record in caplog.records if problem in record.getMessage()]
    assert len(told) == 1, [record.getMessage() for record in caplog.records]
    assert server.calls == ["t"] * 3


async def test_a_handler_rerun_for_an_input_round_is_checked_too() -> None:
    """A stateless-era tool asks for input; for a handshake-era client the runtime answers the ask
    with a real request and calls the handler again: that second result meets the outputSchema too."""
    m = importlib.import_module("mcp_bindings.v2026_07_28.models")
    out_schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

    class Asking(importlib.import_module("mcp_bindings.v2026_07_28.server").Server):  # type: ignore[misc]
        name, version = "asking", "1"

        async def list_tools(self, params: Any, ctx: Any) -> Any:
            tool = m.Tool.model_validate({"name": "ask", "inputSchema": {"type": "object"}, "outputSchema": out_schema})
            return m.ListToolsResult(tools=[tool])

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            if not params.input_responses:
                ask = m.ListRootsRequest(method="roots/list")
                return m.InputRequiredResult(input_requests={"roots": ask})
            return m.CallToolResult(content=[], structured_content={"n": "not a number"})

    handlers_cls = importlib.import_module("mcp_bindings.v2025_11_25.client").ClientHandlers
    m25 = importlib.import_module("mcp_bindings.v2025_11_25.models")

    class Roots(handlers_cls):  # type: ignore[misc, valid-type]
        async def list_roots(self, params: Any, ctx: Any) -> Any:
            return m25.ListRootsResult(roots=[])

    with anyio.fail_after(10):
        async with connect_in_memory(
            Asking(), client_cls("2025-11-25"), handlers=Roots(), protocol_version="2025-11-25"
        ) as client:
            client.session.tool_checks.enabled = False  # the server's check, not the client's
            await client.list_tools()
            with pytest.raises(McpError) as caught:
                await client.call_tool(name="ask", arguments={})
    assert caught.value.code == INTERNAL_ERROR and "'ask'" in caught.value.message
    assert not isinstance(caught.value, ToolOutputError)
