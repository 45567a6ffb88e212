"""The authoring layer (`mcp_bindings.runtime.app`) end to end, through `App.test_client` at every
protocol version: tools (schemas, structured output, content, errors), resources and templates,
prompts, completions, logging, progress, elicitation / sampling / roots with one handler for every
version (real requests up to 2025-11-25, input rounds by replay on 2026-07-28), list changes,
subscriptions and pagination."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import anyio
import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from mcp_bindings.runtime.app import (
    Accepted,
    App,
    AppDefinitionError,
    Context,
    Declined,
    Image,
    ResourceNotFound,
    ToolError,
    assistant,
    user,
)
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc.errors import McpError
from mcp_bindings.runtime.server.host import host_for
from tests.support.content import text_of

pytestmark = pytest.mark.anyio

VERSIONS = list(registry.versions())  # 2024-11-05 .. 2026-07-28
STATELESS = set(registry.stateless_versions())
PNG = b"\x89PNG\r\n\x1a\n-fake"


def has(version: str, model: str, field: str) -> bool:
    """Whether `version`'s `model` defines `field` (e.g. CallToolResult.structured_content)."""
    return field in getattr(registry.load_version(version), model).model_fields


def elicits(version: str) -> bool:
    return "elicitation/create" in {
        **registry.protocol(version).server_requests,
        **registry.protocol(version).input_requests,
    }


# -- the app under test ---------------------------------------------------------------------------


class Weather(BaseModel):
    city: str
    celsius: float
    note: str | None = None


class Point(TypedDict):
    x: int
    y: int


class Confirm(BaseModel):
    ok: bool
    reason: str | None = None


class Name(BaseModel):
    name: str


app = App("test-app", version="2.0", instructions="for tests")


@app.tool(annotations={"readOnlyHint": True}, title="Add")
def add(a: Annotated[int, Field(description="the first number")], b: int = 2) -> int:
    """Add two numbers."""
    return a + b


@app.tool
async def weather(city: str, ctx: Context) -> Weather:
    """Current weather of a city."""
    await ctx.info(f"looking up {city}")
    return Weather(city=city, celsius=21.5)


@app.tool
def point(x: int) -> Point:
    return {"x": x, "y": -x}


@app.tool(icons=[{"src": "https://example.com/echo.png", "mimeType": "image/png"}], meta={"example.com/kind": "echo"})
def echo(text: str) -> str:
    return text


@app.tool
def picture() -> Image:
    return Image(PNG)


@app.tool
def mixed() -> list[str | Image]:
    return ["a chart:", Image(PNG)]


@app.tool
def fail(kind: str) -> str:
    if kind == "tool":
        raise ToolError("the tool says no")
    if kind == "protocol":
        raise McpError(-32602, "a protocol error")
    raise RuntimeError("boom")


@app.tool
def liar() -> Weather:
    return {"city": "Paris"}  # type: ignore[return-value]  # no celsius: violates the output schema


@app.tool
async def delete(path: str, ctx: Context) -> str:
    """Delete a file, after asking the user."""
    answer = await ctx.elicit(f"Delete {path}?", Confirm)
    if isinstance(answer, Accepted):
        return f"deleted {path}" if answer.data.ok else f"kept {path}: {answer.data.reason}"
    return f"{answer.action}: kept {path}"


STEPS: list[str] = []


@app.tool
async def survey(ctx: Context) -> str:
    """Three questions: elicitation, sampling and roots, one after the other."""
    STEPS.append("start")
    await ctx.info("survey started")
    name = await ctx.elicit("Your name?", Name)
    STEPS.append("named")
    haiku = await ctx.sample(f"A haiku for {name.data.name if isinstance(name, Accepted) else 'nobody'}")
    roots = await ctx.list_roots()
    await ctx.info("survey done")
    who = name.data.name if isinstance(name, Accepted) else "?"
    return f"{who} | {haiku.text} | {','.join(r.uri for r in roots)}"


@app.tool
async def together(ctx: Context) -> str:
    """Two asks at once (one round on 2026-07-28)."""
    first, second = await asyncio.gather(ctx.elicit("First?", Name), ctx.elicit("Second?", Name))
    names = [a.data.name if isinstance(a, Accepted) else a.action for a in (first, second)]
    return " & ".join(names)


@app.tool
async def confirm(question: str, ctx: Context) -> str:
    answer = await ctx.elicit(question, bool)
    return f"{answer.action}: {answer.data!r}" if isinstance(answer, Accepted) else answer.action


@app.tool
async def steps(ctx: Context) -> str:
    for step in (1, 2, 3):
        await ctx.report_progress(step, 3, f"step {step}")
    return "done"


@app.resource("config://app", mime_type="application/toml", size=11, description="The configuration")
def config() -> str:
    return "debug=false"


@app.resource("blob://logo")
def logo() -> bytes:
    return PNG


@app.resource("users://{user_id}/profile")
def profile(user_id: int) -> Weather:
    if user_id == 0:
        raise ResourceNotFound(f"users://{user_id}/profile")
    return Weather(city=f"home of {user_id}", celsius=user_id)


@app.resource("files://{+path}")
def file(path: str) -> str:
    return f"file at {path}"


@app.resource("tree://root{/parts*}")
def tree(parts: list[str]) -> str:
    return " > ".join(parts)


@app.prompt
def review(code: str, language: str = "python") -> str:
    """Ask for a code review."""
    return f"Review this {language} code:\n{code}"


@app.prompt(name="chat", description="A conversation")
def conversation(topic: str, turns: Annotated[int, Field(description="how many turns")] = 1) -> list[Any]:
    return [user(f"Let us talk about {topic}"), assistant(f"{turns} turn(s), then"), user(Image(PNG))]


@app.complete(prompt="review", argument="language")
def languages(value: str) -> list[str]:
    return [name for name in ("python", "perl", "rust") if name.startswith(value)]


@app.complete(template="users://{user_id}/profile", argument="user_id")
async def user_ids(value: str, arguments: dict[str, str]) -> list[str]:
    return [str(n) for n in range(150) if str(n).startswith(value)]


def answers(message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The test client's user: accepts delete and names, declines anything else."""
    if message.startswith("Delete"):
        return {"ok": True}
    if message in ("Your name?", "First?"):
        return {"name": "Ada"}
    if message == "Second?":
        return {"name": "Grace"}
    if message == "Sure?":
        assert schema == {
            "type": "object",
            "properties": {"value": {"type": "boolean", "title": "Value"}},
            "required": ["value"],
        }
        return {"value": True}
    return None


def haiku(params: dict[str, Any]) -> str:
    return f"haiku({params['messages'][0]['content']['text']})"


def client(version: str, **options: Any) -> Any:
    hooks: dict[str, Any] = {"elicit": answers, "sample": haiku, "roots": ["file:///a", "file:///b"]}
    return app.test_client(version, **{**hooks, **options})


# -- tools ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
async def test_tool_definitions(version: str) -> None:
    async with client(version) as c:
        listed = {t.name: t for t in (await c.list_tools()).tools}
    assert set(listed) >= {"add", "weather", "point", "echo", "delete", "survey"}
    add_tool = listed["add"]
    schema = add_tool.input_schema.model_dump(by_alias=True, exclude_none=True)
    assert schema["properties"]["a"] == {"type": "integer", "description": "the first number"}
    assert schema["properties"]["b"] == {"type": "integer", "default": 2}
    assert schema["required"] == ["a"]
    assert schema["additionalProperties"] is False
    assert add_tool.description == "Add two numbers."
    assert "delete" in listed and "file" in (listed["delete"].description or "")
    if has(version, "Tool", "output_schema"):
        assert listed["add"].output_schema.model_dump(by_alias=True, exclude_none=True) == {
            "type": "object",
            "properties": {"result": {"type": "integer"}},
            "required": ["result"],
        }
        weather_schema = listed["weather"].output_schema.model_dump(by_alias=True, exclude_none=True)
        assert weather_schema["required"] == ["city", "celsius"]
        assert listed["echo"].output_schema is None  # a str is content, not structured output
    if has(version, "Tool", "annotations"):
        assert add_tool.annotations.read_only_hint is True
    if has(version, "Tool", "title"):
        assert add_tool.title == "Add"
    if has(version, "Tool", "icons"):
        assert [i.src for i in listed["echo"].icons] == ["https://example.com/echo.png"]
    if has(version, "Tool", "meta"):
        assert listed["echo"].meta["example.com/kind"] == "echo"


@pytest.mark.parametrize("version", VERSIONS)
async def test_tool_results(version: str) -> None:
    structured = has(version, "CallToolResult", "structured_content")
    async with client(version) as c:
        result = await c.call_tool(name="add", arguments={"a": 40})
        assert result.content[0].text == '{"result":42}'
        assert (result.structured_content if structured else None) == ({"result": 42} if structured else None)
        result = await c.call_tool(name="weather", arguments={"city": "Paris"})
        if structured:
            assert result.structured_content == {"city": "Paris", "celsius": 21.5, "note": None}
        result = await c.call_tool(name="point", arguments={"x": 3})
        assert result.content[0].text == '{"x":3,"y":-3}'
        result = await c.call_tool(name="echo", arguments={"text": "hi"})
        assert [b.text for b in result.content] == ["hi"]
        assert getattr(result, "structured_content", None) is None
        result = await c.call_tool(name="picture")
        assert result.content[0].type == "image" and result.content[0].mime_type == "image/png"
        result = await c.call_tool(name="mixed")
        assert [b.type for b in result.content] == ["text", "image"]


@pytest.mark.parametrize("version", VERSIONS)
async def test_tool_argument_errors_list_the_fields(version: str) -> None:
    async with client(version) as c:
        result = await c.call_tool(name="add", arguments={"a": "x", "c": 1})
        assert result.is_error is True
        text = result.content[0].text
        assert "'x' is not of type 'integer'" in text and "'c' was unexpected" in text
        result = await c.call_tool(name="add", arguments={})
        assert result.is_error is True and "'a' is a required property" in result.content[0].text
        with pytest.raises(McpError) as raised:
            await c.call_tool(name="nope", arguments={})
        assert raised.value.code == -32602 and "Unknown tool: nope" in raised.value.message


async def test_argument_errors_before_any_list() -> None:
    """The app declares its tools' schemas: a call is checked even by a client that never listed."""
    async with app.test_client() as c:
        result = await c.call_tool(name="add", arguments={"a": 1.5})
    assert result.is_error is True and "1.5 is not of type 'integer'" in result.content[0].text


@pytest.mark.parametrize("version", VERSIONS)
async def test_tool_failures(version: str) -> None:
    async with client(version) as c:
        result = await c.call_tool(name="fail", arguments={"kind": "tool"})
        assert result.is_error is True and result.content[0].text == "the tool says no"
        result = await c.call_tool(name="fail", arguments={"kind": "other"})
        assert result.is_error is True
        assert (
            result.content[0].text
            == "Error executing tool fail (an unexpected error; the server's log has the details)"
        )
        with pytest.raises(McpError) as raised:
            await c.call_tool(name="fail", arguments={"kind": "protocol"})
        assert raised.value.code == -32602 and raised.value.message == "a protocol error"


@pytest.mark.parametrize("version", VERSIONS)
async def test_output_that_violates_the_return_type(version: str) -> None:
    async with client(version) as c:
        with pytest.raises(McpError) as raised:
            await c.call_tool(name="liar")
    assert raised.value.code == -32603
    assert "tool 'liar' returned a value that does not match its return type" in raised.value.message
    assert "celsius: Field required" in raised.value.message


# -- asking the client: one handler, every version ------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
async def test_elicitation_in_a_tool(version: str) -> None:
    async with client(version) as c:
        if not elicits(version):
            with pytest.raises(McpError) as raised:
                await c.call_tool(name="delete", arguments={"path": "/tmp/x"})
            assert f"the client speaks MCP {version}, which has no elicitation/create" in raised.value.message
            return
        result = await c.call_tool(name="delete", arguments={"path": "/tmp/x"})
        assert result.is_error is None and result.content[0].text == "deleted /tmp/x"
        result = await c.call_tool(name="confirm", arguments={"question": "Sure?"})
        assert result.content[0].text == "accept: True"
        result = await c.call_tool(name="confirm", arguments={"question": "Nope?"})
        assert result.content[0].text == "decline"


@pytest.mark.parametrize("version", [v for v in VERSIONS if elicits(v)])
async def test_elicitation_outcomes(version: str) -> None:
    async with app.test_client(version, elicit=lambda message, schema: {"ok": False, "reason": "no"}) as c:
        result = await c.call_tool(name="delete", arguments={"path": "a"})
        assert result.content[0].text == "kept a: no"
    async with app.test_client(version, elicit=lambda message, schema: None) as c:
        result = await c.call_tool(name="delete", arguments={"path": "b"})
        assert result.content[0].text == "decline: kept b"
    async with app.test_client(version, elicit=lambda message, schema: {"action": "cancel"}) as c:
        result = await c.call_tool(name="delete", arguments={"path": "c"})
        assert result.content[0].text == "cancel: kept c"
    seen: list[dict[str, Any]] = []

    def record(message: str, schema: dict[str, Any]) -> dict[str, Any]:
        seen.append(schema)
        return {"ok": "yes"}  # not a boolean: refused

    async with app.test_client(version, elicit=record) as c:
        with pytest.raises(McpError) as raised:
            await c.call_tool(name="delete", arguments={"path": "d"})
    assert seen[0]["properties"]["ok"]["type"] == "boolean" and seen[0]["required"] == ["ok"]
    assert "reason" not in seen[0]["required"]
    assert raised.value.code in (-32602, -32603)


@pytest.mark.parametrize("version", [v for v in VERSIONS if elicits(v)])
async def test_elicitation_needs_the_declared_capability(version: str) -> None:
    async with app.test_client(version, sample=haiku) as c:  # no elicit handler: no capability
        with pytest.raises(McpError) as raised:
            await c.call_tool(name="delete", arguments={"path": "x"})
    assert "needs the client capability `elicitation`, which this client did not declare" in raised.value.message
    expected = registry.protocol(version).error_codes.missing_required_client_capability or -32603
    assert raised.value.code == expected


@pytest.mark.parametrize("version", [v for v in VERSIONS if elicits(v)])
async def test_three_asks_in_sequence(version: str) -> None:
    """Stateless: three input rounds, the handler replayed from the top each time, its log not
    repeated; handshake: three real requests, one run."""
    STEPS.clear()
    logs: list[dict[str, Any]] = []
    async with client(version, on_log=logs.append) as c:
        if version in STATELESS:
            c.session.log_level = "info"
        result = await c.call_tool(name="survey")
    assert result.content[0].text == "Ada | haiku(A haiku for Ada) | file:///a,file:///b"
    rounds = 4 if version in STATELESS else 1
    assert STEPS.count("start") == rounds
    assert [entry["data"] for entry in logs] == ["survey started", "survey done"]


@pytest.mark.parametrize("version", [v for v in VERSIONS if elicits(v)])
async def test_concurrent_asks(version: str) -> None:
    async with client(version) as c:
        result = await c.call_tool(name="together")
    assert result.content[0].text == "Ada & Grace"


async def test_concurrent_asks_share_one_round() -> None:
    """On 2026-07-28 both asks of `together` go out in one InputRequiredResult."""
    seen: list[str] = []

    def answer(message: str, schema: dict[str, Any]) -> dict[str, Any]:
        seen.append(message)
        return {"name": message.rstrip("?")}

    async with app.test_client("2026-07-28", elicit=answer) as c:
        raw = await c.session.session.request(
            "tools/call", {"name": "together", "_meta": c.session.request_meta()}, timeout=10
        )
        assert raw["resultType"] == "input_required"
        assert sorted(raw["inputRequests"]) == ["ask0", "ask1"]
        result = await c.call_tool(name="together")
    assert text_of(result.content[0]) == "First & Second"


async def test_a_handler_that_asks_differently_is_refused() -> None:
    flip = {"n": 0}
    fickle = App("fickle")

    @fickle.tool
    async def ask(ctx: Context) -> str:
        flip["n"] += 1
        first = await ctx.elicit(f"question {flip['n']}", Name)
        second = await ctx.elicit("again", Name)
        return f"{first.action} {second.action}"

    async with fickle.test_client("2026-07-28", elicit=lambda message, schema: {"name": "x"}) as c:
        with pytest.raises(McpError) as raised:
            await c.call_tool(name="ask")
    assert raised.value.code == -32603 and "must ask the same things in the same order" in raised.value.message


async def test_a_stateless_client_of_a_handshake_era_app_gets_a_clear_error() -> None:
    old = App("old", protocol="2025-11-25")

    @old.tool
    async def ask(ctx: Context) -> str:
        return (await ctx.elicit("name?", Name)).action

    async with old.test_client("2025-11-25", elicit=lambda m, s: {"name": "x"}) as c:
        assert text_of((await c.call_tool(name="ask")).content[0]) == "accept"
    async with old.test_client("2026-07-28", elicit=lambda m, s: {"name": "x"}) as c:
        with pytest.raises(McpError) as raised:
            await c.call_tool(name="ask")
    assert "this app is written against MCP 2025-11-25, which has no InputRequiredResult" in raised.value.message


@pytest.mark.parametrize("version", VERSIONS)
async def test_can_ask_tells_in_advance(version: str) -> None:
    probe = App("probe")
    seen: dict[str, bool] = {}

    @probe.tool
    def look(ctx: Context) -> str:
        seen.update(elicit=ctx.can_elicit, sample=ctx.can_sample, roots=ctx.can_list_roots)
        return ctx.protocol_version

    async with probe.test_client(version, sample=haiku) as c:
        assert (await c.call_tool(name="look")).content[0].text == version
    assert seen == {"elicit": False, "sample": True, "roots": False}


@pytest.mark.parametrize("version", VERSIONS)
async def test_progress(version: str) -> None:
    reported: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append((progress, total, message))

    async with client(version) as c:
        with c.session.progress(on_progress):
            result = await c.call_tool(name="steps")
    assert result.content[0].text == "done"
    assert [p for p, _, _ in reported] == [1, 2, 3]
    assert reported[0][1] == 3


# -- resources ------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
async def test_resources(version: str) -> None:
    async with client(version) as c:
        listed = {r.uri: r for r in (await c.list_resources()).resources}
        assert listed["config://app"].mime_type == "application/toml"
        assert listed["config://app"].description == "The configuration"
        if has(version, "Resource", "size"):
            assert listed["config://app"].size == 11
        templates = {t.uri_template: t for t in (await c.list_resource_templates()).resource_templates}
        assert set(templates) == {"users://{user_id}/profile", "files://{+path}", "tree://root{/parts*}"}
        assert templates["users://{user_id}/profile"].mime_type == "application/json"
        text = (await c.read_resource(uri="config://app")).contents[0]
        assert (text.text, text.mime_type) == ("debug=false", "application/toml")
        blob = (await c.read_resource(uri="blob://logo")).contents[0]
        assert blob.mime_type == "application/octet-stream" and blob.blob.startswith("iVBOR")
        profile_json = (await c.read_resource(uri="users://7/profile")).contents[0]
        assert profile_json.text == '{"city":"home of 7","celsius":7.0,"note":null}'
        assert (await c.read_resource(uri="files://a/b%20c.txt")).contents[0].text == "file at a/b c.txt"
        assert (await c.read_resource(uri="tree://root/x/y")).contents[0].text == "x > y"


@pytest.mark.parametrize("version", VERSIONS)
async def test_resource_not_found_in_each_versions_terms(version: str) -> None:
    code = registry.protocol(version).error_codes.resource_not_found or -32602
    async with client(version) as c:
        for uri in ("users://0/profile", "nothing://here"):
            with pytest.raises(McpError) as raised:
                await c.read_resource(uri=uri)
            assert raised.value.code == code, uri
            assert raised.value.data == {"uri": uri}
        with pytest.raises(McpError) as raised:
            await c.read_resource(uri="users://seven/profile")  # matches the template, not its types
    assert raised.value.code == -32602 and "user_id" in raised.value.message


@pytest.mark.parametrize("version", VERSIONS)
async def test_subscriptions_and_updates(version: str) -> None:
    updates: list[Any] = []
    async with client(version, on_notification=lambda method, params: updates.append((method, params))) as c:
        async with anyio.create_task_group() as listening:
            if version in STATELESS:  # the stateless era subscribes on a subscriptions/listen stream
                params = {
                    "notifications": {"resourceSubscriptions": ["config://app"]},
                    "_meta": c.session.request_meta(),
                }
                listening.start_soon(lambda: c.session.session.request("subscriptions/listen", params, timeout=30))
                while not host_for(app.server).listeners:
                    await anyio.sleep(0.01)
            else:
                await c.subscribe_resource(uri="config://app")
            assert await app.resource_updated("config://app") >= 1
            assert await app.resource_updated("blob://logo") == 0  # nobody subscribed
            with anyio.fail_after(5):
                while not any(method == "notifications/resources/updated" for method, _ in updates):
                    await anyio.sleep(0.01)
            listening.cancel_scope.cancel()
    updated = [(m, {k: v for k, v in p.items() if k != "_meta"}) for m, p in updates if m.endswith("updated")]
    assert updated == [("notifications/resources/updated", {"uri": "config://app"})]


# -- prompts and completions ----------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
async def test_prompts(version: str) -> None:
    async with client(version) as c:
        listed = {p.name: p for p in (await c.list_prompts()).prompts}
        arguments = [(a.name, a.required, a.description) for a in listed["chat"].arguments]
        assert arguments == [("topic", True, None), ("turns", False, "how many turns")]
        assert listed["review"].description == "Ask for a code review."
        result = await c.get_prompt(name="review", arguments={"code": "x = 1"})
        assert result.messages[0].role == "user"
        assert result.messages[0].content.text == "Review this python code:\nx = 1"
        result = await c.get_prompt(name="chat", arguments={"topic": "cats", "turns": "3"})
        assert [m.role for m in result.messages] == ["user", "assistant", "user"]
        assert result.messages[1].content.text == "3 turn(s), then"
        assert result.messages[2].content.type == "image"
        assert result.description == "A conversation"
        with pytest.raises(McpError) as raised:
            await c.get_prompt(name="chat", arguments={"turns": "many"})
        assert raised.value.code == -32602
        assert "topic: Field required" in raised.value.message and "turns:" in raised.value.message


@pytest.mark.parametrize("version", VERSIONS)
async def test_completions(version: str) -> None:
    models = registry.load_version(version)
    template_ref = "ResourceTemplateReference" if hasattr(models, "ResourceTemplateReference") else "ResourceReference"
    async with client(version) as c:
        result = await c.complete(
            ref=models.PromptReference(type="ref/prompt", name="review"),
            argument=models.CompleteRequestParamsArgument(name="language", value="p"),
        )
        assert result.completion.values == ["python", "perl"]
        result = await c.complete(
            ref=getattr(models, template_ref)(type="ref/resource", uri="users://{user_id}/profile"),
            argument=models.CompleteRequestParamsArgument(name="user_id", value=""),
        )
        assert len(result.completion.values) == 100
        assert (result.completion.total, result.completion.has_more) == (150, True)
        result = await c.complete(
            ref=models.PromptReference(type="ref/prompt", name="review"),
            argument=models.CompleteRequestParamsArgument(name="code", value="x"),
        )
        assert result.completion.values == []


# -- the registry at run time ---------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
async def test_list_changed_at_run_time(version: str) -> None:
    live = App("live")

    @live.tool
    def first() -> str:
        return "1"

    @live.prompt
    def hello() -> str:
        return "hi"

    seen: list[str] = []
    async with live.test_client(version, on_notification=lambda method, params: seen.append(method)) as c:
        assert [t.name for t in (await c.list_tools()).tools] == ["first"]

        @live.tool
        def second() -> str:
            return "2"

        live.remove_prompt("hello")
        with anyio.fail_after(5):
            while len(seen) < (0 if version in STATELESS else 2):
                await anyio.sleep(0.01)
        assert [t.name for t in (await c.list_tools()).tools] == ["first", "second"]
        assert (await c.call_tool(name="second")).content[0].text == "2"
        assert (await c.list_prompts()).prompts == []
        live.remove_tool("first")
        with pytest.raises(McpError):
            await c.call_tool(name="first")
    if version not in STATELESS:  # a stateless client hears of changes on a subscriptions/listen stream
        assert "notifications/tools/list_changed" in seen and "notifications/prompts/list_changed" in seen


async def test_a_new_kind_after_start_is_refused() -> None:
    live = App("live")

    @live.tool
    def only() -> str:
        return ""

    async with live.test_client():
        with pytest.raises(TypeError, match="already built without prompts"):

            @live.prompt
            def late() -> str:
                return ""


@pytest.mark.parametrize("version", VERSIONS)
async def test_every_list_is_paginated(version: str) -> None:
    paged = App("paged", page_size=3)
    for n in range(7):
        paged.tool(name=f"t{n}")(echo)
        paged.resource(f"r://{n}")(config)
        paged.prompt(name=f"p{n}")(review)
        paged.resource(f"t{n}://{{user_id}}/profile")(profile)
    async with paged.test_client(version) as c:
        for method, key in (
            ("list_tools", "tools"),
            ("list_resources", "resources"),
            ("list_resource_templates", "resource_templates"),
            ("list_prompts", "prompts"),
        ):
            names: list[Any] = []
            cursor = None
            pages = 0
            while True:
                page = await getattr(c, method)(cursor=cursor)
                names += getattr(page, key)
                pages += 1
                cursor = page.next_cursor
                if cursor is None:
                    break
            assert (len(names), pages) == (7, 3), method
        with pytest.raises(McpError) as raised:
            await c.list_tools(cursor="bogus")
        assert raised.value.code == -32602


async def test_capabilities_follow_the_registry() -> None:
    only_tools = App("tools-only", logging=False)

    @only_tools.tool
    def one() -> str:
        return ""

    assert only_tools.server.capabilities == {"tools": {"listChanged": True}}
    assert set(app.server.capabilities) == {"tools", "resources", "prompts", "completions", "logging"}
    assert app.server.capabilities["resources"] == {"listChanged": True, "subscribe": True}


@pytest.mark.parametrize("stub", VERSIONS)
async def test_the_app_on_every_stub_version(stub: str) -> None:
    """The same functions on another version's stub serve the same answers."""
    other = App("other", protocol=stub)
    other.tool(add)
    other.resource("config://app")(config)
    other.prompt(review)
    async with other.test_client("2025-11-25") as c:
        assert text_of((await c.call_tool(name="add", arguments={"a": 1})).content[0]) == '{"result":3}'
        assert text_of((await c.read_resource(uri="config://app")).contents[0]) == "debug=false"
        assert text_of((await c.get_prompt(name="review", arguments={"code": "y"})).messages[0].content).endswith("y")


async def test_sampling_and_roots_results_are_typed() -> None:
    probe = App("probe")
    got: dict[str, Any] = {}

    @probe.tool
    async def ask(ctx: Context) -> str:
        sampled = await ctx.sample([user("hello"), assistant("hi"), "more"], max_tokens=5, system_prompt="be brief")
        got["sampled"] = sampled
        got["roots"] = await ctx.list_roots()
        return sampled.text or ""

    def model(params: dict[str, Any]) -> dict[str, Any]:
        got["params"] = params
        return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m", "stopReason": "endTurn"}

    for version in ("2025-06-18", "2026-07-28"):
        async with probe.test_client(version, sample=model, roots=[{"uri": "file:///r", "name": "r"}]) as c:
            assert (await c.call_tool(name="ask")).content[0].text == "ok"
        assert got["sampled"].model == "m" and got["sampled"].stop_reason == "endTurn"
        assert [(r.uri, r.name) for r in got["roots"]] == [("file:///r", "r")]
        assert [m["role"] for m in got["params"]["messages"]] == ["user", "assistant", "user"]
        assert got["params"]["maxTokens"] == 5 and got["params"]["systemPrompt"] == "be brief"


async def test_declined_is_a_type() -> None:
    probe = App("probe")

    @probe.tool
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("?", Name)
        return type(answer).__name__

    async with probe.test_client("2026-07-28", elicit=lambda m, s: None) as c:
        assert text_of((await c.call_tool(name="ask")).content[0]) == Declined.__name__


async def test_errors_in_a_tools_task_group() -> None:
    probe = App("groups")

    @probe.tool
    async def crowd(ctx: Context) -> str:
        async with anyio.create_task_group() as group:
            group.start_soon(ctx.elicit, "First?", Name)
            group.start_soon(ctx.elicit, "Second?", Name)
        return "asked"

    @probe.tool
    async def broken() -> str:
        async def fail() -> None:
            raise ValueError("inside")

        async with anyio.create_task_group() as group:
            group.start_soon(fail)
        return "never"

    async with probe.test_client("2026-07-28", elicit=answers) as c:
        assert text_of((await c.call_tool(name="crowd")).content[0]) == "asked"
        result = await c.call_tool(name="broken")
    assert result.is_error is True and text_of(result.content[0]).startswith("Error executing tool broken (")


def test_registering_a_new_kind_after_reading_app_server_says_why() -> None:
    """Reading `app.server` builds the server and fixes its capabilities: a later first prompt is
    refused naming that read, not as if the app were serving (issue 45, item 6)."""
    app = App("built")

    @app.tool
    def only() -> str:
        return ""

    assert app.server is not None
    with pytest.raises(AppDefinitionError) as refused:

        @app.prompt
        def late() -> str:
            return ""

    assert str(refused.value) == (
        "the app's server is already built without prompts (by the first read of app.server, or by serving): "
        "register at least one of its prompts before that, as the server's capabilities are fixed when it is "
        "built (they are advertised at the handshake)"
    )
