"""The authoring layer refuses what it cannot serve, with a clear error at registration: a tool
registered twice, templates that cannot match, signatures JSON Schema cannot express, returns that
cannot be described; and at call time: a return that violates the declared type (JSON-RPC -32603),
arguments that violate the schema (an isError result listing the fields)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from mcp_bindings.runtime.app import App, AppDefinitionError, Context
from mcp_bindings.runtime.rpc.errors import McpError
from tests.support.content import text_of

pytestmark = pytest.mark.anyio


class Out(BaseModel):
    value: int


class Nested(BaseModel):
    inner: Out


def ok(x: int) -> int:
    return x


def test_a_tool_registered_twice() -> None:
    app = App("dup")
    app.tool(ok)
    with pytest.raises(AppDefinitionError, match=r"tool 'ok' is already registered \(by .*\.ok\)"):
        app.tool(ok)
    app.tool(name="ok2")(ok)  # under another name: fine
    app.remove_tool("ok")
    app.tool(ok)  # replaced after removal


def test_other_duplicates() -> None:
    app = App("dup")

    def text() -> str:
        return ""

    def named(name: str) -> str:
        return name

    app.resource("a://x")(text)
    with pytest.raises(AppDefinitionError, match="resource 'a://x' is already registered"):
        app.resource("a://x")(text)
    app.resource("a://{name}")(named)
    with pytest.raises(AppDefinitionError, match=r"resource template 'a://\{name\}' is already registered"):
        app.resource("a://{name}")(named)
    app.prompt(text)
    with pytest.raises(AppDefinitionError, match="prompt 'text' is already registered"):
        app.prompt(text)
    app.prompt(named)
    app.complete(prompt="named", argument="name")(named)
    with pytest.raises(AppDefinitionError, match="is already registered"):
        app.complete(prompt="named", argument="name")(named)


def user(user_id: str) -> str:
    return user_id


def segments(parts: list[str]) -> str:
    return "/".join(parts)


@pytest.mark.parametrize(
    ("template", "fn", "why"),
    [
        ("users://{user_id", user, "unclosed '{'"),
        ("users://user_id}", user, "unmatched '}'"),
        ("users://{}", user, "empty expression"),
        ("users://{user id}", user, "is not a variable name"),
        ("users://{=user_id}", user, "reserved for future extensions"),
        ("users://{user_id:0}", user, "a prefix is ':' and 1 to 9999"),
        ("users://{user_id*:3}", user, "cannot be combined"),
        ("users/{user_id}", user, "does not start with a URI scheme"),
        ("users://{user_id}/{user_id}", user, "appears more than once"),
        ("users://{user_id}{other}", user, "nothing between them"),
        ("users://x{#user_id}{.other}", user, "cannot be matched: its expansion"),
        ("users://{other}", user, "parameter 'user_id' is not a variable of the template"),
        ("users://{user_id}/{extra}", user, "variable 'extra' is not a parameter of user"),
        ("tree://{parts}", segments, r"'parts' is a list: explode it in the template, \{parts\*\}"),
        ("tree://{/user_id*}", user, r"\{user_id\*\} is a list: annotate 'user_id' as list\[str\]"),
    ],
)
def test_templates_that_cannot_match(template: str, fn: Callable[..., Any], why: str) -> None:
    app = App("templates")
    with pytest.raises(AppDefinitionError, match=why):
        app.resource(template)(fn)


def test_static_resources_that_are_not_uris() -> None:
    app = App("resources")

    def text() -> str:
        return ""

    with pytest.raises(AppDefinitionError, match="not a URI"):
        app.resource("just-a-name")(text)
    with pytest.raises(AppDefinitionError, match="a resource with a fixed URI takes no arguments"):
        app.resource("a://fixed")(user)


def callback(fn: Callable[[int], int]) -> int:
    return fn(1)


def lock(guard: threading.Lock) -> str:  # type: ignore[valid-type]
    return ""


def star(*values: int) -> int:
    return sum(values)


def kwargs(**values: int) -> int:
    return sum(values.values())


def positional(x: int, /) -> int:
    return x


def untyped(x) -> int:  # type: ignore[no-untyped-def]  # noqa: ANN001
    return 1


def private(_x: int) -> int:
    return 1


def two_contexts(a: Context, b: Context) -> int:
    return 1


@pytest.mark.parametrize(
    ("fn", "why"),
    [
        (callback, "parameter 'fn' cannot be expressed as JSON Schema"),
        (lock, "parameter 'guard' cannot be expressed as JSON Schema"),
        (star, r"\*values / \*\*values cannot be described as JSON Schema"),
        (kwargs, r"\*values / \*\*values cannot be described"),
        (positional, "parameter 'x' is positional-only"),
        (untyped, "parameter 'x' has no type annotation"),
        (private, "must not start with '_'"),
        (two_contexts, "two Context parameters"),
    ],
)
def test_signatures_that_json_schema_cannot_express(fn: Callable[..., Any], why: str) -> None:
    app = App("signatures")
    with pytest.raises(AppDefinitionError, match=why):
        app.tool(fn)


def returns_callable() -> Callable[[int], int]:
    return ok


def test_returns_that_json_schema_cannot_express() -> None:
    app = App("returns")
    with pytest.raises(AppDefinitionError, match=r"return type .* cannot be expressed as JSON Schema"):
        app.tool(returns_callable)

    def bare(x: int):  # type: ignore[no-untyped-def]  # noqa: ANN202
        return x

    with pytest.raises(AppDefinitionError, match="structured=True needs a return annotation"):
        app.tool(structured=True)(bare)


def test_annotations_that_do_not_resolve() -> None:
    app = App("annotations")

    class Local(BaseModel):
        x: int

    def uses_local(value: Local) -> int:  # `from __future__ import annotations`: a string, resolved late
        return value.x

    app.tool(uses_local)  # resolved in the scope that registers it

    def uses_later(value: Later) -> int:
        return 1

    with pytest.raises(AppDefinitionError, match=r"its annotations cannot be resolved .* define the types"):
        app.tool(uses_later)

    class Later(BaseModel):
        x: int


def test_names_and_options_checked_against_the_stub() -> None:
    app = App("names")
    with pytest.raises(AppDefinitionError, match="a tool name is 1-128 of"):
        app.tool(name="has space")(ok)
    with pytest.raises(AppDefinitionError, match=r"not a valid Tool of MCP 2026-07-28: annotations\.readOnlyHint"):
        app.tool(annotations={"readOnlyHint": "yes"})(ok)
    with pytest.raises(AppDefinitionError, match=r"name either prompt=\.\.\. or template=\.\.\."):
        app.complete(argument="x")
    with pytest.raises(AppDefinitionError, match="no prompt 'missing'"):
        app.complete(prompt="missing", argument="x")(ok)


def test_typing_typed_dict_is_refused_with_pydantics_reason() -> None:
    import typing

    Legacy = typing.TypedDict("Legacy", {"x": int})  # noqa: UP013 - the typing one, which pydantic refuses on 3.11

    def legacy() -> Legacy:  # type: ignore[valid-type]
        return {"x": 1}

    app = App("typeddict")
    with pytest.raises(AppDefinitionError, match=r"typing_extensions\.TypedDict"):
        app.tool(legacy)

    class Modern(TypedDict):
        x: int

    def modern() -> Modern:
        return {"x": 1}

    app.tool(modern)


async def test_a_return_that_violates_the_output_schema() -> None:
    app = App("outputs")

    @app.tool
    def wrong_type() -> Out:
        return {"value": "many"}  # type: ignore[return-value]

    @app.tool
    def wrong_nested() -> Nested:
        return {"inner": {}}  # type: ignore[return-value]

    @app.tool
    def wrong_primitive() -> int:
        return "three"  # type: ignore[return-value]

    async with app.test_client() as client:
        for name, detail in (
            ("wrong_type", "value: Input should be a valid integer"),
            ("wrong_nested", "inner.value: Field required"),
            ("wrong_primitive", "Input should be a valid integer"),
        ):
            with pytest.raises(McpError) as raised:
                await client.call_tool(name=name)
            assert raised.value.code == -32603, name
            assert f"tool {name!r} returned a value that does not match its return type" in raised.value.message
            assert detail in raised.value.message
            assert raised.value.data == {"tool": name}


async def test_arguments_pydantic_refuses_after_the_schema_check() -> None:
    """Constraints JSON Schema does not carry (a validator) still come back as an isError listing the field."""
    from typing import Annotated

    from pydantic import AfterValidator

    def even(value: int) -> int:
        if value % 2:
            raise ValueError("must be even")
        return value

    app = App("validators")

    @app.tool
    def half(n: Annotated[int, AfterValidator(even)]) -> int:
        return n // 2

    async with app.test_client() as client:
        assert (await client.call_tool(name="half", arguments={"n": 4})).content[0].text == '{"result":2}'
        result = await client.call_tool(name="half", arguments={"n": 3})
    assert result.is_error is True
    assert result.content[0].text == (
        "Input validation error: invalid arguments for tool 'half':\n- n: Value error, must be even"
    )


async def test_elicitation_schemas_that_are_not_forms() -> None:
    app = App("forms")

    @app.tool
    async def ask(ctx: Context) -> str:
        return (await ctx.elicit("?", Nested)).action

    async with app.test_client("2025-11-25", elicit=lambda m, s: {}) as client:
        result = await client.call_tool(name="ask")
    assert result.is_error is True
    assert "Nested cannot be an elicitation form in MCP 2026-07-28" in text_of(result.content[0])
