"""The client side of the stateless HTTP wire's header mirroring (SEP-2243), read from the client's
tool catalog (`client.tool_catalog`): what each listed tool's input schema says to mirror, and which
tools must not be used because their annotations are invalid."""

from __future__ import annotations

from typing import Any, cast

from mcp_bindings.runtime.client.tool_catalog import ClientToolCatalog
from mcp_bindings.runtime.protocol.headers import mirrored_headers
from mcp_bindings.runtime.rpc import logs

log = logs.logger("client")


def without_invalid(raw: dict[str, Any], catalog: ClientToolCatalog) -> dict[str, Any]:
    """A tools/list result (already in `catalog`) without the tools whose x-mcp-header annotations
    are invalid, as the spec requires of a header-mirroring wire."""
    tools = raw.get("tools")
    if not isinstance(tools, list):
        return raw
    listed = catalog.tools
    invalid = {
        name
        for t in cast("list[Any]", tools)
        if isinstance(t, dict)
        and isinstance(name := cast("dict[str, Any]", t).get("name"), str)
        and name in listed
        and listed[name].headers is None
    }
    if not invalid:
        return raw
    log.warning("ignoring tools with invalid x-mcp-header annotations: %s", ", ".join(sorted(invalid)))
    kept = [t for t in cast("list[Any]", tools) if not (isinstance(t, dict) and t.get("name") in invalid)]
    return {**raw, "tools": kept}


def refuses(catalog: ClientToolCatalog, data: Any) -> str | None:
    """The name of a tool with invalid annotations that a `tools/call` params object names, else None."""
    name = data.get("name") if isinstance(data, dict) else None
    tool = catalog.last_listed.get(name) if isinstance(name, str) else None
    return name if tool is not None and tool.headers is None else None


def headers(message: dict[str, Any], catalog: ClientToolCatalog) -> dict[str, str]:
    """Per-message headers of the stateless HTTP wire: Mcp-Method, Mcp-Name, Mcp-Param-*."""
    return mirrored_headers(message, lambda name: _header_map(catalog, name))


def _header_map(catalog: ClientToolCatalog, name: str) -> dict[str, str] | None:
    tool = catalog.last_listed.get(name)
    return tool.headers if tool is not None else None
