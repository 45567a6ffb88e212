"""The header checks of a stateless (2026-07-28) POST: `MCP-Protocol-Version`, `Mcp-Method`,
`Mcp-Name` and the `Mcp-Param-*` mirrors of a tool's `x-mcp-header` arguments must agree with the
body, else the request is refused before it runs (HEADER_MISMATCH, HTTP 400)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from mcp_bindings.ext.io_modelcontextprotocol_tasks.names import ROUTING as TASK_NAME_PARAM
from mcp_bindings.runtime.protocol import headers as codec
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.protocol.registry import newest_stateless
from mcp_bindings.runtime.rpc.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LIMIT_REACHED,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
)
from mcp_bindings.runtime.rpc.jsonrpc import Notification, Request
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.rpc.transport import TransportBase
from mcp_bindings.runtime.server.host import ServerHost
from mcp_bindings.runtime.server.runtime import ServerRuntime

VERSION_HEADER = "mcp-protocol-version"
METHOD_HEADER = "mcp-method"
NAME_HEADER = "mcp-name"
PARAM_HEADER = "mcp-param-"  # + the x-mcp-header name of a tool's parameter (SEP-2243)


class Refusal(Exception):
    """A stateless request refused before it runs: its JSON-RPC error and HTTP status."""

    def __init__(self, code: int, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


@cache
def _wire() -> tuple[str | None, int]:
    """The newest stateless version's `_meta` key of the protocol version, and its header-mismatch
    error code (INVALID_REQUEST where it has none): what a request is checked against before its
    own version is known. Read for every stateless request: cached."""
    newest = newest_stateless()
    if newest is None:
        return None, INVALID_REQUEST
    code = newest.error_codes.header_mismatch
    return newest.meta.protocol_version, code if code is not None else INVALID_REQUEST


def _mismatch_code() -> int:
    return _wire()[1]


def stateless_status(code: int | None) -> int:
    """The HTTP status that goes with a JSON-RPC error of a stateless request (spec, transports page)."""
    if code is None:
        return 200
    if code == METHOD_NOT_FOUND:
        return 404
    if code == INTERNAL_ERROR:
        return 500
    if code == LIMIT_REACHED:
        return 429
    if code in (INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR):
        return 400
    newest = newest_stateless()
    if newest is not None:
        errors = newest.error_codes
        if code in (
            errors.header_mismatch,
            errors.missing_required_client_capability,
            errors.unsupported_protocol_version,
        ):
            return 400
    return 200


def _routing(version: Any) -> Mapping[str, str]:
    """The request's version's `PROTOCOL.routing` (none for a version this runtime does not know)."""
    try:
        return registry.protocol(str(version)).routing
    except LookupError:
        return {}


def check_headers(headers: dict[str, str], rpc: Request, meta: dict[str, Any] | None) -> None:
    """Raise `Refusal` when the version, method or name headers disagree with the body (`meta`: the
    request's `stateless_meta`)."""
    version_key = _wire()[0]
    header_version = headers.get(VERSION_HEADER)
    meta_version = meta.get(version_key) if meta is not None and version_key else None
    if header_version is not None and meta_version is not None and header_version != meta_version:
        raise Refusal(
            _mismatch_code(),
            f"Header mismatch: MCP-Protocol-Version {header_version!r} but _meta protocolVersion {meta_version!r}",
        )
    method_header = headers.get(METHOD_HEADER)
    if method_header is not None and method_header.strip() != rpc.method:
        raise Refusal(
            _mismatch_code(), f"Header mismatch: Mcp-Method {method_header!r} but the body says {rpc.method!r}"
        )
    if meta_version is None:
        return  # not a stateless-era request: the name header is not checked
    if method_header is None:
        raise Refusal(_mismatch_code(), "Header mismatch: the Mcp-Method header is required")
    # the version's routing (policy/routing.json), else the tasks extension's (Mcp-Name: params.taskId)
    key = _routing(meta_version).get(rpc.method) or TASK_NAME_PARAM.get(rpc.method)
    if key is not None:
        params = rpc.params if isinstance(rpc.params, dict) else {}
        name_header = headers.get(NAME_HEADER)
        value = params.get(key)
        if name_header is None or codec.decode_header_value(name_header) != value:
            raise Refusal(_mismatch_code(), f"Header mismatch: Mcp-Name must equal params.{key} ({value!r})")


async def deliver_notifications(
    runtime: ServerRuntime, headers: dict[str, str], messages: list[Any], principal: str | None
) -> None:
    """A POST of notifications alone (no session): each goes to the server's notification handling
    (a custom or extension notification to its registered handler; its `_meta` says the version).
    An `Mcp-Method` header that names another method refuses the POST (`Refusal`)."""
    notifications = [m for m in messages if isinstance(m, Notification)]
    method_header = headers.get(METHOD_HEADER)
    if method_header is not None and notifications and method_header.strip() != notifications[0].method:
        raise Refusal(
            _mismatch_code(),
            f"Header mismatch: Mcp-Method {method_header!r} but the body says {notifications[0].method!r}",
        )
    if not notifications:
        return
    session = Session(_NoReplies(), runtime)
    session.principal = principal
    for notification in notifications:
        await session.accept(notification)  # a bad one is logged and dropped there (nothing to answer)


class _NoReplies(TransportBase):
    """The transport of a POST of notifications alone: nothing is ever answered on it."""

    async def receive(self) -> bytes:  # pragma: no cover - never read
        raise EOFError

    async def send(self, frame: bytes, related: Any = None) -> None:
        return None

    async def aclose(self) -> None:
        return None


class ToolHeaders:
    """SEP-2243: every `x-mcp-header` parameter of the called tool must be mirrored, exactly, in its
    `Mcp-Param-<Name>` header (plain, or `=?base64?...?=`); absent or null ones must not be.

    The annotations are read from the server host's tool catalog (`ServerHost.tool_catalog`): what
    the authoring layer declared, or what the server's tools/list last showed any client. A tool the
    server never listed (a stub-based server before any client listed its tools) is not checked:
    no client can have learnt its headers from this server either."""

    def __init__(self, host: ServerHost) -> None:
        self._catalog = host.tool_catalog

    def check(self, headers: dict[str, str], rpc: Request, meta: dict[str, Any] | None) -> None:
        """(`meta`: the request's `stateless_meta`.)"""
        params = rpc.params if isinstance(rpc.params, dict) else {}
        name = params.get("name")
        if meta is None or not isinstance(name, str):
            return  # not a stateless-era request, or malformed: the runtime answers it
        tool = self._catalog.tools.get(name)
        mapping = tool.headers if tool is not None else None
        if not mapping:
            return
        given = params.get("arguments")
        arguments: dict[str, Any] = given if isinstance(given, dict) else {}
        mismatch = _mismatch_code()
        for param, header_name in mapping.items():
            raw = headers.get(PARAM_HEADER + header_name.lower())
            value = arguments.get(param)
            header = f"Mcp-Param-{header_name}"
            if value is None:
                if raw is not None:
                    raise Refusal(mismatch, f"Header mismatch: {header} is set but arguments.{param} is absent")
                continue
            if raw is None:
                raise Refusal(mismatch, f"Header mismatch: {header} is required (arguments.{param} is set)")
            decoded = codec.decode_header_value(raw)
            if decoded is None:
                raise Refusal(mismatch, f"Header mismatch: {header} is not valid =?base64?...?= encoding")
            if not codec.header_matches(decoded, value):
                raise Refusal(mismatch, f"Header mismatch: {header} does not equal arguments.{param}")
