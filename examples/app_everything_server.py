"""The conformance "everything" server again, written on the authoring layer (`mcp_bindings.runtime.app`).

The same fixtures as examples/everything_server.py (docs/conformance.md has the catalogue), as
decorated functions: no hand-made schemas, results or input-required round trips. Each ask to
the client (`ctx.elicit`, `ctx.sample`, `ctx.list_roots`) is one line that works on every
protocol version: a real request for a handshake-era client, a multi-round-trip request
(`InputRequiredResult` + `requestState`) for a 2026-07-28 one. `key=` only names the ask in
`inputRequests`, where the harness looks for a fixed key.

    python examples/app_everything_server.py --transport http --port 3001   # http://127.0.0.1:3001/mcp
    python examples/app_everything_server.py --transport stdio
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
from typing import Annotated, Any

from pydantic import Field

from mcp_bindings.runtime.app import (
    Accepted,
    App,
    Audio,
    Context,
    Embedded,
    Image,
    Message,
    ToolError,
    user,
)
from mcp_bindings.runtime.errors import INTERNAL_ERROR, McpError

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = base64.b64decode("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")
WATCHED_URI = "test://watched-resource"
TEMPLATE_URI = "test://template/{id}/data"
NAME_FORM: dict[str, Any] = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
OK_FORM: dict[str, Any] = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
CONFIRM_FORM: dict[str, Any] = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}

# The SEP-1613 / SEP-2106 fixture: advertised exactly as written.
JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

app = App(
    "mcp-bindgen-app-everything-server",
    version="1.0.0",
    instructions="Conformance fixtures for the official MCP harness, on the authoring layer (docs/conformance.md).",
)
revision = {"watched": 0}  # bumped by test_trigger_resource_update


# -- tools ------------------------------------------------------------------------------------


@app.tool
def test_simple_text() -> str:
    """Returns a simple text response"""
    return "This is a simple text response for testing."


@app.tool
def test_image_content() -> Image:
    """Returns an image (1x1 PNG)"""
    return Image(PNG)


@app.tool
def test_audio_content() -> Audio:
    """Returns an audio clip (WAV)"""
    return Audio(WAV)


@app.tool
def test_embedded_resource() -> Embedded:
    """Returns an embedded text resource"""
    return Embedded("test://embedded-resource", "This is an embedded resource content.")


@app.tool
def test_multiple_content_types() -> list[str | Image | Embedded]:
    """Returns text, an image and an embedded resource"""
    data = json.dumps({"test": "data", "value": 123})
    return [
        "Multiple content types test:",
        Image(PNG),
        Embedded("test://mixed-content-resource", data, "application/json"),
    ]


@app.tool
async def test_tool_with_logging(ctx: Context) -> str:
    """Emits three log messages while it runs"""
    await ctx.info("Tool execution started")
    await asyncio.sleep(0.05)
    await ctx.info("Tool processing data")
    await asyncio.sleep(0.05)
    await ctx.info("Tool execution completed")
    return "Tool with logging executed successfully"


@app.tool
def test_error_handling() -> str:
    """Always fails (a tool error result, not a protocol error)"""
    raise ToolError("This tool intentionally returns an error for testing")


@app.tool
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50, 100 of 100"""
    for step in (0, 50, 100):
        if step:
            await asyncio.sleep(0.05)
        await ctx.report_progress(step, 100, f"Completed step {step} of 100")
    return "Progress reported"


@app.tool
async def test_sampling(
    prompt: Annotated[str, Field(description="The prompt to send to the LLM")], ctx: Context
) -> str:
    """Asks the client's LLM to complete a prompt (sampling/createMessage)"""
    answer = await ctx.sample(prompt, max_tokens=100, key="completion")
    return f"LLM response: {answer.text}"


@app.tool
async def test_elicitation(
    message: Annotated[str, Field(description="The message to show the user")], ctx: Context
) -> str:
    """Asks the user for information (elicitation/create)"""
    form = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    answer = await ctx.elicit(message, form, key="user_info")
    content = answer.data if isinstance(answer, Accepted) else {}
    return f"User response: action={answer.action}, content={json.dumps(content)}"


@app.tool
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Elicitation whose fields all carry defaults (SEP-1034)"""
    form = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        },
        "required": [],
    }
    answer = await ctx.elicit("Please provide user information", form, key="defaults")
    content = answer.data if isinstance(answer, Accepted) else {}
    return f"Elicitation result: action={answer.action}, content={json.dumps(content)}"


def _titled(kind: str, *pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"const": value, "title": f"{title} {kind}"} for value, title in pairs]


@app.tool
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Elicitation with every enum schema variant (SEP-1330)"""
    values = (("value1", "First"), ("value2", "Second"), ("value3", "Third"))
    options = ["option1", "option2", "option3"]
    form = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "description": "Simple enum without titles", "enum": options},
            "titledSingle": {
                "type": "string",
                "description": "Enum with titled options (oneOf)",
                "oneOf": _titled("Option", *values),
            },
            "legacyEnum": {
                "type": "string",
                "description": "Legacy enum with enumNames",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "description": "Multi-select without titles",
                "items": {"type": "string", "enum": options},
            },
            "titledMulti": {
                "type": "array",
                "description": "Multi-select with titled options",
                "items": {"anyOf": _titled("Choice", *values)},
            },
        },
        "required": [],
    }
    answer = await ctx.elicit("Please select values using different enum schema types", form, key="enums")
    content = answer.data if isinstance(answer, Accepted) else {}
    return f"Elicitation completed: action={answer.action}, content={json.dumps(content)}"


@app.tool(
    input_schema=JSON_SCHEMA_2020_12,
    description="Advertises an inputSchema using JSON Schema 2020-12 keywords (SEP-1613 / SEP-2106)",
)
def json_schema_2020_12_tool(name: str | None = None, phone: str | None = None, email: str | None = None) -> str:
    return f"json_schema_2020_12_tool called with name={name!r}, phone={phone!r}, email={email!r}"


@app.tool(
    input_schema={
        "type": "object",
        "properties": {
            "region": {"type": "string", "description": "Mirrored into Mcp-Param-Region", "x-mcp-header": "Region"}
        },
    },
    description="Mirrors its `region` argument into the Mcp-Param-Region header (SEP-2243)",
)
def test_x_mcp_header(region: str = "<none>") -> str:
    return f"region={region}"


@app.tool
async def test_reconnection(ctx: Context) -> str:
    """Ends its SSE stream mid-call; the result follows once the client resumes (SEP-1699)"""
    await ctx.info("Before disconnect")
    await ctx.raw.close_sse_stream()  # a no-op on stdio and on the stateless wire
    await asyncio.sleep(0.2)  # the client reconnects with GET + Last-Event-ID meanwhile
    await ctx.info("After reconnect")
    return "Reconnection test completed"


# -- 2026-07-28: diagnostics and list changes ---------------------------------------------------


@app.tool
async def test_missing_capability(ctx: Context) -> str:
    """Needs the client's sampling capability (-32021 without it)"""
    answer = await ctx.sample("Say hello", key="probe")  # MissingClientCapability if not declared
    return f"Client declared sampling; it said: {answer.text}"


@app.tool
async def test_streaming_elicitation(ctx: Context) -> str:
    """Asks for input in its result (never as an independent request)"""
    answer = await ctx.elicit("Please confirm", OK_FORM, key="confirm")
    return f"Confirmed: {json.dumps(answer.data if isinstance(answer, Accepted) else None)}"


@app.tool
async def test_logging_tool(ctx: Context) -> str:
    """Logs at info (delivered only when the request asks for a log level)"""
    await ctx.info("test_logging_tool ran")
    return "Logged (if the request asked for logs)"


@app.tool
async def test_trigger_tool_change(ctx: Context) -> str:
    """Changes the tool list and announces it"""
    await ctx.raw.notify("notifications/tools/list_changed")
    return "tool list changed"


@app.tool
async def test_trigger_prompt_change(ctx: Context) -> str:
    """Changes the prompt list and announces it"""
    await ctx.raw.notify("notifications/prompts/list_changed")
    return "prompt list changed"


@app.tool
async def test_trigger_resource_update(ctx: Context) -> str:
    """Announces an update of test://watched-resource to its subscribers"""
    revision["watched"] += 1
    await ctx.raw.notify("notifications/resources/updated", {"uri": WATCHED_URI})
    return f"{WATCHED_URI} is now at revision {revision['watched']}"


# -- 2026-07-28: multi-round-trip requests (SEP-2322), written as plain asks ------------------


@app.tool
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks for the user's name, then greets them"""
    answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
    return f"Hello, {answer.data.get('name')}!" if isinstance(answer, Accepted) else "No name given."


@app.tool
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's LLM a question"""
    answer = await ctx.sample("What is the capital of France?", key="capital_question")
    return f"Model said: {answer.text}"


@app.tool
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Asks the client for its roots"""
    roots = await ctx.list_roots(key="client_roots")
    return f"Client exposed {len(roots)} root(s): {', '.join(r.uri for r in roots)}"


@app.tool
async def test_input_required_result_request_state(ctx: Context) -> str:
    """Round-trips requestState"""
    answer = await ctx.elicit("Please confirm", OK_FORM, key="confirm")
    return f"state-ok: confirmation received ({answer.action})"


@app.tool
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Asks for elicitation, sampling and roots at once"""
    name, greeting, roots = await asyncio.gather(
        ctx.elicit("What is your name?", NAME_FORM, key="user_name"),
        ctx.sample("Generate a greeting", max_tokens=50, key="greeting"),
        ctx.list_roots(key="client_roots"),
    )
    who = name.data.get("name") if isinstance(name, Accepted) else None
    return f"All inputs received: name={who!r}, greeting={greeting.text!r}, roots={len(roots)}"


@app.tool
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """Three rounds: name, then colour, then the answer"""
    name = await ctx.elicit("Step 1: What is your name?", NAME_FORM, key="step1")
    colour_form = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
    colour = await ctx.elicit("Step 2: What is your favorite color?", colour_form, key="step2")
    who = name.data.get("name") if isinstance(name, Accepted) else "someone"
    likes = colour.data.get("color") if isinstance(colour, Accepted) else "nothing"
    return f"{who} likes {likes}."


@app.tool
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Issues a requestState; the runtime rejects altered copies"""
    answer = await ctx.elicit("Please confirm", OK_FORM, key="confirm")
    return f"state-ok: {answer.action}"


@app.tool
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Only asks for what the client declared it can answer"""
    asks: list[Any] = []
    if ctx.can_sample:
        asks.append(ctx.sample("Say hello", max_tokens=50, key="sample"))
    if ctx.can_elicit:
        asks.append(ctx.elicit("What is your name?", NAME_FORM, key="ask"))
    if ctx.can_list_roots:
        asks.append(ctx.list_roots(key="roots"))
    if not asks:
        return "The client declared no capability this tool could use."
    answers = await asyncio.gather(*asks)
    return f"Received {len(answers)} answer(s)"


# -- the io.modelcontextprotocol/tasks extension (SEP-2663) ----------------------------------
# `task=True` lets a call run as a task (whenever the client declared the extension), "required"
# only as one (-32021 otherwise). Asks inside a task wait in its `inputRequests` for tasks/update;
# with `input_first=True` the asks before `ctx.start_task()` are input rounds of the call itself.


@app.tool
def greet(name: str) -> str:
    """Sync-only: greets by name"""
    return f"Hello, {name}!"


@app.tool(task=True)
async def slow_compute(seconds: float = 1, label: str = "") -> str:
    """Task-supporting: sleeps `seconds`, then answers"""
    await asyncio.sleep(min(seconds, 300))
    return f"Computed {label} after {seconds}s"


@app.tool(task="required")
async def failing_job() -> str:
    """Requires a task: reports a tool error after about a second"""
    await asyncio.sleep(1)
    raise ToolError("The job failed")


@app.tool(task=True)
async def protocol_error_job() -> str:
    """Task-supporting: fails with a protocol (JSON-RPC) error"""
    await asyncio.sleep(0.1)
    raise McpError(INTERNAL_ERROR, "protocol_error_job always fails")  # the task ends `failed`


@app.tool(task=True)
async def confirm_delete(ctx: Context, filename: str = "file") -> str:
    """Task-supporting: asks the user to confirm, then 'deletes' the file"""
    answer = await ctx.elicit(f"Delete {filename}?", CONFIRM_FORM, key="confirm")
    return f"Deleted {filename}" if isinstance(answer, Accepted) and answer.data.get("confirm") else f"Kept {filename}"


@app.tool(task=True)
async def multi_input(ctx: Context) -> str:
    """Task-supporting: asks two questions at once"""
    first, second = await asyncio.gather(
        ctx.elicit("First name?", NAME_FORM, key="first"), ctx.elicit("Second name?", NAME_FORM, key="second")
    )
    return "Got " + ", ".join(str(a.data.get("name")) if isinstance(a, Accepted) else "-" for a in (first, second))


@app.tool(task="required", input_first=True)
async def test_tool_with_task(ctx: Context) -> str:
    """Requires a task: asks for a name (an input round), then greets in a task"""
    answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
    await ctx.start_task()  # what follows runs as the task
    await asyncio.sleep(0.2)
    return f"Hello, {answer.data.get('name') if isinstance(answer, Accepted) else 'stranger'}! (from a task)"


# -- prompts ----------------------------------------------------------------------------------


@app.prompt
def test_simple_prompt() -> str:
    """A simple prompt without arguments"""
    return "This is a simple prompt for testing."


@app.prompt
def test_prompt_with_arguments(
    arg1: Annotated[str, Field(description="First test argument")],
    arg2: Annotated[str, Field(description="Second test argument")],
) -> str:
    """A prompt with two required arguments"""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@app.prompt
def test_prompt_with_embedded_resource(
    resourceUri: Annotated[str, Field(description="URI of the resource to embed")],
) -> list[Message]:
    """A prompt that embeds a resource"""
    return [
        user(Embedded(resourceUri, "Embedded resource content for testing.")),
        user("Please process the embedded resource above."),
    ]


@app.prompt
def test_prompt_with_image() -> list[Message]:
    """A prompt that includes an image"""
    return [user(Image(PNG)), user("Please analyze the image above.")]


@app.prompt
async def test_input_required_result_prompt(ctx: Context) -> str:
    """Asks the user for context before producing its messages"""
    form = {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}
    answer = await ctx.elicit("What context should the prompt use?", form, key="user_context")
    return f"Use the following context: {answer.data.get('context') if isinstance(answer, Accepted) else ''}"


@app.complete(prompt="test_prompt_with_arguments", argument="arg1")
def complete_arg1(value: str) -> list[str]:
    return [c for c in ("test", "testValue1", "other") if c.startswith(value)]


@app.complete(prompt="test_prompt_with_arguments", argument="arg2")
def complete_arg2(value: str) -> list[str]:
    return [c for c in ("testValue2", "value") if c.startswith(value)]


# -- resources --------------------------------------------------------------------------------


@app.resource("test://static-text", name="static-text", description="A static text resource")
def static_text() -> str:
    return "This is the content of the static text resource."


@app.resource("test://static-binary", name="static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A static binary resource (1x1 PNG)"""
    return PNG


@app.resource(WATCHED_URI, name="watched-resource", description="A resource clients can subscribe to")
def watched() -> str:
    return f"Watched resource content (revision {revision['watched']})"


@app.resource(TEMPLATE_URI, name="template-data", description="A resource template with an {id} parameter")
def template_data(id: str) -> dict[str, Any]:
    return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}


@app.complete(template=TEMPLATE_URI, argument="id")
def complete_id(value: str) -> list[str]:
    return [c for c in ("123", "456") if c.startswith(value)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transport", choices=("http", "stdio"), default="http")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3001)
    parser.add_argument("--path", default="/mcp")
    parser.add_argument("--log-level", default="warning", help="uvicorn log level (http)")
    args = parser.parse_args(argv)
    if args.transport == "stdio":
        app.run()
    else:
        app.run("http", host=args.host, port=args.port, path=args.path, log_level=args.log_level)


if __name__ == "__main__":
    main()
