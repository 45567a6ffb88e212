"""A server stub whose handlers answer with wire JSON from one function: what serves a recording to
a client of the other era (`crossed_replay`) and a lock file's surface (`mcp-bindgen mock`) through
the runtime, so the handshake or `server/discover`, the version crossing, the stateless era's
stamping and input rounds, and both transports are the runtime's own.

`answering_server(version, capabilities, identity, answer)`: a stub of `version` offering
`capabilities` (every method they gate gets a handler; `answer` raises `McpError` for what it has no
answer to), identified by `identity` (an `initialize` / `server/discover` result's `serverInfo`
and `instructions`); `answer(method, params, ctx)` gets the params as wire JSON of `version`
(without `_meta`, which the client's era fills) and returns the result as wire JSON of `version`."""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

from pydantic import ValidationError

from mcp_bindings.runtime.protocol import registry, versions
from mcp_bindings.runtime.protocol.context import RequestContext
from mcp_bindings.runtime.protocol.spec import INPUT_REQUIRED, MethodSpec, ProtocolTables
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, McpError
from mcp_bindings.runtime.rpc.jsonrpc import first_problem
from mcp_bindings.runtime.server.stubs import ServerStub

Answer = Callable[[str, dict[str, Any] | None, RequestContext], Awaitable[dict[str, Any]]]


def answering_server(
    version: str,
    capabilities: Mapping[str, Any],
    identity: Mapping[str, Any],
    answer: Answer,
    *,
    validate_tools: bool = False,
) -> ServerStub:
    """See the module. `validate_tools`: check tool arguments and results against the listed schemas
    as any stub-based server does (off for a recording: its answers are what they were)."""
    base: type[ServerStub] = importlib.import_module(registry.load_version(version).__name__ + ".server").Server
    info = cast("Mapping[str, Any]", identity.get("serverInfo") or {})
    body: dict[str, Any] = {
        "declared_capabilities": dict(capabilities),
        "validate_tools": validate_tools,
        "name": str(info.get("name") or "mcp-bindgen-server"),
        "version": str(info.get("version") or "0.0.0"),
        "title": info.get("title"),
        "description": info.get("description"),
        "website_url": info.get("websiteUrl"),
        "icons": info.get("icons"),
        "instructions": identity.get("instructions"),
    }
    for spec in base.protocol.client_requests.values():
        gate = spec.gate
        if spec.builtin or (gate is not None and not gate.present_in(capabilities)):
            continue
        body[spec.handler] = _handler(spec, base.protocol, answer)
    return type("AnsweringServer", (base,), body)()


def _handler(spec: MethodSpec, protocol: ProtocolTables, answer: Answer) -> Any:
    async def handler(self: ServerStub, params: Any, ctx: RequestContext) -> Any:
        data = None if params is None else {k: v for k, v in versions.dump(params).items() if k != "_meta"}
        return typed_result(spec, protocol, await answer(spec.method, data, ctx))

    handler.__name__ = spec.handler
    return handler


def typed_result(spec: MethodSpec, protocol: ProtocolTables, result: dict[str, Any]) -> Any:
    """A result checked as its version's model, or an error saying it is not one. A stateless-era
    result is handed on as the model: the runtime crosses it to a handshake client from the model
    (dropping what that version lacks; an input round bridged into real requests). A handshake-era
    one as the JSON it is, which the runtime takes as a handler's dict (valid in the client's newer
    models as it is): crossed from the model, `crossing.crossed` would drop the keywords of a tool's
    `outputSchema` that 2025-11-25 defines as fields and 2026-07-28 leaves open."""
    asks = result.get("resultType") == INPUT_REQUIRED and protocol.input_required_result is not None
    target = protocol.input_required_result if asks else spec.result
    try:
        typed = versions.validate(target, result)
        return typed if asks or protocol.stateless else result
    except ValidationError as exc:
        raise McpError(
            INTERNAL_ERROR,
            f"the {spec.method} result is not a valid MCP {protocol.version} result: {first_problem(exc)}",
        ) from None
