"""A stdio server built on the official MCP Python SDK (mcp==2.3.0, low-level `Server`), for the
interop tests: our client drives it. Runs in the SDK's venv, never in the project's.

Tools: echo {text}, sleep {seconds}, progress {steps}, log_all {}, ask_sampling {prompt},
ask_elicitation {}, ask_roots {}, ping_client {}, touch {uri}, change_lists {}, boom {}, state {}.
Resources: 25 (`sdk://r/{i}`), listed 10 per page; subscribe/unsubscribe. Prompts: p0..p2.
Completion over colours. Logging: `logging/setLevel` filters what `log_all` sends.
"""

from __future__ import annotations

import json
import warnings

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

warnings.simplefilter("ignore")  # deprecation warnings of the handshake-era features we exercise

LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
RESOURCES = [types.Resource(uri=f"sdk://r/{i}", name=f"r{i}") for i in range(25)]
PAGE = 10
STATE: dict = {"level": None, "subscriptions": [], "events": [], "roots_changed": 0}


def text(value) -> types.CallToolResult:  # noqa: ANN001
    value = value if isinstance(value, str) else json.dumps(value)
    return types.CallToolResult(content=[types.TextContent(type="text", text=value)])


async def list_tools(ctx, params):  # noqa: ANN001
    names = [
        "echo",
        "sleep",
        "progress",
        "log_all",
        "ask_sampling",
        "ask_elicitation",
        "ask_roots",
        "ping_client",
        "touch",
        "change_lists",
        "boom",
        "state",
    ]
    return types.ListToolsResult(tools=[types.Tool(name=n, input_schema={"type": "object"}) for n in names])


async def call_tool(ctx, params: types.CallToolRequestParams):  # noqa: ANN001
    args = params.arguments or {}
    session = ctx.session
    name = params.name
    if name == "echo":
        return text(str(args.get("text", "")))
    if name == "sleep":
        STATE["events"].append("started")
        try:
            await anyio.sleep(float(args.get("seconds", 1)))
        except anyio.get_cancelled_exc_class():
            STATE["events"].append("cancelled")
            raise
        STATE["events"].append("finished")
        return text("slept")
    if name == "progress":
        steps = int(args.get("steps", 3))
        for i in range(1, steps + 1):
            await session.report_progress(i, steps, f"step {i}")
        return text("done")
    if name == "log_all":
        threshold = LEVELS.index(STATE["level"]) if STATE["level"] else 0
        for level in LEVELS[threshold:]:
            await session.send_log_message(level, {"level": level}, logger="sdk")
        return text("logged")
    if name == "ask_sampling":
        result = await session.create_message(
            messages=[
                types.SamplingMessage(role="user", content=types.TextContent(type="text", text=args.get("prompt", "")))
            ],
            max_tokens=10,
        )
        return text(result.model_dump(mode="json", by_alias=True, exclude_none=True))
    if name == "ask_elicitation":
        result = await session.elicit_form(
            "your name?", {"type": "object", "properties": {"name": {"type": "string"}}}, ctx.request_id
        )
        return text(result.model_dump(mode="json", by_alias=True, exclude_none=True))
    if name == "ask_roots":
        result = await session.list_roots()
        return text(result.model_dump(mode="json", by_alias=True, exclude_none=True))
    if name == "ping_client":
        await session.send_ping()
        return text("pong")
    if name == "touch":
        uri = str(args.get("uri"))
        if uri in STATE["subscriptions"]:
            await session.send_resource_updated(uri)
        return text({"subscribed": uri in STATE["subscriptions"]})
    if name == "change_lists":
        await session.send_tool_list_changed()
        await session.send_prompt_list_changed()
        await session.send_resource_list_changed()
        return text("changed")
    if name == "boom":
        raise RuntimeError("sdk kaboom")
    if name == "state":
        return text(STATE)
    raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool {name!r}")


async def list_resources(ctx, params):  # noqa: ANN001
    cursor = params.cursor if params else None
    try:
        offset = int(cursor) if cursor is not None else 0
    except ValueError:
        raise MCPError(code=types.INVALID_PARAMS, message="bad cursor") from None
    page = RESOURCES[offset : offset + PAGE]
    following = offset + PAGE
    return types.ListResourcesResult(resources=page, next_cursor=str(following) if following < len(RESOURCES) else None)


async def read_resource(ctx, params: types.ReadResourceRequestParams):  # noqa: ANN001
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=params.uri, text=f"sdk content of {params.uri}")]
    )


async def subscribe(ctx, params: types.SubscribeRequestParams):  # noqa: ANN001
    STATE["subscriptions"].append(str(params.uri))
    return types.EmptyResult()


async def unsubscribe(ctx, params: types.UnsubscribeRequestParams):  # noqa: ANN001
    STATE["subscriptions"] = [u for u in STATE["subscriptions"] if u != str(params.uri)]
    return types.EmptyResult()


async def list_prompts(ctx, params):  # noqa: ANN001
    return types.ListPromptsResult(prompts=[types.Prompt(name=f"p{i}") for i in range(3)])


async def get_prompt(ctx, params: types.GetPromptRequestParams):  # noqa: ANN001
    topic = (params.arguments or {}).get("topic", "nothing")
    return types.GetPromptResult(
        messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=f"sdk talks about {topic}"))
        ]
    )


async def complete(ctx, params: types.CompleteRequestParams):  # noqa: ANN001
    values = [c for c in ["red", "green", "blue", "black", "brown"] if c.startswith(params.argument.value)]
    return types.CompleteResult(completion=types.Completion(values=values, total=len(values), has_more=False))


async def set_level(ctx, params: types.SetLevelRequestParams):  # noqa: ANN001
    STATE["level"] = params.level
    return types.EmptyResult()


async def roots_changed(ctx, params):  # noqa: ANN001
    STATE["roots_changed"] += 1


def build() -> Server:
    return Server(
        "sdk-test-server",
        version="2.3.0-test",
        instructions="official SDK peer",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_completion=complete,
        on_set_logging_level=set_level,
        on_roots_list_changed=roots_changed,
    )


async def main() -> None:
    server = build()
    options = server.create_initialization_options(
        NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
    )
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, options)


if __name__ == "__main__":
    anyio.run(main)
