"""The client side: `initialize`, typed calls gated by the server's capabilities, and answering
what the server asks for through the client's handlers."""

from __future__ import annotations

import contextvars
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeVar

import anyio
import orjson
from pydantic import ValidationError

from . import registry, versions
from .errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, CapabilityError, McpError
from .jsonrpc import Notification, Request, validation_error
from .request_state import MAX_INPUT_ROUNDS
from .session import ProgressCallback, Session
from .spec import MethodSpec, ProtocolTables
from .stubs import ClientHandlerStub, ClientStub
from .transport import Transport

log = logging.getLogger("mcp_bindings.runtime.client")

C = TypeVar("C", bound=ClientStub)

# The progress callback for requests sent by the current task (see `ClientRuntime.progress`).
_on_progress: contextvars.ContextVar[ProgressCallback | None] = contextvars.ContextVar("mcp_on_progress", default=None)


class ProtocolVersionError(McpError):
    """The server answered `initialize` with a version this client does not speak."""

    def __init__(self, offered: Any, supported: list[str]) -> None:
        super().__init__(
            INVALID_PARAMS,
            f"the server chose protocol version {offered!r}, which this client does not support "
            f"(supported: {', '.join(supported)})",
        )


class ClientRuntime:
    """The dispatcher of one client connection."""

    batches_allowed = False

    def __init__(
        self,
        client_cls: type[ClientStub],
        handlers: ClientHandlerStub | None = None,
        *,
        protocol_version: str | None = None,
        client_info: dict[str, Any] | None = None,
        request_timeout: float | None = None,
    ) -> None:
        self.stub: ProtocolTables = client_cls.protocol
        self.stub_version: str = self.stub.version
        self.handlers = handlers
        self.supported = registry.handshake_versions()
        self.stateless_supported = registry.stateless_versions()
        self.requested = protocol_version or self.stub_version
        if self.requested != "auto" and self.requested not in self.supported + self.stateless_supported:
            known = ", ".join(self.supported + self.stateless_supported)
            raise ValueError(f"unknown protocol version {self.requested!r}; known: {known}")
        self.stateless = False
        self.client_info = client_info or {"name": "mcp-bindgen-client", "version": "0.1.0"}
        self.request_timeout = request_timeout
        self.protocol: ProtocolTables | None = None
        self.version: str | None = None
        self.peer_capabilities: dict[str, Any] = {}
        self.server_info: dict[str, Any] = {}
        self.instructions: str | None = None
        self.session: Session | None = None
        # False in a pinned stateless session (no discover probe): the server alone enforces gates.
        self.capabilities_known = False
        self.log_level: str | None = None  # stateless: asks the server for notifications/message
        self.tool_schemas: dict[str, Any] = {}  # from tools/list, for x-mcp-header mirroring
        # Tools whose x-mcp-header annotations are invalid: dropped from tools/list results and
        # never called while the wire mirrors arguments into headers (stateless HTTP).
        self.rejected_tools: set[str] = set()
        self._header_wire = False  # set when an HTTP transport takes the per-message headers

    @property
    def capabilities(self) -> dict[str, Any]:
        return self.handlers.capabilities if self.handlers is not None else {}

    @contextmanager
    def progress(self, callback: ProgressCallback) -> Iterator[None]:
        """Requests the typed client sends inside this block (from this task) carry a progress
        token; the server's `notifications/progress` for them reach `await callback(progress,
        total, message)`:

            with client.session.progress(on_progress):
                await client.call_tool(name="build")
        """
        token = _on_progress.set(callback)
        try:
            yield
        finally:
            _on_progress.reset(token)

    async def start(self, session: Session) -> None:
        """Open the conversation: `initialize` for handshake versions; for the stateless version a
        `server/discover` probe (in "auto" mode, falling back to `initialize` if the server lacks it)."""
        self.session = session
        if self.requested in self.stateless_supported:
            await self._start_stateless(session, self.requested, probe=False)
            return
        if self.requested == "auto" and self.stateless_supported:
            try:
                await self._start_stateless(session, self.stateless_supported[-1], probe=True)
                return
            except McpError as exc:
                log.debug("server/discover failed (%s); falling back to initialize", exc.message)
            self.requested = self.supported[-1]
        await self.initialize(session)

    async def _start_stateless(self, session: Session, version: str, *, probe: bool) -> None:
        self.protocol, self.version, self.stateless = registry.protocol(version), version, True
        self._use_version(session, version)
        if not probe:
            return
        spec = self.protocol.client_requests["server/discover"]
        try:
            raw = await self._stateless_request(spec, None)
        except McpError:
            self.protocol, self.version, self.stateless = None, None, False
            self._use_version(session, None)
            raise
        if isinstance(raw, dict):
            self.capabilities_known = True
            self.peer_capabilities = raw.get("capabilities") or {}
            given = raw.get("_meta")
            meta: dict[str, Any] = given if isinstance(given, dict) else {}
            self.server_info = raw.get("serverInfo") or meta.get(_server_info_key(self.protocol)) or {}
            self.instructions = raw.get("instructions")

    async def initialize(self, session: Session) -> None:
        self.session = session
        params = {"protocolVersion": self.requested, "capabilities": self.capabilities, "clientInfo": self.client_info}
        raw = await session.request("initialize", params, timeout=self.request_timeout)
        offered = raw.get("protocolVersion") if isinstance(raw, dict) else None
        if offered not in self.supported:
            raise ProtocolVersionError(offered, self.supported)
        protocol = registry.protocol(offered)
        try:
            result = versions.validate(protocol.client_requests["initialize"].result, raw)
        except ValidationError as exc:
            raise McpError(
                INTERNAL_ERROR, f"invalid initialize result from the server: {exc.errors()[0]['msg']}"
            ) from None
        self.protocol, self.version = protocol, offered
        self.peer_capabilities = raw.get("capabilities") or {}
        self.capabilities_known = True
        self.server_info = raw.get("serverInfo") or {}
        self.instructions = getattr(result, "instructions", None)
        self._use_version(session, offered)
        await session.notify("notifications/initialized")
        # Streamable HTTP: listen for what the server sends outside any response (requests and
        # notifications not tied to one of ours arrive on the GET stream only).
        if session.transport.features.server_stream:
            await session.transport.open_server_stream()

    def _use_version(self, session: Session, version: str | None) -> None:
        """Tell a transport that carries the version and per-message headers outside the body (HTTP)."""
        transport = session.transport
        if transport.features.message_headers:
            transport.use_version(version, self.http_headers)
            self._header_wire = True

    # -- calls made by the typed client ------------------------------------------------------

    def _negotiated_spec(self, stub_spec: MethodSpec) -> MethodSpec:
        """The negotiated version's spec of a method the typed client sends."""
        if self.protocol is None:
            raise McpError(METHOD_NOT_FOUND, f"{stub_spec.method}: not connected")
        table = self.protocol.client_requests if stub_spec.kind == "request" else self.protocol.client_notifications
        spec = table.get(stub_spec.method)
        if spec is None:
            raise CapabilityError(
                stub_spec.method, f"protocol version {self.stub_version} (the session speaks {self.version})"
            )
        return spec

    def _prepare(self, stub_spec: MethodSpec, spec: MethodSpec, params: Any) -> Any:
        if isinstance(params, dict):
            params = {key: value for key, value in params.items() if value is not None}
        data = versions.dump(params) if params is not None else None
        if self.stateless:
            data = dict(data or {})
            data["_meta"] = {**self._request_meta(), **(data.get("_meta") or {})}
        elif data == {} and not spec.params_required:
            data = None
        for capability in spec.needed_capabilities(data) if self.capabilities_known else ():
            if capability.side == "server" and not capability.present_in(self.peer_capabilities):
                raise CapabilityError(spec.method, str(capability))
        if data is not None and stub_spec.params is not None and self.protocol is self.stub:
            try:
                versions.validate(spec.params, data)  # catch a bad argument here, with its path
            except ValidationError as exc:
                raise validation_error(exc) from None
        return data

    async def call(self, stub_spec: MethodSpec, params: Any) -> Any:
        spec = self._negotiated_spec(stub_spec)
        data = self._prepare(stub_spec, spec, params)
        assert self.session is not None
        rejected = spec.method == "tools/call" and isinstance(data, dict) and data.get("name") in self.rejected_tools
        if rejected and self.mirrors_headers:
            raise McpError(
                INVALID_PARAMS, f"tool {data['name']!r} has invalid x-mcp-header annotations; it must not be called"
            )
        if self.stateless:
            raw = await self._stateless_request(spec, data)
        else:
            raw = await self.session.request(
                spec.method, data, timeout=self.request_timeout, on_progress=_on_progress.get()
            )
        if spec.method == "tools/list" and isinstance(raw, dict):
            raw = self._remember_tools(raw)
        try:
            result = versions.validate(spec.result, raw)
        except ValidationError as exc:
            raise McpError(INTERNAL_ERROR, f"invalid {spec.method} result from the server: {_first(exc)}") from None
        if self.protocol is self.stub:
            return result
        return versions.convert(
            versions.dump(result),
            stub_spec.result,
            what=f"the {spec.method} result",
            source=self.version or "?",
            destination=self.stub_version,
        )

    def _request_meta(self) -> dict[str, Any]:
        """The `_meta` a stateless-era request carries, under the negotiated version's keys."""
        assert self.protocol is not None
        keys = self.protocol.meta
        pairs = (
            (keys.protocol_version, self.version),
            (keys.client_capabilities, self.capabilities),
            (keys.client_info, self.client_info),
            (keys.log_level, self.log_level),
        )
        return {key: value for key, value in pairs if key is not None and value is not None}

    async def _stateless_request(self, spec: MethodSpec, data: Any) -> Any:
        """One stateless request, with its `_meta`, answering `InputRequiredResult` rounds through the
        handlers and retrying (new id, same requestState), and moving to a version the server
        supports when it answers -32022."""
        assert self.session is not None
        params = dict(data or {})
        params["_meta"] = {**self._request_meta(), **(params.get("_meta") or {})}
        switched = False
        for _ in range(MAX_INPUT_ROUNDS + 1):
            try:
                raw = await self.session.request(
                    spec.method, params, timeout=self.request_timeout, on_progress=_on_progress.get()
                )
            except McpError as exc:
                supported = exc.data.get("supported") if isinstance(exc.data, dict) else None
                choice = next((v for v in reversed(self.stateless_supported) if supported and v in supported), None)
                assert self.protocol is not None
                if exc.code != self.protocol.error_codes.unsupported_protocol_version or switched or choice is None:
                    raise
                switched = True
                self.protocol, self.version = registry.protocol(choice), choice
                self._use_version(self.session, choice)
                params["_meta"] = {**params["_meta"], **self._request_meta()}
                continue
            if not (isinstance(raw, dict) and raw.get("resultType") == "input_required"):
                return raw
            params = {key: value for key, value in params.items() if key not in ("inputResponses", "requestState")}
            params["inputResponses"] = await self._answer_input_requests(raw.get("inputRequests") or {})
            if isinstance(raw.get("requestState"), str):
                params["requestState"] = raw["requestState"]
        raise McpError(INTERNAL_ERROR, f"{spec.method}: more than {MAX_INPUT_ROUNDS} rounds of input requests")

    async def _answer_input_requests(self, requests: dict[str, Any]) -> dict[str, Any]:
        responses: dict[str, Any] = {}
        assert self.protocol is not None
        table = self.protocol.input_requests
        for key, ask in requests.items():
            method = ask.get("method") if isinstance(ask, dict) else None
            spec = table.get(method) if isinstance(method, str) else None
            stub_spec = _stub_spec(self.stub, method or "")
            if spec is None or stub_spec is None or self.handlers is None or not self.handlers.implements(stub_spec):
                raise McpError(METHOD_NOT_FOUND, f"the server asked for {method!r}, which this client does not handle")
            raw_params = ask.get("params")
            try:
                params = (
                    versions.validate(stub_spec.params, raw_params)
                    if stub_spec.params is not None and raw_params is not None
                    else raw_params
                )
            except ValidationError as exc:
                raise validation_error(exc) from None
            result = await getattr(self.handlers, stub_spec.handler)(params, _ClientContext(self, None))
            responses[key] = versions.dump(result)
        return responses

    @property
    def mirrors_headers(self) -> bool:
        """Whether requests mirror parts of their body into HTTP headers (the stateless HTTP wire)."""
        return self.stateless and self._header_wire

    def _remember_tools(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Keep each listed tool's input schema (for Mcp-Param-* headers); on a header-mirroring
        wire, drop the tools whose x-mcp-header annotations are invalid, as the spec requires."""
        tools = raw.get("tools")
        if not isinstance(tools, list):
            return raw
        for tool in tools:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                self.tool_schemas[tool["name"]] = tool.get("inputSchema") or {}
        if not self.mirrors_headers:
            return raw
        from .headers import invalid_header_tools

        invalid = invalid_header_tools(tools)
        listed = {t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)}
        self.rejected_tools = (self.rejected_tools - listed) | invalid
        if not invalid:
            return raw
        log.warning("ignoring tools with invalid x-mcp-header annotations: %s", ", ".join(sorted(invalid)))
        return {**raw, "tools": [t for t in tools if not (isinstance(t, dict) and t.get("name") in invalid)]}

    def http_headers(self, message: dict[str, Any]) -> dict[str, str]:
        """Per-message headers of the stateless HTTP wire: Mcp-Method, Mcp-Name, Mcp-Param-*."""
        from .headers import request_headers

        return request_headers(message, self.tool_schemas) if self.stateless else {}

    async def notify(self, stub_spec: MethodSpec, params: Any) -> None:
        spec = self._negotiated_spec(stub_spec)
        data = self._prepare(stub_spec, spec, params)
        for capability in spec.needed_capabilities(data):
            if capability.side == "client" and not capability.present_in(self.capabilities):
                raise CapabilityError(spec.method, str(capability))
        assert self.session is not None
        await self.session.notify(spec.method, data)

    # -- what the server sends ---------------------------------------------------------------

    async def on_request(self, request: Request, session: Session) -> bytes:
        if request.method == "ping":
            return b"{}"
        spec: MethodSpec | None = self.protocol.server_requests.get(request.method) if self.protocol else None
        stub_spec = _stub_spec(self.stub, request.method)
        if spec is None or stub_spec is None or self.handlers is None or not self.handlers.implements(stub_spec):
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
        try:
            params = (
                versions.validate(spec.params, request.params)
                if spec.params is not None and request.params is not None
                else request.params
            )
        except ValidationError as exc:
            raise validation_error(exc) from None
        if self.protocol is not self.stub and stub_spec.params is not None and request.params is not None:
            params = versions.convert(
                request.params,
                stub_spec.params,
                what=request.method,
                source=self.version or "?",
                destination=self.stub_version,
            )
        result = await getattr(self.handlers, stub_spec.handler)(params, _ClientContext(self, request.id))
        if isinstance(result, dict):
            result = versions.validate(stub_spec.result, result)
        if self.protocol is self.stub:
            return versions.to_json(result)
        converted = versions.convert(
            versions.dump(result),
            spec.result,
            what=f"the {spec.method} result",
            source=self.stub_version,
            destination=self.version or "?",
        )
        return orjson.dumps(versions.project(converted, result))

    async def on_notification(self, notification: Notification, session: Session) -> None:
        if self.protocol is None or self.handlers is None:
            return
        spec = self.protocol.server_notifications.get(notification.method)
        stub_spec = self.stub.server_notifications.get(notification.method)
        if spec is None or stub_spec is None or stub_spec.builtin:
            return
        params: Any = notification.params
        target = stub_spec.params
        if target is not None and params is not None:
            params = versions.validate(target, params)
        await getattr(self.handlers, stub_spec.handler)(params, _ClientContext(self, None))


def _server_info_key(protocol: ProtocolTables) -> str:
    """Where a stateless-era result names the server (`_meta` key), or "" in versions without one."""
    return protocol.meta.server_info or ""


def _stub_spec(stub: ProtocolTables, method: str) -> MethodSpec | None:
    return stub.server_requests.get(method) or stub.input_requests.get(method)


def _first(exc: ValidationError) -> str:
    err = exc.errors(include_url=False)[0]
    return f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"


class _ClientContext:
    __slots__ = ("_runtime", "request_id")

    def __init__(self, runtime: ClientRuntime, request_id: Any) -> None:
        self._runtime = runtime
        self.request_id = request_id

    @property
    def protocol_version(self) -> str:
        return self._runtime.version or ""

    @property
    def peer_capabilities(self) -> dict[str, Any]:
        return self._runtime.peer_capabilities


@asynccontextmanager
async def connect(
    transport: Transport,
    client: type[C],
    *,
    handlers: ClientHandlerStub | None = None,
    protocol_version: str | None = None,
    client_info: dict[str, Any] | None = None,
    request_timeout: float | None = None,
) -> AsyncIterator[C]:
    """Run a client session over any transport: initialize, yield the typed client, then close."""
    runtime = ClientRuntime(
        client, handlers, protocol_version=protocol_version, client_info=client_info, request_timeout=request_timeout
    )
    session = Session(transport, runtime)
    try:
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(session.run)
            try:
                with anyio.fail_after(request_timeout or 60):
                    await runtime.start(session)
                yield client(runtime)
            finally:
                task_group.cancel_scope.cancel()
                with anyio.CancelScope(shield=True):
                    await transport.aclose()
    except BaseExceptionGroup as group:
        # The task group is an implementation detail: a failed handshake (McpError, TimeoutError,
        # ConnectionError) or an error in the caller's block comes out as itself, not in a group.
        sole = _sole_exception(group)
        if sole is None:
            raise
        raise sole from None


def _sole_exception(group: BaseExceptionGroup[BaseException]) -> Exception | None:
    """The one ordinary exception a (possibly nested) group holds; None when it holds several."""
    leaves: list[BaseException] = []
    pending: list[BaseException] = [group]
    while pending:
        item = pending.pop()
        if isinstance(item, BaseExceptionGroup):
            pending.extend(item.exceptions)
        else:
            leaves.append(item)
    return leaves[0] if len(leaves) == 1 and isinstance(leaves[0], Exception) else None
