"""What the conformance everything-server on the layer (examples/app_everything_server.py) needed from
it: named asks (`key=`), elicitation forms given as JSON, a hand-written `input_schema`, and
embedded resources as content; each on a handshake client and a 2026-07-28 one."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from mcp_bindings.runtime.app import Accepted, App, AppDefinitionError, Context, Embedded, user
from mcp_bindings.runtime.rpc.errors import McpError
from tests.support.content import text_of

pytestmark = pytest.mark.anyio

BOTH = ["2025-11-25", "2026-07-28"]
FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["on", "off"], "enumNames": ["On", "Off"], "default": "on"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
    },
    "required": [],
}


app = App("asks")


@app.tool
async def named(ctx: Context) -> str:
    first, second = await asyncio.gather(
        ctx.elicit("status?", FORM, key="status"), ctx.sample("hello", max_tokens=5, key="greeting")
    )
    roots = await ctx.list_roots(key="roots")
    data = first.data if isinstance(first, Accepted) else None
    return f"{orjson.dumps(data).decode()} | {second.text} | {len(roots)}"


@app.tool
async def clash(ctx: Context) -> str:
    await asyncio.gather(ctx.elicit("a?", FORM, key="same"), ctx.elicit("b?", FORM, key="same"))
    return "unreachable"


@app.tool(
    input_schema={
        "type": "object",
        "properties": {"region": {"type": "string"}, "extra": {"type": "integer"}},
        "required": ["region"],
        "additionalProperties": False,
    }
)
def regional(region: str) -> str:
    return f"region={region}"


@app.tool
def embedded() -> list[str | Embedded]:
    return ["see:", Embedded("test://doc", "the text"), Embedded("test://png", b"\x89PNG", "image/png")]


@app.prompt
def with_resource(uri: str) -> list[Any]:
    return [user(Embedded(uri, "inside"))]


def answers(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    assert schema == FORM  # the form went out exactly as written
    return {"status": "off", "tags": ["b"]}


def client(version: str) -> Any:
    return app.test_client(version, elicit=answers, sample=lambda params: "hi", roots=["file:///r"])


@pytest.mark.parametrize("version", BOTH)
async def test_named_asks_and_json_forms(version: str) -> None:
    async with client(version) as c:
        result = await c.call_tool(name="named")
    assert result.content[0].text == '{"status":"off","tags":["b"]} | hi | 1'


async def test_named_asks_are_the_input_request_keys() -> None:
    async with client("2026-07-28") as c:
        meta = c.session.request_meta()
        first = await c.session.session.request("tools/call", {"name": "named", "_meta": meta}, timeout=10)
        assert first["resultType"] == "input_required"
        assert sorted(first["inputRequests"]) == ["greeting", "status"]
        assert first["inputRequests"]["status"]["params"]["requestedSchema"] == FORM
        answered = {
            "status": {"action": "accept", "content": {"status": "on"}},
            "greeting": {"role": "assistant", "content": {"type": "text", "text": "yo"}, "model": "m"},
        }
        params = {"name": "named", "_meta": meta, "inputResponses": answered, "requestState": first["requestState"]}
        second = await c.session.session.request("tools/call", params, timeout=10)
        assert second["resultType"] == "input_required" and list(second["inputRequests"]) == ["roots"]
        assert second["inputRequests"]["roots"] == {"method": "roots/list"}
        # A wrong key is not an answer: the same question is asked again (SEP-2322 re-request).
        params.update(inputResponses={"wrong": {"roots": []}}, requestState=second["requestState"])
        again = await c.session.session.request("tools/call", params, timeout=10)
        assert list(again["inputRequests"]) == ["roots"]
        params.update(inputResponses={"roots": {"roots": []}}, requestState=again["requestState"])
        done = await c.session.session.request("tools/call", params, timeout=10)
    assert done["content"][0]["text"] == '{"status":"on"} | yo | 0'


async def test_one_key_for_two_asks_is_an_internal_error() -> None:
    async with client("2026-07-28") as c:
        with pytest.raises(McpError) as raised:
            await c.call_tool(name="clash")
    assert raised.value.code == -32603 and "'same'" in raised.value.message


async def test_a_json_form_mcp_cannot_carry_is_refused() -> None:
    bad = App("bad")

    @bad.tool
    async def nested(ctx: Context) -> str:
        form = {"type": "object", "properties": {"inner": {"type": "object", "properties": {}}}}
        return (await ctx.elicit("?", form)).action

    async with bad.test_client("2025-11-25", elicit=lambda m, s: {}) as c:
        result = await c.call_tool(name="nested")
    assert result.is_error and "cannot be an elicitation form in MCP 2026-07-28" in text_of(result.content[0])


@pytest.mark.parametrize("version", BOTH)
async def test_a_hand_written_input_schema(version: str) -> None:
    async with client(version) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        schema = tools["regional"].input_schema.model_dump(by_alias=True, exclude_none=True)
        assert schema["properties"]["extra"] == {"type": "integer"}  # advertised as written
        ok = await c.call_tool(name="regional", arguments={"region": "eu", "extra": 3})
        assert ok.content[0].text == "region=eu"  # the function takes the arguments it names
        bad = await c.call_tool(name="regional", arguments={"extra": "x"})
    assert bad.is_error and "region" in bad.content[0].text


@pytest.mark.parametrize("version", BOTH)
async def test_embedded_resources(version: str) -> None:
    async with client(version) as c:
        result = await c.call_tool(name="embedded")
        blocks = [b.model_dump(by_alias=True, exclude_none=True) for b in result.content]
        prompt = await c.get_prompt(name="with_resource", arguments={"uri": "test://p"})
    assert blocks[1] == {
        "type": "resource",
        "resource": {"uri": "test://doc", "mimeType": "text/plain", "text": "the text"},
    }
    assert blocks[2]["resource"] == {"uri": "test://png", "mimeType": "image/png", "blob": "iVBORw=="}
    message = prompt.messages[0].model_dump(by_alias=True, exclude_none=True)
    assert message["content"]["resource"]["text"] == "inside"


def test_elicit_schema_must_be_a_form() -> None:
    from mcp_bindings.runtime.app.forms import form_of
    from mcp_bindings.runtime.protocol import registry

    with pytest.raises(AppDefinitionError, match="requestedSchema as a dict"):
        form_of(registry.protocol("2026-07-28"), 42)


# -- URL-mode elicitation and sampling with tools: gated on the version and the declared capability --

later = App("later")


@later.tool
async def sign_in(ctx: Context) -> str:
    answer = await ctx.elicit_url("Sign in to continue", "https://example.org/login")
    await ctx.elicitation_complete("fixed")
    return answer.action


@later.tool
async def plan(ctx: Context) -> str:
    tool = {"name": "lookup", "inputSchema": {"type": "object"}}
    answer = await ctx.sample("plan a trip", tools=[tool], tool_choice={"mode": "auto"})
    return f"{answer.stop_reason}: {answer.content}"


def recording_handlers(version: str, capabilities: dict[str, Any], seen: list[Any]) -> Any:
    import importlib

    from mcp_bindings.runtime.protocol import registry, versions

    base: Any = importlib.import_module(f"{registry.load_version(version).__name__}.client").ClientHandlers

    class Handlers(base):
        declared_capabilities = capabilities

        async def elicit(self, params: Any, ctx: Any) -> Any:
            seen.append(versions.dump(params))
            return {"action": "accept"}

        async def create_message(self, params: Any, ctx: Any) -> Any:
            seen.append(versions.dump(params))
            call = {"type": "tool_use", "id": "c1", "name": "lookup", "input": {}}
            return {"role": "assistant", "content": [call], "model": "m", "stopReason": "toolUse"}

    return Handlers()


@pytest.mark.parametrize("version", BOTH)
async def test_url_elicitation(version: str) -> None:
    seen: list[Any] = []
    handlers = recording_handlers(version, {"elicitation": {"form": {}, "url": {}}}, seen)
    async with later.test_client(version, handlers=handlers) as c:
        result = await c.call_tool(name="sign_in")
    assert result.content[0].text == "accept"
    [asked] = seen
    assert asked["mode"] == "url" and asked["url"] == "https://example.org/login"
    assert len(asked["elicitationId"]) == 32  # derived from the message and URL: the same every round


@pytest.mark.parametrize("version", BOTH)
async def test_url_elicitation_needs_the_url_capability(version: str) -> None:
    handlers = recording_handlers(version, {"elicitation": {"form": {}}}, [])
    async with later.test_client(version, handlers=handlers) as c:
        with pytest.raises(McpError) as raised:
            await c.call_tool(name="sign_in")
    assert "elicitation.url" in raised.value.message


async def test_url_elicitation_before_2025_11_25_is_refused() -> None:
    handlers = recording_handlers("2025-06-18", {"elicitation": {}}, [])
    async with later.test_client("2025-06-18", handlers=handlers) as c:
        with pytest.raises(McpError) as raised:
            await c.call_tool(name="sign_in")
    assert "URL-mode elicitation" in raised.value.message and "2025-06-18" in raised.value.message


@pytest.mark.parametrize("version", BOTH)
async def test_sampling_with_tools(version: str) -> None:
    seen: list[Any] = []
    handlers = recording_handlers(version, {"sampling": {"tools": {}}}, seen)
    async with later.test_client(version, handlers=handlers) as c:
        result = await c.call_tool(name="plan")
    assert result.content[0].text.startswith("toolUse: [{")
    assert seen[0]["tools"][0]["name"] == "lookup" and seen[0]["toolChoice"] == {"mode": "auto"}
    bare = recording_handlers(version, {"sampling": {}}, [])
    async with later.test_client(version, handlers=bare) as c:
        with pytest.raises(McpError) as raised:
            await c.call_tool(name="plan")
    assert "sampling.tools" in raised.value.message
