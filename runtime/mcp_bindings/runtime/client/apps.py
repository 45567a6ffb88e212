"""MCP Apps (`io.modelcontextprotocol/ui`) for a Python host: declare the extension, list a server's
apps, read a UI resource, and call tools as the model or as an app's view would.

    handlers = client_handlers(version)            # or your own ClientHandlers
    declare_apps(handlers)                         # capabilities.extensions["io.modelcontextprotocol/ui"]
    async with connect_...(handlers=handlers) as client:
        for app in await list_apps(client):        # the tools that open a UI
            view = await read_ui(client, app.resource_uri)
            ...                                    # render view.html in a sandboxed frame, CSP from view.meta
        result = await call_app_tool(client, "increment", {"value": 1})   # what the view calls

`model_tools` is what a host shows its model: a tool whose visibility lacks "model" is left out
(apps.mdx, Visibility); `call_app_tool` refuses a tool whose visibility lacks "app", as a host must.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

from mcp_bindings.ext.io_modelcontextprotocol_ui import models as ui
from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.pagination import every_page
from mcp_bindings.runtime.protocol.ui_meta import MIME_TYPE, UI, callable_by_app, tool_ui, visible_to_model
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError

__all__ = [
    "AppTool",
    "UiResource",
    "call_app_tool",
    "declare_apps",
    "list_apps",
    "model_tools",
    "read_ui",
]


class _Client(Protocol):
    """What these helpers use of a generated `Client` (any version)."""

    async def list_tools(self, *, cursor: str | None = None) -> Any: ...

    async def read_resource(self, *, uri: str) -> Any: ...

    async def call_tool(self, *, name: str, arguments: dict[str, Any] | None = None) -> Any: ...


@dataclass(frozen=True)
class AppTool:
    """A tool with MCP Apps metadata: the UI it opens (if any) and who may call it."""

    name: str
    resource_uri: str | None
    visibility: tuple[str, ...]  # ("model", "app") when the tool does not say
    tool: Any  # the tool as listed (the client's version's `Tool`)


@dataclass(frozen=True)
class UiResource:
    """A UI resource as read: its HTML and its `_meta.ui` (CSP, permissions, domain, border)."""

    uri: str
    html: str
    meta: ui.McpUiResourceMeta | None


def declare_apps(handlers: Any, mime_types: Sequence[str] = (MIME_TYPE,)) -> None:
    """Declare the extension in the client's capabilities (apps.mdx, Client (Host) Capabilities)."""
    handlers.use_extension(UI, {"mimeTypes": list(mime_types)})


def _meta(tool: Any) -> Mapping[str, Any] | None:
    data: Any = versions.dump(tool)
    return cast("Mapping[str, Any] | None", data.get("_meta")) if isinstance(data, dict) else None


async def _all_tools(client: _Client) -> list[Any]:
    return await every_page(lambda cursor: client.list_tools(cursor=cursor), "tools")


async def list_apps(client: _Client) -> list[AppTool]:
    """The server's tools that carry MCP Apps metadata (a UI to open, or a visibility)."""
    out = []
    for tool in await _all_tools(client):
        found = tool_ui(_meta(tool))
        if found is None:
            continue
        visibility = tuple(found.visibility) if found.visibility is not None else ("model", "app")
        out.append(AppTool(tool.name, found.resource_uri, visibility, tool))
    return out


def model_tools(tools: Sequence[Any]) -> list[Any]:
    """The listed tools a host may show its model: not those only an app may call."""
    return [t for t in tools if visible_to_model(_meta(t))]


async def read_ui(client: _Client, uri: str) -> UiResource:
    """Read a UI resource; refused (-32602) when it is not `text/html;profile=mcp-app` HTML."""
    result = await client.read_resource(uri=uri)
    for item in result.contents:
        data = cast("dict[str, Any]", versions.dump(item))
        if data.get("mimeType") != MIME_TYPE or "text" not in data:
            continue
        raw = cast("Mapping[str, Any]", data.get("_meta") or {}).get("ui")
        meta = ui.McpUiResourceMeta.model_validate(raw) if isinstance(raw, Mapping) else None
        return UiResource(uri, cast("str", data["text"]), meta)
    raise McpError(INVALID_PARAMS, f"{uri} has no {MIME_TYPE} text content: it is not an MCP Apps UI resource")


async def call_app_tool(client: _Client, name: str, arguments: Mapping[str, Any] | None = None) -> Any:
    """Call a tool as an app's view does: refused (-32602, nothing sent) when the tool's visibility
    does not include "app" or the server lists no such tool."""
    tool = next((t for t in await _all_tools(client) if t.name == name), None)
    if tool is None:
        raise McpError(INVALID_PARAMS, f"the server lists no tool {name!r}")
    if not callable_by_app(_meta(tool)):
        raise McpError(INVALID_PARAMS, f'tool {name!r} is not callable by an app (its _meta.ui.visibility lacks "app")')
    return await client.call_tool(name=name, arguments=dict(arguments or {}))
