"""The conformance "everything" server, built only on `mcp_bindings` (the newest stub, 2026-07-28).

It exposes every fixture the official conformance harness (@modelcontextprotocol/conformance)
probes: see docs/conformance.md for the catalogue. One server object serves both wire eras; the
runtime converts to and from older protocol versions, and turns the `InputRequiredResult`s the
sampling/elicitation tools return into real server-to-client requests for handshake-era clients.

    python examples/everything_server.py --transport http --port 3001   # http://127.0.0.1:3001/mcp
    python examples/everything_server.py --transport stdio
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio

from mcp_bindings.runtime import registry
from mcp_bindings.runtime.context import RequestContext
from mcp_bindings.runtime.errors import INVALID_PARAMS, McpError
from mcp_bindings.runtime.tasks import TaskContext, run_as_task
from mcp_bindings.runtime.tasks.core.wire import EXTENSION as TASKS_EXTENSION
from mcp_bindings.v2026_07_28 import models as m
from mcp_bindings.v2026_07_28.server import Server

# 1x1 PNG and a minimal (empty) WAV.
PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV_BASE64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

# The SEP-1613 / SEP-2106 fixture: must be advertised exactly as written.
JSON_SCHEMA_2020_12_INPUT_SCHEMA: dict[str, Any] = {
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

TEMPLATE_URI = "test://template/{id}/data"
TEMPLATE_PATTERN = re.compile(r"^test://template/(?P<id>[^/]+)/data$")
WATCHED_URI = "test://watched-resource"


def text(value: str) -> m.TextContent:
    return m.TextContent(type="text", text=value)


def image() -> m.ImageContent:
    return m.ImageContent(type="image", data=PNG_BASE64, mime_type="image/png")


def done(*content: m.ContentBlock, is_error: bool | None = None) -> m.CallToolResult:
    return m.CallToolResult(content=list(content), is_error=is_error)


def schema(properties: Mapping[str, Any] | None = None, required: list[str] | None = None) -> m.ToolInputSchema:
    data: dict[str, Any] = {"type": "object", "properties": dict(properties or {})}
    if required:
        data["required"] = required
    return m.ToolInputSchema.model_validate(data)


def elicit(message: str, properties: Mapping[str, Any], required: list[str] | None = None) -> m.ElicitRequest:
    requested: dict[str, Any] = {"type": "object", "properties": dict(properties)}
    if required is not None:
        requested["required"] = required
    return m.ElicitRequest(
        method="elicitation/create",
        params=m.ElicitRequestFormParams(
            message=message, requested_schema=m.ElicitRequestFormParamsRequestedSchema.model_validate(requested)
        ),
    )


def sample(prompt: str, max_tokens: int = 100) -> m.CreateMessageRequest:
    return m.CreateMessageRequest(
        method="sampling/createMessage",
        params=m.CreateMessageRequestParams(
            messages=[m.SamplingMessage(role="user", content=text(prompt))], max_tokens=max_tokens
        ),
    )


def list_roots() -> m.ListRootsRequest:
    return m.ListRootsRequest(method="roots/list")


def ask(requests: Mapping[str, m.InputRequest], state: str | None = None) -> m.InputRequiredResult:
    return m.InputRequiredResult(input_requests=dict(requests), request_state=state)


def elicited(responses: Mapping[str, m.InputResponse] | None, key: str) -> dict[str, Any] | None:
    """The content of an accepted elicitation answer under `key`, else None."""
    answer = (responses or {}).get(key)
    if isinstance(answer, m.ElicitResult) and answer.action == "accept":
        return dict(answer.content or {})
    return None


def sampled(responses: Mapping[str, m.InputResponse] | None, key: str) -> str | None:
    """The text of a sampling answer under `key`, else None."""
    answer = (responses or {}).get(key)
    if not isinstance(answer, m.CreateMessageResult):
        return None
    content = answer.content
    if isinstance(content, m.TextContent):
        return content.text
    return "(non-text sampling response)"


def rooted(responses: Mapping[str, m.InputResponse] | None, key: str) -> list[m.Root] | None:
    answer = (responses or {}).get(key)
    return answer.roots if isinstance(answer, m.ListRootsResult) else None


# -- tools ------------------------------------------------------------------------------------

ToolFn = Callable[
    ["EverythingServer", m.CallToolRequestParams, RequestContext], Awaitable["m.CallToolResult | m.InputRequiredResult"]
]


@dataclass(frozen=True)
class ToolEntry:
    tool: m.Tool
    run: ToolFn


TOOLS: dict[str, ToolEntry] = {}  # insertion order is the advertised (deterministic) order


def tool(name: str, description: str, input_schema: m.ToolInputSchema | None = None) -> Callable[[ToolFn], ToolFn]:
    def register(fn: ToolFn) -> ToolFn:
        TOOLS[name] = ToolEntry(m.Tool(name=name, description=description, input_schema=input_schema or schema()), fn)
        return fn

    return register


@tool("test_simple_text", "Returns a simple text response")
async def _simple_text(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult:
    return done(text("This is a simple text response for testing."))


@tool("test_image_content", "Returns an image (1x1 PNG)")
async def _image_content(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult:
    return done(image())


@tool("test_audio_content", "Returns an audio clip (WAV)")
async def _audio_content(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult:
    return done(m.AudioContent(type="audio", data=WAV_BASE64, mime_type="audio/wav"))


@tool("test_embedded_resource", "Returns an embedded text resource")
async def _embedded_resource(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult:
    resource = m.TextResourceContents(
        uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
    )
    return done(m.EmbeddedResource(type="resource", resource=resource))


@tool("test_multiple_content_types", "Returns text, an image and an embedded resource")
async def _multiple_content_types(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult:
    resource = m.TextResourceContents(
        uri="test://mixed-content-resource",
        mime_type="application/json",
        text=json.dumps({"test": "data", "value": 123}),
    )
    return done(text("Multiple content types test:"), image(), m.EmbeddedResource(type="resource", resource=resource))


@tool("test_tool_with_logging", "Emits three log messages while it runs")
async def _tool_with_logging(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult:
    await ctx.log("info", "Tool execution started")
    await anyio.sleep(0.05)
    await ctx.log("info", "Tool processing data")
    await anyio.sleep(0.05)
    await ctx.log("info", "Tool execution completed")
    return done(text("Tool with logging executed successfully"))


@tool("test_error_handling", "Always fails (a tool error result, not a protocol error)")
async def _error_handling(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult:
    return done(text("This tool intentionally returns an error for testing"), is_error=True)


@tool("test_tool_with_progress", "Reports progress 0, 50, 100 of 100")
async def _tool_with_progress(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult:
    for step in (0, 50, 100):
        if step:
            await anyio.sleep(0.05)
        await ctx.report_progress(step, 100, f"Completed step {step} of 100")
    token = params.meta.progress_token
    return done(text(f"Progress reported (token {token!r})"))


@tool(
    "test_sampling",
    "Asks the client's LLM to complete a prompt (sampling/createMessage)",
    schema({"prompt": {"type": "string", "description": "The prompt to send to the LLM"}}, ["prompt"]),
)
async def _sampling(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult | m.InputRequiredResult:
    answer = sampled(params.input_responses, "completion")
    if answer is not None:
        return done(text(f"LLM response: {answer}"))
    prompt = str((params.arguments or {}).get("prompt", ""))
    return ask({"completion": sample(prompt)})


@tool(
    "test_elicitation",
    "Asks the user for information (elicitation/create)",
    schema({"message": {"type": "string", "description": "The message to show the user"}}, ["message"]),
)
async def _elicitation(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult | m.InputRequiredResult:
    answer = (params.input_responses or {}).get("user_info")
    if isinstance(answer, m.ElicitResult):
        return done(text(f"User response: action={answer.action}, content={json.dumps(answer.content or {})}"))
    message = str((params.arguments or {}).get("message", "Please provide your information"))
    properties = {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    }
    return ask({"user_info": elicit(message, properties, ["username", "email"])})


@tool("test_elicitation_sep1034_defaults", "Elicitation whose fields all carry defaults (SEP-1034)")
async def _elicitation_sep1034_defaults(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult | m.InputRequiredResult:
    answer = (params.input_responses or {}).get("defaults")
    if isinstance(answer, m.ElicitResult):
        return done(text(f"Elicitation result: action={answer.action}, content={json.dumps(answer.content or {})}"))
    properties = {
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
    }
    return ask({"defaults": elicit("Please provide user information", properties, [])})


@tool("test_elicitation_sep1330_enums", "Elicitation with every enum schema variant (SEP-1330)")
async def _elicitation_sep1330_enums(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult | m.InputRequiredResult:
    answer = (params.input_responses or {}).get("enums")
    if isinstance(answer, m.ElicitResult):
        return done(text(f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content or {})}"))
    properties = {
        "untitledSingle": {
            "type": "string",
            "description": "Simple enum without titles",
            "enum": ["option1", "option2", "option3"],
        },
        "titledSingle": {
            "type": "string",
            "description": "Enum with titled options (oneOf)",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
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
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Multi-select with titled options",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    }
    return ask({"enums": elicit("Please select values using different enum schema types", properties, [])})


@tool(
    "json_schema_2020_12_tool",
    "Advertises an inputSchema using JSON Schema 2020-12 keywords (SEP-1613 / SEP-2106)",
    m.ToolInputSchema.model_validate(JSON_SCHEMA_2020_12_INPUT_SCHEMA),
)
async def _json_schema_2020_12(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult:
    return done(text(f"json_schema_2020_12_tool called with {json.dumps(params.arguments or {}, sort_keys=True)}"))


@tool(
    "test_x_mcp_header",
    "Mirrors its `region` argument into the Mcp-Param-Region header (SEP-2243)",
    schema({"region": {"type": "string", "description": "Mirrored into Mcp-Param-Region", "x-mcp-header": "Region"}}),
)
async def _x_mcp_header(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult:
    return done(text(f"region={(params.arguments or {}).get('region', '<none>')}"))


@tool("test_reconnection", "Ends its SSE stream mid-call; the result follows once the client resumes (SEP-1699)")
async def _reconnection(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult:
    await ctx.log("info", "Before disconnect")
    await ctx.close_sse_stream()  # a no-op on stdio and on the stateless wire
    await anyio.sleep(0.2)  # the client reconnects with GET + Last-Event-ID meanwhile
    await ctx.log("info", "After reconnect")
    return done(text("Reconnection test completed"))


# -- 2026-07-28 diagnostics (server-stateless) --------------------------------------------------


@tool("test_missing_capability", "Needs the client's sampling capability (-32021 without it)")
async def _missing_capability(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult | m.InputRequiredResult:
    answer = sampled(params.input_responses, "probe")
    if answer is not None:
        return done(text(f"Client declared sampling; it said: {answer}"))
    # The runtime refuses an input request the client has no capability for: -32021 with
    # data.requiredCapabilities = {"sampling": {}}.
    return ask({"probe": sample("Say hello")})


@tool("test_streaming_elicitation", "Asks for input in its result (never as an independent request)")
async def _streaming_elicitation(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult | m.InputRequiredResult:
    answer = elicited(params.input_responses, "confirm")
    if answer is not None:
        return done(text(f"Confirmed: {json.dumps(answer)}"))
    return ask({"confirm": elicit("Please confirm", {"ok": {"type": "boolean"}}, ["ok"])})


@tool("test_logging_tool", "Logs at info (delivered only when the request asks for a log level)")
async def _logging_tool(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult:
    await ctx.log("info", "test_logging_tool ran")
    return done(text("Logged (if the request asked for logs)"))


@tool("test_trigger_tool_change", "Changes the tool list and announces it")
async def _trigger_tool_change(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult:
    server.generation += 1
    await ctx.notify("notifications/tools/list_changed")
    return done(text("tool list changed"))


@tool("test_trigger_prompt_change", "Changes the prompt list and announces it")
async def _trigger_prompt_change(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult:
    server.generation += 1
    await ctx.notify("notifications/prompts/list_changed")
    return done(text("prompt list changed"))


@tool("test_trigger_resource_update", "Announces an update of test://watched-resource to its subscribers")
async def _trigger_resource_update(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult:
    server.watched_revision += 1
    await ctx.notify("notifications/resources/updated", {"uri": WATCHED_URI})
    return done(text(f"{WATCHED_URI} is now at revision {server.watched_revision}"))


# -- 2026-07-28 multi-round-trip requests (SEP-2322) -------------------------------------------

NAME_PROPERTIES = {"name": {"type": "string", "description": "Your name"}}


@tool("test_input_required_result_elicitation", "Asks for the user's name, then greets them")
async def _irr_elicitation(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult | m.InputRequiredResult:
    answer = elicited(params.input_responses, "user_name")
    name = answer.get("name") if answer is not None else None
    if isinstance(name, str):  # works without requestState: the answer carries everything needed
        return done(text(f"Hello, {name}!"))
    return ask({"user_name": elicit("What is your name?", NAME_PROPERTIES, ["name"])})


@tool("test_input_required_result_sampling", "Asks the client's LLM a question")
async def _irr_sampling(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult | m.InputRequiredResult:
    answer = sampled(params.input_responses, "capital_question")
    if answer is not None:
        return done(text(f"Model said: {answer}"))
    return ask({"capital_question": sample("What is the capital of France?")})


@tool("test_input_required_result_list_roots", "Asks the client for its roots")
async def _irr_list_roots(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult | m.InputRequiredResult:
    roots = rooted(params.input_responses, "client_roots")
    if roots is not None:
        return done(text(f"Client exposed {len(roots)} root(s): {', '.join(r.uri for r in roots)}"))
    return ask({"client_roots": list_roots()})


@tool("test_input_required_result_request_state", "Round-trips requestState")
async def _irr_request_state(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult | m.InputRequiredResult:
    answer = elicited(params.input_responses, "confirm")
    if answer is not None and params.request_state == "request-state-nonce":
        return done(text(f"state-ok: confirmation received ({json.dumps(answer)})"))
    confirm = elicit("Please confirm", {"ok": {"type": "boolean"}}, ["ok"])
    return ask({"confirm": confirm}, "request-state-nonce")


@tool("test_input_required_result_multiple_inputs", "Asks for elicitation, sampling and roots at once")
async def _irr_multiple_inputs(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult | m.InputRequiredResult:
    responses = params.input_responses
    name = elicited(responses, "user_name")
    greeting = sampled(responses, "greeting")
    roots = rooted(responses, "client_roots")
    if name is not None and greeting is not None and roots is not None:
        return done(text(f"All inputs received: name={name.get('name')!r}, greeting={greeting!r}, roots={len(roots)}"))
    return ask(
        {
            "user_name": elicit("What is your name?", NAME_PROPERTIES, ["name"]),
            "greeting": sample("Generate a greeting", 50),
            "client_roots": list_roots(),
        },
        "multiple-inputs",
    )


@tool("test_input_required_result_multi_round", "Three rounds: name, then colour, then the answer")
async def _irr_multi_round(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult | m.InputRequiredResult:
    state: dict[str, Any] = json.loads(params.request_state) if params.request_state else {"step": 0}
    responses = params.input_responses
    if state.get("step") == 1:
        answer = elicited(responses, "step1")
        if answer is not None:
            colour = {"color": {"type": "string", "description": "Your favourite colour"}}
            return ask(
                {"step2": elicit("Step 2: What is your favorite color?", colour, ["color"])},
                json.dumps({"step": 2, "name": answer.get("name")}),
            )
    if state.get("step") == 2:
        answer = elicited(responses, "step2")
        if answer is not None:
            return done(text(f"{state.get('name')} likes {answer.get('color')}."))
    # First round, or a missing/out-of-order answer: start over.
    return ask({"step1": elicit("Step 1: What is your name?", NAME_PROPERTIES, ["name"])}, json.dumps({"step": 1}))


@tool("test_input_required_result_tampered_state", "Issues a requestState; the runtime rejects altered copies")
async def _irr_tampered_state(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult | m.InputRequiredResult:
    if params.request_state is not None:  # only reached with the state as issued (the runtime checks it)
        return done(text(f"state-ok: {params.request_state}"))
    confirm = elicit("Please confirm", {"ok": {"type": "boolean"}}, ["ok"])
    return ask({"confirm": confirm}, "round-1")


@tool("test_input_required_result_capabilities", "Only asks for what the client declared it can answer")
async def _irr_capabilities(
    server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext
) -> m.CallToolResult | m.InputRequiredResult:
    responses = params.input_responses or {}
    if responses:
        return done(text(f"Received {', '.join(sorted(responses))}"))
    declared = ctx.peer_capabilities
    requests: dict[str, m.InputRequest] = {}
    if "sampling" in declared:
        requests["sample"] = sample("Say hello", 50)
    if "elicitation" in declared:
        requests["ask"] = elicit("What is your name?", NAME_PROPERTIES, ["name"])
    if "roots" in declared:
        requests["roots"] = list_roots()
    if not requests:
        return done(text("The client declared no capability this tool could use."))
    return ask(requests, "capability-gated")


# -- tasks: the io.modelcontextprotocol/tasks extension (SEP-2663) ------------------------------
# Task-supporting tools answer with `run_as_task`: a task where the request's client capabilities
# declare the extension, else the work at once (or -32021 where the tool requires a task).


@tool("greet", "Sync-only: greets by name", schema({"name": {"type": "string"}}, ["name"]))
async def _greet(server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext) -> m.CallToolResult:
    return done(text(f"Hello, {(params.arguments or {}).get('name', 'World')}!"))


@tool(
    "slow_compute",
    "Task-supporting: sleeps `seconds`, then answers",
    schema({"seconds": {"type": "number"}, "label": {"type": "string"}}),
)
async def _slow_compute(server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext) -> Any:
    arguments = params.arguments or {}
    seconds = arguments.get("seconds", 1)
    label = arguments.get("label", "")

    async def work(task_ctx: RequestContext) -> m.CallToolResult:
        await anyio.sleep(min(float(seconds), 300.0) if isinstance(seconds, (int, float)) else 1.0)
        return done(text(f"Computed {label!s} after {seconds}s"))

    return await run_as_task(ctx, work)


@tool("failing_job", "Requires a task: reports a tool error after about a second")
async def _failing_job(server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext) -> Any:
    async def work(task_ctx: RequestContext) -> m.CallToolResult:
        await anyio.sleep(1)
        return done(text("The job failed"), is_error=True)

    return await run_as_task(ctx, work, required=True)


@tool("protocol_error_job", "Task-supporting: fails with a protocol (JSON-RPC) error")
async def _protocol_error_job(server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext) -> Any:
    async def work(task_ctx: RequestContext) -> m.CallToolResult:
        await anyio.sleep(0.1)
        raise RuntimeError("protocol_error_job always fails")  # the runtime: failed, -32603

    return await run_as_task(ctx, work)


CONFIRM_PROPERTIES = {"confirm": {"type": "boolean"}}


@tool("confirm_delete", "Task-supporting: asks the user to confirm, then 'deletes' the file")
async def _confirm_delete(server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext) -> Any:
    filename = (params.arguments or {}).get("filename", "file")
    question = elicit(f"Delete {filename}?", CONFIRM_PROPERTIES)

    async def work(task_ctx: RequestContext) -> m.CallToolResult | m.InputRequiredResult:
        if not isinstance(task_ctx, TaskContext):  # not a task (the client lacks the extension): an input round
            answer = elicited(params.input_responses, "confirm")
            if answer is None:
                return ask({"confirm": question})
            confirmed = answer.get("confirm")
        else:  # a task: the question waits in its inputRequests until tasks/update answers it
            reply = await task_ctx.request("elicitation/create", question.params)
            confirmed = getattr(reply, "action", None) == "accept" and (getattr(reply, "content", None) or {}).get(
                "confirm"
            )
        return done(text(f"Deleted {filename}" if confirmed else f"Kept {filename}"))

    return await run_as_task(ctx, work)


@tool("multi_input", "Task-supporting: asks two questions at once")
async def _multi_input(server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext) -> Any:
    async def work(task_ctx: RequestContext) -> m.CallToolResult | m.InputRequiredResult:
        if not isinstance(task_ctx, TaskContext):  # not a task: both questions in one input round
            first, second = elicited(params.input_responses, "first"), elicited(params.input_responses, "second")
            if first is None or second is None:
                return ask(
                    {"first": elicit("First name?", NAME_PROPERTIES), "second": elicit("Second name?", NAME_PROPERTIES)}
                )
            return done(text(f"Got {first.get('name')}, {second.get('name')}"))
        answers: dict[str, Any] = {}

        async def put(key: str, message: str) -> None:
            answers[key] = await task_ctx.request("elicitation/create", elicit(message, NAME_PROPERTIES).params)

        async with anyio.create_task_group() as group:
            group.start_soon(put, "first", "First name?")
            group.start_soon(put, "second", "Second name?")
        names = [str((getattr(answers[k], "content", None) or {}).get("name")) for k in ("first", "second")]
        return done(text(f"Got {', '.join(names)}"))

    return await run_as_task(ctx, work)


@tool("test_tool_with_task", "Requires a task: asks for a name (input round), then greets in a task")
async def _tool_with_task(server: EverythingServer, params: m.CallToolRequestParams, ctx: RequestContext) -> Any:
    answer = elicited(params.input_responses, "user_name")
    name = answer.get("name") if answer is not None else None
    if not isinstance(name, str):
        return ask({"user_name": elicit("What is your name?", NAME_PROPERTIES, ["name"])})

    async def work(task_ctx: RequestContext) -> m.CallToolResult:
        await anyio.sleep(0.2)
        return done(text(f"Hello, {name}! (from a task)"))

    return await run_as_task(ctx, work, required=True)


# -- prompts ----------------------------------------------------------------------------------

PromptFn = Callable[
    ["EverythingServer", m.GetPromptRequestParams, RequestContext],
    Awaitable["m.GetPromptResult | m.InputRequiredResult"],
]


@dataclass(frozen=True)
class PromptEntry:
    prompt: m.Prompt
    run: PromptFn


PROMPTS: dict[str, PromptEntry] = {}


def prompt(
    name: str, description: str, arguments: list[m.PromptArgument] | None = None
) -> Callable[[PromptFn], PromptFn]:
    def register(fn: PromptFn) -> PromptFn:
        PROMPTS[name] = PromptEntry(m.Prompt(name=name, description=description, arguments=arguments), fn)
        return fn

    return register


def user(content: m.ContentBlock) -> m.PromptMessage:
    return m.PromptMessage(role="user", content=content)


@prompt("test_simple_prompt", "A simple prompt without arguments")
async def _simple_prompt(
    server: EverythingServer, params: m.GetPromptRequestParams, ctx: RequestContext
) -> m.GetPromptResult:
    return m.GetPromptResult(messages=[user(text("This is a simple prompt for testing."))])


@prompt(
    "test_prompt_with_arguments",
    "A prompt with two required arguments",
    [
        m.PromptArgument(name="arg1", description="First test argument", required=True),
        m.PromptArgument(name="arg2", description="Second test argument", required=True),
    ],
)
async def _prompt_with_arguments(
    server: EverythingServer, params: m.GetPromptRequestParams, ctx: RequestContext
) -> m.GetPromptResult:
    arguments = params.arguments or {}
    missing = [name for name in ("arg1", "arg2") if name not in arguments]
    if missing:
        raise McpError(INVALID_PARAMS, f"Invalid params: missing required argument(s) {', '.join(missing)}")
    line = f"Prompt with arguments: arg1='{arguments['arg1']}', arg2='{arguments['arg2']}'"
    return m.GetPromptResult(messages=[user(text(line))])


@prompt(
    "test_prompt_with_embedded_resource",
    "A prompt that embeds a resource",
    [m.PromptArgument(name="resourceUri", description="URI of the resource to embed", required=True)],
)
async def _prompt_with_embedded_resource(
    server: EverythingServer, params: m.GetPromptRequestParams, ctx: RequestContext
) -> m.GetPromptResult:
    uri = (params.arguments or {}).get("resourceUri")
    if uri is None:
        raise McpError(INVALID_PARAMS, "Invalid params: missing required argument resourceUri")
    resource = m.TextResourceContents(uri=uri, mime_type="text/plain", text="Embedded resource content for testing.")
    return m.GetPromptResult(
        messages=[
            user(m.EmbeddedResource(type="resource", resource=resource)),
            user(text("Please process the embedded resource above.")),
        ]
    )


@prompt("test_prompt_with_image", "A prompt that includes an image")
async def _prompt_with_image(
    server: EverythingServer, params: m.GetPromptRequestParams, ctx: RequestContext
) -> m.GetPromptResult:
    return m.GetPromptResult(messages=[user(image()), user(text("Please analyze the image above."))])


@prompt("test_input_required_result_prompt", "Asks the user for context before producing its messages")
async def _irr_prompt(
    server: EverythingServer, params: m.GetPromptRequestParams, ctx: RequestContext
) -> m.GetPromptResult | m.InputRequiredResult:
    answer = elicited(params.input_responses, "user_context")
    context = answer.get("context") if answer is not None else None
    if isinstance(context, str):
        return m.GetPromptResult(messages=[user(text(f"Use the following context: {context}"))])
    properties = {"context": {"type": "string", "description": "Context for the prompt"}}
    return ask({"user_context": elicit("What context should the prompt use?", properties, ["context"])})


# -- the server -------------------------------------------------------------------------------


class EverythingServer(Server):
    name = "mcp-bindgen-everything-server"
    version = "1.0.0"
    instructions = "Conformance fixtures for the official MCP harness (see docs/conformance.md)."
    declared_capabilities = {
        "tools": {"listChanged": True},
        "prompts": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "logging": {},  # the runtime answers logging/setLevel and filters ctx.log by it
        "extensions": {TASKS_EXTENSION: {}},  # the runtime serves tasks/get|update|cancel (2026-07-28)
    }
    cache_ttl_ms = 0  # default caching hint; the fixed lists below say more
    cache_scope = "private"

    def __init__(self) -> None:
        super().__init__()
        self.generation = 0  # bumped by the list-change triggers
        self.watched_revision = 0

    # tools

    async def list_tools(self, params: m.PaginatedRequestParams, ctx: RequestContext) -> m.ListToolsResult:
        return m.ListToolsResult(tools=[entry.tool for entry in TOOLS.values()], ttl_ms=60_000, cache_scope="public")

    async def call_tool(
        self, params: m.CallToolRequestParams, ctx: RequestContext
    ) -> m.CallToolResult | m.InputRequiredResult:
        entry = TOOLS.get(params.name)
        if entry is None:
            raise McpError(INVALID_PARAMS, f"Unknown tool: {params.name}", {"name": params.name})
        return await entry.run(self, params, ctx)

    # prompts

    async def list_prompts(self, params: m.PaginatedRequestParams, ctx: RequestContext) -> m.ListPromptsResult:
        return m.ListPromptsResult(
            prompts=[entry.prompt for entry in PROMPTS.values()], ttl_ms=60_000, cache_scope="public"
        )

    async def get_prompt(
        self, params: m.GetPromptRequestParams, ctx: RequestContext
    ) -> m.GetPromptResult | m.InputRequiredResult:
        entry = PROMPTS.get(params.name)
        if entry is None:
            raise McpError(INVALID_PARAMS, f"Unknown prompt: {params.name}", {"name": params.name})
        return await entry.run(self, params, ctx)

    async def complete(self, params: m.CompleteRequestParams, ctx: RequestContext) -> m.CompleteResult:
        ref = params.ref
        candidates: list[str] = []
        if isinstance(ref, m.PromptReference) and ref.name == "test_prompt_with_arguments":
            candidates = {"arg1": ["test", "testValue1", "other"], "arg2": ["testValue2", "value"]}.get(
                params.argument.name, []
            )
        elif isinstance(ref, m.ResourceTemplateReference) and ref.uri == TEMPLATE_URI and params.argument.name == "id":
            candidates = ["123", "456"]
        values = [c for c in candidates if c.startswith(params.argument.value)]
        return m.CompleteResult(completion=m.CompleteResultCompletion(values=values, total=len(values), has_more=False))

    # resources

    RESOURCES: tuple[m.Resource, ...] = (
        m.Resource(
            uri="test://static-text",
            name="static-text",
            description="A static text resource",
            mime_type="text/plain",
        ),
        m.Resource(
            uri="test://static-binary",
            name="static-binary",
            description="A static binary resource (1x1 PNG)",
            mime_type="image/png",
        ),
        m.Resource(
            uri=WATCHED_URI,
            name="watched-resource",
            description="A resource clients can subscribe to",
            mime_type="text/plain",
        ),
    )

    async def list_resources(self, params: m.PaginatedRequestParams, ctx: RequestContext) -> m.ListResourcesResult:
        return m.ListResourcesResult(resources=list(self.RESOURCES), ttl_ms=60_000, cache_scope="public")

    async def list_resource_templates(
        self, params: m.PaginatedRequestParams, ctx: RequestContext
    ) -> m.ListResourceTemplatesResult:
        template = m.ResourceTemplate(
            uri_template=TEMPLATE_URI,
            name="template-data",
            description="A resource template with an {id} parameter",
            mime_type="application/json",
        )
        return m.ListResourceTemplatesResult(resource_templates=[template], ttl_ms=60_000, cache_scope="public")

    async def read_resource(
        self, params: m.ReadResourceRequestParams, ctx: RequestContext
    ) -> m.ReadResourceResult | m.InputRequiredResult:
        uri = params.uri
        contents: m.TextResourceContents | m.BlobResourceContents
        if uri == "test://static-text":
            contents = m.TextResourceContents(
                uri=uri, mime_type="text/plain", text="This is the content of the static text resource."
            )
            return m.ReadResourceResult(contents=[contents], ttl_ms=60_000, cache_scope="public")
        if uri == "test://static-binary":
            contents = m.BlobResourceContents(uri=uri, mime_type="image/png", blob=PNG_BASE64)
            return m.ReadResourceResult(contents=[contents], ttl_ms=60_000, cache_scope="public")
        if uri == WATCHED_URI:
            contents = m.TextResourceContents(
                uri=uri, mime_type="text/plain", text=f"Watched resource content (revision {self.watched_revision})"
            )
            return m.ReadResourceResult(contents=[contents])  # changes: the runtime's default hints (no caching)
        match = TEMPLATE_PATTERN.match(uri)
        if match is not None:
            item_id = match["id"]
            body = json.dumps({"id": item_id, "templateTest": True, "data": f"Data for ID: {item_id}"})
            contents = m.TextResourceContents(uri=uri, mime_type="application/json", text=body)
            return m.ReadResourceResult(contents=[contents], ttl_ms=60_000, cache_scope="public")
        raise resource_not_found(uri, ctx.protocol_version)


def resource_not_found(uri: str, protocol_version: str) -> McpError:
    """-32002 (RESOURCE_NOT_FOUND) where the client's version defines it, else -32602 (SEP-2164)."""
    code = registry.protocol(protocol_version).error_codes.resource_not_found or INVALID_PARAMS
    return McpError(code, f"Resource not found: {uri}", {"uri": uri})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transport", choices=("http", "stdio"), default="http")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3001)
    parser.add_argument("--path", default="/mcp")
    parser.add_argument("--log-level", default="warning", help="uvicorn log level (http)")
    args = parser.parse_args(argv)
    server = EverythingServer()
    if args.transport == "stdio":
        from mcp_bindings.runtime.stdio import serve_stdio

        serve_stdio(server)
    else:
        from mcp_bindings.runtime.http_server import serve_http

        serve_http(server, host=args.host, port=args.port, path=args.path, log_level=args.log_level)


if __name__ == "__main__":
    main()
