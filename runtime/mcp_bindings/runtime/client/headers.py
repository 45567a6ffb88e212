"""The client side of the stateless HTTP wire's header mirroring (SEP-2243), read from the client's
tool catalog (`client.tool_catalog`): what each listed tool's input schema says to mirror, and which
tools must not be used because their annotations are invalid."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from mcp_bindings.runtime.client.seam import OutgoingCall, Send
from mcp_bindings.runtime.client.tool_catalog import ClientToolCatalog
from mcp_bindings.runtime.protocol.headers import mirrored_headers
from mcp_bindings.runtime.protocol.spec import MethodSpec
from mcp_bindings.runtime.protocol.tool_catalog import TOOLS_CALL, TOOLS_LIST
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError

if TYPE_CHECKING:
    from mcp_bindings.runtime.client.runtime import ClientRuntime

log = logs.logger("client")


class HeaderMirroring:
    """The hook (`client.seam`) of a header-mirroring wire (stateless HTTP): a tool whose x-mcp-header
    annotations are invalid is dropped from `tools/list` results and never called."""

    def __init__(self, runtime: ClientRuntime) -> None:
        self._runtime = runtime

    def wrap(self, spec: MethodSpec, send: Send) -> Send:
        if not self._runtime.mirrors_headers:  # known once connected; the chain is built per version
            return send
        catalog = self._runtime.tools
        if spec.method == TOOLS_LIST:

            async def listing(call: OutgoingCall) -> Any:
                raw = await send(call)
                return without_invalid(cast("dict[str, Any]", raw), catalog) if isinstance(raw, dict) else raw

            return listing
        if spec.method == TOOLS_CALL:

            async def calling(call: OutgoingCall) -> Any:
                rejected = refuses(catalog, call.params)
                if rejected is not None:
                    raise McpError(
                        INVALID_PARAMS, f"tool {rejected!r} has invalid x-mcp-header annotations; it must not be called"
                    )
                return await send(call)

            return calling
        return send


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


def headers(message: dict[str, Any], catalog: ClientToolCatalog, routing: Mapping[str, str]) -> dict[str, str]:
    """Per-message headers of the stateless HTTP wire: Mcp-Method, Mcp-Name, Mcp-Param-*
    (`routing`: the negotiated version's `PROTOCOL.routing`)."""
    return mirrored_headers(message, lambda name: getattr(catalog.last_listed.get(name), "headers", None), routing)
