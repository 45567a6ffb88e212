"""The client's lenient reading (opt-in: `connect(..., lenient=True)`).

Real servers send content from versions newer than the one they negotiated (a `resource_link` at
2024-11-05, a multi-select enum in an elicitation schema at 2025-06-18). A strict client refuses
such a value, as the negotiated version's models do. A lenient client reads it with the models of
the oldest newer version that accepts it and hands it over as that version's type, so nothing is
silently dropped; a value no version accepts is refused as in strict mode. Each method's first
lenient read is logged as a warning.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ValidationError

from mcp_bindings.runtime.protocol import registry, versions
from mcp_bindings.runtime.rpc import logs

log = logs.logger("client")

Part = Literal["result", "request params"]
_warned: set[tuple[str, str]] = set()


def read_newer(method: str, raw: Any, *, part: Part, version: str) -> Any | None:
    """`raw` (a `method` result, or the params of a server's request) as the first version newer
    than `version` types it; None when no newer version accepts it either."""
    known = list(registry.versions())  # oldest first
    for newer in known[known.index(version) + 1 :] if version in known else ():
        tables = registry.protocol(newer)
        if part == "result":
            spec = tables.client_requests.get(method)
            target = spec.result if spec is not None else None
        else:
            spec = tables.server_requests.get(method) or tables.input_requests.get(method)
            target = spec.params if spec is not None else None
        if target is None:
            continue
        try:
            value = versions.validate(target, raw)
        except ValidationError:
            continue
        if (method, part) not in _warned:
            _warned.add((method, part))
            log.warning(
                "lenient: the %s %s is not valid MCP %s; read as MCP %s (%s)",
                method,
                part,
                version,
                newer,
                type(value).__name__,
            )
        return value
    return None
