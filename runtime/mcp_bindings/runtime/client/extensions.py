"""Custom and extension methods, the client's side: the extensions a client declares and the typed
client's calls of custom methods (`ClientRuntime.call_extension` / `notify_extension`). A server's
custom requests and notifications go to the handlers' registered methods in `client.handling`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from mcp_bindings.runtime.client.seam import current_progress
from mcp_bindings.runtime.client.stateless import stateless_request, with_meta
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.protocol.custom_methods import (
    EXTENSIONS,
    CustomMethod,
    peer_declares,
    placed,
    registered,
    typed_result,
    wire_params,
)
from mcp_bindings.runtime.protocol.spec import Kind
from mcp_bindings.runtime.rpc.errors import METHOD_NOT_FOUND, CapabilityError, McpError
from mcp_bindings.runtime.rpc.jsonrpc import json_object

if TYPE_CHECKING:
    from mcp_bindings.runtime.client.runtime import ClientRuntime

__all__ = ["call", "client_capabilities", "notify_server"]

R = TypeVar("R")


def client_capabilities(runtime: ClientRuntime) -> dict[str, Any]:
    """What a client declares (`ClientRuntime.capabilities`): its handlers' capabilities, with the
    extensions placed where the version (negotiated, else requested) wants them."""
    handlers = runtime.handlers
    declared: dict[str, Any] = handlers.capabilities if handlers is not None else {}
    methods = registered(handlers)
    if methods is None and EXTENSIONS not in declared:
        return declared
    protocol = runtime.protocol
    if protocol is None:
        if runtime.requested == "auto":
            return declared
        protocol = registry.protocol(runtime.requested, own=runtime.stub)
    ids = {**json_object(declared.get(EXTENSIONS)), **(methods.extensions if methods is not None else {})}
    return placed(protocol, "client", declared, ids)


# -- the client side -------------------------------------------------------------------------------


def _client_checks(runtime: ClientRuntime, method: CustomMethod[Any, Any], kind: Kind) -> None:
    if method.kind != kind or method.sender != "client":
        raise TypeError(f"{method.method} is a {method.kind} the {method.sender} sends")
    if runtime.protocol is None or runtime.session is None:
        raise McpError(METHOD_NOT_FOUND, f"{method.method}: not connected")
    if runtime.capabilities_known and not peer_declares(runtime.peer_capabilities, method.extension):
        raise CapabilityError(method.method, f"server extension `{method.extension}`")


async def call(runtime: ClientRuntime, method: CustomMethod[Any, R], params: Any = None) -> R:
    """The typed client's call of a custom request (`ClientRuntime.call_extension`)."""
    _client_checks(runtime, method, "request")
    data = wire_params(method, params)
    assert runtime.session is not None
    if runtime.stateless:
        raw = await stateless_request(runtime, method.spec, with_meta(runtime, data), current_progress())
    else:
        raw = await runtime.session.request(
            method.method, data, timeout=runtime.request_timeout, on_progress=current_progress()
        )
    return typed_result(method, raw)


async def notify_server(runtime: ClientRuntime, method: CustomMethod[Any, Any], params: Any = None) -> None:
    """The typed client's custom notification (`ClientRuntime.notify_extension`)."""
    _client_checks(runtime, method, "notification")
    data = wire_params(method, params)
    if runtime.stateless:
        data = with_meta(runtime, data)
    assert runtime.session is not None
    await runtime.session.notify(method.method, data)
