"""The header checks of a stateless (2026-07-28) POST: `MCP-Protocol-Version`, `Mcp-Method`,
`Mcp-Name` and the `Mcp-Param-*` mirrors of a tool's `x-mcp-header` arguments must agree with the
body, else the request is refused before it runs (HEADER_MISMATCH, HTTP 400)."""

from __future__ import annotations

import itertools
from functools import cache
from typing import Any

import orjson

from mcp_bindings.runtime.protocol import headers as codec
from mcp_bindings.runtime.protocol.registry import newest_stateless
from mcp_bindings.runtime.rpc.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LIMIT_REACHED,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    McpError,
)
from mcp_bindings.runtime.rpc.jsonrpc import Notification, Request
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.rpc.transport import TransportBase
from mcp_bindings.runtime.server.runtime import ServerRuntime

VERSION_HEADER = "mcp-protocol-version"
METHOD_HEADER = "mcp-method"
NAME_HEADER = "mcp-name"
PARAM_HEADER = "mcp-param-"  # + the x-mcp-header name of a tool's parameter (SEP-2243)
MAX_TOOL_PAGES = 100  # bound on tools/list pages read to learn the x-mcp-header annotations


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


def _version_of(meta: dict[str, Any]) -> str:
    """The protocol version a stateless request's `_meta` names ("" when there is no such key)."""
    version_key = _wire()[0]
    return str(meta.get(version_key)) if version_key else ""


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
    key = codec.NAME_PARAM.get(rpc.method)
    if key is None and rpc.method.startswith("tasks/"):  # the tasks extension's routing header (taskId)
        from mcp_bindings.runtime.protocol.tasks_wire import NAME_PARAM as TASK_NAME_PARAM

        key = TASK_NAME_PARAM.get(rpc.method)
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
    session = Session(_ProbeTransport(), runtime)
    session.principal = principal
    for notification in notifications:
        await session.accept(notification)  # a bad one is logged and dropped there (nothing to answer)


class _ProbeTransport(TransportBase):
    """Where the tools/list probe's own messages go: nowhere (its answer is returned, not sent)."""

    async def receive(self) -> bytes:  # pragma: no cover - never read
        raise EOFError

    async def send(self, frame: bytes, related: Any = None) -> None:
        return None

    async def aclose(self) -> None:
        return None


class ToolHeaders:
    """SEP-2243: every `x-mcp-header` parameter of the called tool must be mirrored, exactly, in its
    `Mcp-Param-<Name>` header (plain, or `=?base64?...?=`); absent or null ones must not be.

    The annotations are in the tools' input schemas, which only the server's own `tools/list` has:
    they are read through the runtime (all pages, as the request's version lists them) and cached
    until the server broadcasts a list change."""

    def __init__(self, runtime: ServerRuntime) -> None:
        self._runtime = runtime
        self._session = Session(_ProbeTransport(), runtime)
        self._ids = itertools.count(1)
        # protocol version -> (list generation, tool name -> x-mcp-header params)
        self._cache: dict[str, tuple[int, dict[str, dict[str, str] | None]]] = {}

    async def check(self, headers: dict[str, str], rpc: Request, meta: dict[str, Any] | None) -> None:
        """(`meta`: the request's `stateless_meta`.)"""
        params = rpc.params if isinstance(rpc.params, dict) else {}
        if meta is None or not isinstance(params.get("name"), str):
            return  # not a stateless-era request, or malformed: the runtime answers it
        mappings = self._cached(meta)
        if mappings is None:
            mappings = await self._mappings(meta)
        mapping = mappings.get(params["name"])
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

    def _cached(self, meta: dict[str, Any]) -> dict[str, dict[str, str] | None] | None:
        """`_mappings` as cached for the request's version, if the tool list has not changed since."""
        cached = self._cache.get(_version_of(meta))
        if cached is not None and cached[0] == self._runtime.host.list_generation:
            return cached[1]
        return None

    async def _mappings(self, meta: dict[str, Any]) -> dict[str, dict[str, str] | None]:
        """Tool name -> its `x-mcp-header` parameters (parameter -> header name), read from the
        server's tools/list (all pages) and cached per version until the tool list changes."""
        newest = newest_stateless()
        keys = newest.meta if newest is not None else None
        generation = self._runtime.host.list_generation
        wanted = (keys.protocol_version, keys.client_capabilities, keys.client_info) if keys is not None else ()
        probe_meta = {k: meta[k] for k in wanted if k is not None and k in meta}
        mappings: dict[str, dict[str, str] | None] = {}
        cursor: Any = None
        for _ in range(MAX_TOOL_PAGES):
            params: dict[str, Any] = {"_meta": probe_meta}
            if cursor is not None:
                params["cursor"] = cursor
            probe = Request(id=f"mcp-param-probe-{next(self._ids)}", method="tools/list", params=params, raw={})
            try:
                page = orjson.loads(await self._runtime.on_request(probe, self._session))
            except McpError:
                return {}  # no tools/list (or a client the server refuses): nothing to check against
            for tool in page.get("tools") or []:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    schema = tool.get("inputSchema")
                    mappings[tool["name"]] = codec.header_params(schema) if schema is not None else None
            cursor = page.get("nextCursor")
            if not cursor:
                break
        self._cache[_version_of(meta)] = (generation, mappings)
        return mappings
