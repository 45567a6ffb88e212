"""What a server sends a client of another version (results, notifications, its own requests) is
crossed into that version by the pair's generated crossing table (policy/crossing.json of the
generator decides what the schemas cannot; tests/generator/test_crossing_tables.py fails on a stale
entry): the behaviour of each case end to end (in memory, server and client of different versions)."""

from __future__ import annotations

import importlib
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.protocol import registry, versions
from mcp_bindings.runtime.rpc.errors import McpError, NotExpressible
from tests.support.drill import valid_in

pytestmark = pytest.mark.anyio
PINNED = registry.versions()


def mod(version: str, kind: str) -> Any:
    return importlib.import_module(f"mcp_bindings.{registry.info(version).package}.{kind}")


SAMPLE_CONTENT = {
    "audio": {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
    "resource_link": {"type": "resource_link", "uri": "file:///notes.txt", "name": "notes"},
}


# -- the server's requests, in the client's version ----------------------------------------------


def asking_server(version: str, ask: Any) -> Any:
    """A server of `version` whose tool `ask` sends `ask(ctx, m)` and reports what came back."""
    m = mod(version, "models")

    class Asking(mod(version, "server").Server):  # type: ignore[misc]
        name, version_ = "asking", "1"

        async def list_tools(self, params: Any, ctx: Any) -> Any:
            return m.ListToolsResult(tools=[m.Tool(name="ask", input_schema=m.ToolInputSchema(type="object"))])

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            try:
                answer = await ask(ctx, m)
            except NotExpressible as exc:
                return m.CallToolResult(content=[m.TextContent(text=f"refused: {exc.message}")], is_error=True)
            return m.CallToolResult(content=[m.TextContent(text=f"answer: {type(answer).__name__} {answer}")])

    return Asking()


def recording_handlers(version: str, capabilities: dict[str, Any] | None = None) -> Any:
    m = mod(version, "models")
    base = mod(version, "client").ClientHandlers

    class Recording(base):  # type: ignore[misc, valid-type]
        if capabilities is not None:
            declared_capabilities = capabilities

        def __init__(self) -> None:
            super().__init__()
            self.asked: list[tuple[str, Any]] = []

        async def create_message(self, params: Any, ctx: Any) -> Any:
            self.asked.append(("sampling", versions.dump(params)))
            return m.CreateMessageResult(role="assistant", content=m.TextContent(text="hi"), model="m")

        async def elicit(self, params: Any, ctx: Any) -> Any:
            self.asked.append(("elicitation", versions.dump(params)))
            return m.ElicitResult(action="accept", content={"ok": True})

    return Recording()


async def call_ask(server: Any, client_version: str, handlers: Any) -> str:
    with anyio.fail_after(10):
        async with connect_in_memory(
            server, mod(client_version, "client").Client, handlers=handlers, protocol_version=client_version
        ) as client:
            result = await client.call_tool(name="ask", arguments={})
    return str(result.content[0].text)


def sampling_with_tools(ctx: Any, m: Any) -> Any:
    tool = m.Tool(name="lookup", input_schema=m.ToolInputSchema(type="object"))
    message = m.SamplingMessage(role="user", content=m.TextContent(text="hello"))
    return ctx.request(
        "sampling/createMessage",
        {**_dump(m.CreateMessageRequestParams(messages=[message], max_tokens=10)), "tools": [_dump(tool)]},
    )


def _dump(value: Any) -> Any:
    return versions.dump(value)


async def test_sampling_with_tools_is_refused_for_a_client_without_tools() -> None:
    server = asking_server("2025-11-25", sampling_with_tools)
    handlers = recording_handlers("2025-06-18")
    text = await call_ask(server, "2025-06-18", handlers)
    assert text.startswith("refused: cannot send sampling/createMessage to a client of MCP 2025-06-18: params.tools")
    assert "believe the model had tools" in text  # the policy's reason
    assert handlers.asked == []  # nothing was sent


async def test_sampling_with_tools_needs_the_declared_capability() -> None:
    server = asking_server("2025-11-25", sampling_with_tools)
    handlers = recording_handlers("2025-11-25", {"sampling": {}})
    text = await call_ask(server, "2025-11-25", handlers)
    assert "client capability `sampling.tools`" in text and "did not declare" in text
    handlers = recording_handlers("2025-11-25", {"sampling": {"tools": {}}})
    assert (await call_ask(server, "2025-11-25", handlers)).startswith("answer: CreateMessageResult")
    assert handlers.asked[0][1]["tools"][0]["name"] == "lookup"


def form_elicitation(ctx: Any, m: Any) -> Any:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    return ctx.request("elicitation/create", {"mode": "form", "message": "ok?", "requestedSchema": schema})


def url_elicitation(ctx: Any, m: Any) -> Any:
    return ctx.request(
        "elicitation/create",
        {"mode": "url", "message": "sign in", "url": "https://example.com/x", "elicitationId": "e1"},
    )


async def test_form_elicitation_reaches_a_client_without_modes_without_mode() -> None:
    server = asking_server("2025-11-25", form_elicitation)
    handlers = recording_handlers("2025-06-18")
    text = await call_ask(server, "2025-06-18", handlers)
    assert text.startswith("answer: ElicitResult"), text
    assert handlers.asked == [
        (
            "elicitation",
            {"message": "ok?", "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}},
        )
    ]


async def test_url_elicitation_is_refused_for_a_client_without_url_mode() -> None:
    server = asking_server("2025-11-25", url_elicitation)
    handlers = recording_handlers("2025-06-18")
    text = await call_ask(server, "2025-06-18", handlers)
    assert text.startswith("refused: cannot express elicitation/create params of MCP 2025-11-25 in MCP 2025-06-18")
    assert handlers.asked == []


@pytest.mark.parametrize("client_version", ["2024-11-05", "2025-03-26"])
async def test_elicitation_to_a_client_version_without_it_is_a_clear_error(client_version: str) -> None:
    server = asking_server("2025-06-18", form_elicitation)
    text = await call_ask(server, client_version, recording_handlers(client_version))
    assert text == (
        f"refused: cannot send elicitation/create: the client speaks MCP {client_version}, "
        "which has no elicitation/create"
    )


async def test_an_uncaught_refusal_is_an_internal_error_naming_the_version() -> None:
    m = mod("2025-06-18", "models")

    class Careless(mod("2025-06-18", "server").Server):  # type: ignore[misc]
        name, version = "careless", "1"

        async def list_tools(self, params: Any, ctx: Any) -> Any:
            return m.ListToolsResult(tools=[])

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            await form_elicitation(ctx, m)
            return m.CallToolResult(content=[])

    with anyio.fail_after(10):
        async with connect_in_memory(
            Careless(),
            mod("2025-03-26", "client").Client,
            handlers=recording_handlers("2025-03-26"),
            protocol_version="2025-03-26",
        ) as client:
            with pytest.raises(McpError) as caught:
                await client.call_tool(name="x", arguments={})
    assert caught.value.code == -32603 and "MCP 2025-03-26" in caught.value.message


async def stateless_elicitation(ask: Any) -> dict[str, Any]:
    """What a 2025-11-25 client is asked when a 2026-07-28 tool answers its first call with the
    input request `ask(m)` (an elicitation's params), as the client's handler got it."""
    m = mod("2026-07-28", "models")

    class Stateless(mod("2026-07-28", "server").Server):  # type: ignore[misc]
        name, version = "stateless", "1"

        async def list_tools(self, params: Any, ctx: Any) -> Any:
            return m.ListToolsResult(tools=[])

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            answer = (params.input_responses or {}).get("signin")
            if answer is None:
                request = m.ElicitRequest(method="elicitation/create", params=ask(m))
                return m.InputRequiredResult(input_requests={"signin": request})
            return m.CallToolResult(content=[m.TextContent(text=f"answered {answer.action}")])

    handlers = recording_handlers("2025-11-25", {"elicitation": {"url": {}, "form": {}}})
    with anyio.fail_after(10):
        async with connect_in_memory(
            Stateless(), mod("2025-11-25", "client").Client, handlers=handlers, protocol_version="2025-11-25"
        ) as client:
            result = await client.call_tool(name="signin", arguments={})
    assert result.content[0].text == "answered accept"
    [(kind, asked)] = handlers.asked
    assert kind == "elicitation"
    return asked


async def test_url_elicitation_from_a_stateless_era_server_gets_an_id_for_a_handshake_client() -> None:
    asked = await stateless_elicitation(
        lambda m: m.ElicitRequestURLParams(mode="url", message="sign in", url="https://example.com/s")
    )
    assert asked["url"] == "https://example.com/s"
    assert isinstance(asked["elicitationId"], str) and len(asked["elicitationId"]) >= 16


async def test_form_elicitation_from_a_stateless_era_server_gets_no_id() -> None:
    """The id is made only for the union member that requires it (the generated table's `mode: url`)."""
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    asked = await stateless_elicitation(
        lambda m: m.ElicitRequestFormParams.model_validate(
            {"mode": "form", "message": "ok?", "requestedSchema": schema}
        )
    )
    assert (asked["mode"], asked["message"]) == ("form", "ok?") and "elicitationId" not in asked


# -- results an older client cannot carry -------------------------------------------------------


def content_server(version: str, blocks: list[dict[str, Any]]) -> Any:
    m = mod(version, "models")

    class Content(mod(version, "server").Server):  # type: ignore[misc]
        name, version_ = "content", "1"

        async def list_tools(self, params: Any, ctx: Any) -> Any:
            return m.ListToolsResult(tools=[])

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            return m.CallToolResult.model_validate({"content": blocks})

    return Content()


async def call_content(server: Any, client_version: str) -> list[dict[str, Any]]:
    with anyio.fail_after(10):
        async with connect_in_memory(
            server, mod(client_version, "client").Client, protocol_version=client_version
        ) as client:
            result = await client.call_tool(name="x", arguments={})
    return [versions.dump(block) for block in result.content]


async def test_audio_reaches_a_client_without_audio_as_an_embedded_blob() -> None:
    server = content_server("2025-06-18", [SAMPLE_CONTENT["audio"], {"type": "text", "text": "caption"}])
    blocks = await call_content(server, "2024-11-05")
    assert blocks == [
        {
            "type": "resource",
            "resource": {"uri": "data:audio/wav;base64,UklGRg==", "mimeType": "audio/wav", "blob": "UklGRg=="},
        },
        {"type": "text", "text": "caption"},
    ]
    valid_in("2024-11-05", {}, "CallToolResult", {"content": blocks})  # by the client's own JSON Schema
    assert await call_content(server, "2025-03-26") == [SAMPLE_CONTENT["audio"], {"type": "text", "text": "caption"}]


async def test_a_resource_link_reaches_a_client_without_links_as_text() -> None:
    link = {**SAMPLE_CONTENT["resource_link"], "description": "my notes"}
    blocks = await call_content(content_server("2025-06-18", [link]), "2025-03-26")
    assert blocks == [{"type": "text", "text": "notes: file:///notes.txt (my notes)"}]
    valid_in("2025-03-26", {}, "CallToolResult", {"content": blocks})


# -- error codes -------------------------------------------------------------------------------


def failing_reader(version: str, error: McpError) -> Any:
    m = mod(version, "models")

    class Reader(mod(version, "server").Server):  # type: ignore[misc]
        name, version_ = "reader", "1"

        async def list_resources(self, params: Any, ctx: Any) -> Any:
            return m.ListResourcesResult(resources=[])

        async def read_resource(self, params: Any, ctx: Any) -> Any:
            raise error

    return Reader()


async def read_error(server: Any, client_version: str) -> McpError:
    with anyio.fail_after(10):
        async with connect_in_memory(
            server, mod(client_version, "client").Client, protocol_version=client_version
        ) as client:
            with pytest.raises(McpError) as caught:
                await client.read_resource(uri="file:///missing")
    return caught.value


async def test_resource_not_found_is_invalid_params_for_a_stateless_era_client() -> None:
    error = await read_error(failing_reader("2025-11-25", McpError(-32002, "no such resource")), "2026-07-28")
    assert (error.code, error.message) == (-32602, "no such resource")
    error = await read_error(failing_reader("2025-11-25", McpError(-32002, "no such resource")), "2025-06-18")
    assert error.code == -32002


async def test_unknown_resource_of_a_stateless_era_server_is_resource_not_found_for_older_clients() -> None:
    missing = McpError(-32602, "Resource not found", {"uri": "file:///missing"})
    error = await read_error(failing_reader("2026-07-28", missing), "2025-06-18")
    assert (error.code, error.data) == (-32002, {"uri": "file:///missing"})
    other = await read_error(failing_reader("2026-07-28", McpError(-32602, "bad cursor")), "2025-06-18")
    assert other.code == -32602  # invalid params that are not about an unknown resource stay so


async def test_a_handler_can_ask_whether_its_client_takes_a_request() -> None:
    seen: dict[str, bool] = {}

    async def check(ctx: Any, m: Any) -> Any:
        seen.update({method: ctx.session.allows(method) for method in ("elicitation/create", "roots/list")})
        return "checked"

    await call_ask(asking_server("2025-06-18", check), "2025-03-26", recording_handlers("2025-03-26"))
    assert seen == {"elicitation/create": False, "roots/list": False}
    await call_ask(asking_server("2025-06-18", check), "2025-06-18", recording_handlers("2025-06-18"))
    assert seen == {"elicitation/create": True, "roots/list": False}  # the handlers answer no roots


async def test_a_tools_json_schemas_cross_whole_to_the_other_era() -> None:
    # 2025-11-25 defines `type`, `properties` and `required` of a tool's schemas as fields; 2026-07-28's
    # models hold a JSON Schema as open content. Crossing keeps every keyword of both schemas.
    m = mod("2025-11-25", "models")
    output = {"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]}
    inputs = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

    class Weather(mod("2025-11-25", "server").Server):  # type: ignore[misc]
        name, version_ = "weather", "1"

        async def list_tools(self, params: Any, ctx: Any) -> Any:
            tool = m.Tool(
                name="weather",
                input_schema=m.ToolInputSchema.model_validate(inputs),
                output_schema=m.ToolOutputSchema.model_validate(output),
            )
            return m.ListToolsResult(tools=[tool])

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            return m.CallToolResult(content=[], structured_content={"celsius": 21.5})

    for client_version in ("2026-07-28", "2024-11-05"):
        with anyio.fail_after(10):
            async with connect_in_memory(
                Weather(), mod(client_version, "client").Client, protocol_version=client_version
            ) as client:
                [tool] = (await client.list_tools()).tools
        listed = versions.dump(tool)
        assert listed["inputSchema"] == inputs, client_version
        if client_version == "2026-07-28":
            assert listed["outputSchema"] == output


# -- fields the client's version lacks -----------------------------------------------------------


async def test_fields_the_client_version_lacks_are_left_out_where_the_generated_table_places_them() -> None:
    """A 2025-11-25 prompt list reaching a 2024-11-05 client: the titles and icons 2024-11-05 lacks
    are left out at each place the pair's table names (a prompt, each of its arguments), open
    content (`_meta`) travels, and the result is valid in the client's own schema."""
    m = mod("2025-11-25", "models")

    class Prompts(mod("2025-11-25", "server").Server):  # type: ignore[misc]
        name, version_ = "prompts", "1"

        async def list_prompts(self, params: Any, ctx: Any) -> Any:
            argument = m.PromptArgument(name="city", title="City")
            prompt = m.Prompt(name="weather", title="Weather", arguments=[argument], meta={"acme/k": {"title": "t"}})
            return m.ListPromptsResult(prompts=[prompt])

        async def get_prompt(self, params: Any, ctx: Any) -> Any:
            return m.GetPromptResult(messages=[])

    places = registry.crossing("2025-11-25", "2024-11-05").dropped["ListPromptsResult"]
    assert places[("prompts", "*")] == ("icons", "title")
    assert places[("prompts", "*", "arguments", "*")] == ("title",)
    with anyio.fail_after(10):
        async with connect_in_memory(
            Prompts(), mod("2024-11-05", "client").Client, protocol_version="2024-11-05"
        ) as client:
            listed = versions.dump(await client.list_prompts())
    meta = {"acme/k": {"title": "t"}}  # open content: its keys travel, whatever their names
    assert listed["prompts"] == [{"name": "weather", "arguments": [{"name": "city"}], "_meta": meta}]
    valid_in("2024-11-05", {}, "ListPromptsResult", listed)
