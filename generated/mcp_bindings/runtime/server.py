"""Serving: one `ServerRuntime` per connection binds a server object to a session.

The runtime negotiates the version (`initialize`), validates every request once with the
negotiated version's exact models, gates it by the advertised capabilities, converts it to the
version the server was written against, and converts the handler's result back. Which methods
exist, their types and gates all come from the generated tables.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson
from pydantic import BaseModel, ValidationError

from . import versions
from .errors import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, McpError
from .jsonrpc import Notification, Request, validation_error
from .session import Session
from .spec import MethodSpec
from .stubs import ServerStub

log = logging.getLogger("mcp_bindings.runtime.server")

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
EMPTY_RESULT = b"{}"
MAX_INPUT_ROUNDS = 8  # bound on InputRequiredResult rounds bridged for handshake-era clients


class ServerRuntime:
    """The dispatcher of one server connection (stdio process, HTTP session, in-memory pair)."""

    def __init__(self, server: ServerStub, *, supported_versions: list[str] | None = None) -> None:
        self.server = server
        self.stub = server.protocol  # the generated `methods` module the server was written against
        self.stub_version: str = self.stub.PROTOCOL_VERSION
        self.supported = supported_versions or versions.handshake_versions()
        self.protocol: Any = None  # negotiated version's `methods` module
        self.version: str | None = None
        self.initialized = False
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: dict[str, Any] = {}
        self.log_level: str | None = None
        self.advertised: dict[str, Any] = {}
        self.batches_allowed = False
        self.session: Session | None = None

    # -- requests ----------------------------------------------------------------------------

    async def on_request(self, request: Request, session: Session) -> bytes:
        self.session = session
        if self.protocol is None:
            if request.method == "initialize":
                return self._initialize(request)
            if request.method == "ping":
                return EMPTY_RESULT
            raise McpError(INVALID_REQUEST, f"Invalid Request: {request.method} before initialize")
        spec: MethodSpec | None = self.protocol.CLIENT_REQUESTS.get(request.method)
        if spec is None:
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
        if spec.builtin:
            return self._builtin(spec, request)
        self._check_offered(spec)
        params = self._validate_params(spec, request.params)
        stub_spec, stub_params = self._params_to_stub(spec, request.params, params)
        context = ServerRequestContext(self, session, request)
        handler = getattr(self.server, stub_spec.handler)
        result = await handler(stub_params, context)
        return await self._result_bytes(spec, stub_spec, result, request, context)

    def _check_offered(self, spec: MethodSpec) -> None:
        if spec.gate is not None and not spec.gate.present_in(self.advertised):
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {spec.method} (the server does not offer {spec.gate})")

    def _validate_params(self, spec: MethodSpec, params: Any) -> Any:
        if params is None:
            if spec.params_required:
                raise McpError(INVALID_PARAMS, f"Invalid params: {spec.method} requires params")
            return None
        if spec.params is None:
            return params
        try:
            return versions.validate(spec.params, params)
        except ValidationError as exc:
            raise validation_error(exc) from None

    def _params_to_stub(self, spec: MethodSpec, raw: Any, params: Any) -> tuple[MethodSpec, Any]:
        if self.protocol is self.stub:
            return spec, params
        stub_spec = self.stub.CLIENT_REQUESTS.get(spec.method)
        if stub_spec is None or stub_spec.builtin:
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {spec.method}")
        data = dict(raw or {})
        if self.stub.STATELESS:
            # A server written for the stateless era reads protocol metadata from every request;
            # for a handshake-era client that metadata is the session's.
            data["_meta"] = {**self._session_meta(), **(data.get("_meta") or {})}
        if stub_spec.params is None:
            return stub_spec, data
        return stub_spec, versions.convert(
            data, stub_spec.params, what=f"{spec.method} params", source=self.version or "?", destination=self.stub_version
        )

    def _session_meta(self) -> dict[str, Any]:
        return {
            "io.modelcontextprotocol/protocolVersion": self.version,
            "io.modelcontextprotocol/clientCapabilities": self.client_capabilities,
            "io.modelcontextprotocol/clientInfo": self.client_info,
        }

    async def _result_bytes(
        self, spec: MethodSpec, stub_spec: MethodSpec, result: Any, request: Request, context: ServerRequestContext
    ) -> bytes:
        rounds = 0
        while _is_input_required(result) and not self.protocol.STATELESS:
            # A stateless-era handler asked for input; a handshake-era client answers real requests.
            rounds += 1
            if rounds > MAX_INPUT_ROUNDS:
                raise McpError(INTERNAL_ERROR, f"{spec.method}: more than {MAX_INPUT_ROUNDS} rounds of input requests")
            result = await self._bridge_input_round(stub_spec, request, result, context)
        if self.protocol is self.stub:
            expected = spec.result
            if isinstance(result, expected) or (spec.input_required and _is_input_required(result)):
                return versions.to_json(result)
            if isinstance(result, dict):
                try:
                    return versions.to_json(versions.validate(expected, result))
                except ValidationError as exc:
                    log.error("%s handler returned an invalid result: %s", spec.method, exc)
                    raise McpError(INTERNAL_ERROR, f"Internal error: invalid {expected.__name__} from the handler") from None
            log.error("%s handler returned %s, expected %s", spec.method, type(result).__name__, expected.__name__)
            raise McpError(INTERNAL_ERROR, f"Internal error: the {spec.method} handler returned the wrong type")
        data = versions.dump(result)
        converted = versions.convert(
            data, spec.result, what=f"the {spec.method} result", source=self.stub_version, destination=self.version or "?"
        )
        return orjson.dumps(versions.project(converted))

    async def _bridge_input_round(
        self, stub_spec: MethodSpec, request: Request, result: Any, context: ServerRequestContext
    ) -> Any:
        requests = dict(getattr(result, "input_requests", None) or {})
        responses: dict[str, Any] = {}
        for key, ask in requests.items():
            ask_data = versions.dump(ask)
            responses[key] = await context.request(ask_data["method"], ask_data.get("params"), raw=True)
        raw_params = dict(request.params or {})
        raw_params["inputResponses"] = responses
        state = getattr(result, "request_state", None)
        if state is not None:
            raw_params["requestState"] = state
        elif "requestState" in raw_params:
            del raw_params["requestState"]
        _, stub_params = self._params_to_stub(self.protocol.CLIENT_REQUESTS[stub_spec.method], raw_params, None)
        return await getattr(self.server, stub_spec.handler)(stub_params, context)

    # -- lifecycle ---------------------------------------------------------------------------

    def _initialize(self, request: Request) -> bytes:
        params = request.params or {}
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise McpError(INVALID_PARAMS, "Invalid params: params.protocolVersion must be a string")
        version = requested if requested in self.supported else self.supported[-1]
        protocol = versions.methods_of(version)
        spec = protocol.CLIENT_REQUESTS["initialize"]
        try:
            versions.validate(spec.params, params)
        except ValidationError as exc:
            raise validation_error(exc) from None
        self.protocol, self.version = protocol, version
        self.batches_allowed = bool(protocol.BATCHES)
        self.client_capabilities = params.get("capabilities") or {}
        self.client_info = params.get("clientInfo") or {}
        self.advertised = self._capabilities_for(protocol)
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self.advertised,
            "serverInfo": {"name": self.server.name, "version": self.server.version},
        }
        if self.server.instructions:
            result["instructions"] = self.server.instructions
        return orjson.dumps(result)

    def _capabilities_for(self, protocol: Any) -> dict[str, Any]:
        """The server's capabilities limited to what the negotiated version defines and the server implements."""
        known = set(protocol.SERVER_CAPABILITY_PATHS)
        out: dict[str, Any] = {}
        for key, value in self.server.capabilities.items():
            if key not in known:
                continue
            if isinstance(value, dict):
                out[key] = {k: v for k, v in value.items() if f"{key}.{k}" in known or not isinstance(v, bool)}
            else:
                out[key] = value
        if "logging" in known and "logging" not in out:
            out["logging"] = {}  # the runtime implements logging/setLevel for every server
        return out

    def _builtin(self, spec: MethodSpec, request: Request) -> bytes:
        if spec.method == "ping":
            return EMPTY_RESULT
        if spec.method == "initialize":
            raise McpError(INVALID_REQUEST, "Invalid Request: the session is already initialized")
        if spec.method == "logging/setLevel":
            self._check_offered(spec)
            level = (request.params or {}).get("level")
            if level not in LOG_LEVELS:
                raise McpError(INVALID_PARAMS, f"Invalid params: params.level must be one of {', '.join(LOG_LEVELS)}")
            self.log_level = level
            return EMPTY_RESULT
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {spec.method}")

    # -- notifications -----------------------------------------------------------------------

    async def on_notification(self, notification: Notification, session: Session) -> None:
        if self.protocol is None:
            return
        if notification.method == "notifications/initialized":
            self.initialized = True
            return
        spec: MethodSpec | None = self.protocol.CLIENT_NOTIFICATIONS.get(notification.method)
        if spec is None or spec.builtin:
            log.debug("ignoring notification %s", notification.method)
            return
        params = self._validate_params(spec, notification.params)
        stub_spec = self.stub.CLIENT_NOTIFICATIONS.get(spec.method)
        if stub_spec is None or not self.server.implements(stub_spec):
            return
        if self.protocol is not self.stub and stub_spec.params is not None and notification.params is not None:
            params = versions.convert(
                notification.params, stub_spec.params, what=spec.method, source=self.version or "?", destination=self.stub_version
            )
        await getattr(self.server, stub_spec.handler)(params, ServerNotificationContext(self))

    # -- sending -----------------------------------------------------------------------------

    def allows_log(self, level: str) -> bool:
        if "logging" not in self.advertised:
            return False
        if self.log_level is None:
            return True
        return LOG_LEVELS.index(level) >= LOG_LEVELS.index(self.log_level)

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a server notification of the negotiated version, if its capability is advertised."""
        if self.protocol is None or self.session is None:
            raise McpError(INVALID_REQUEST, f"cannot send {method} before initialize")
        spec = self.protocol.SERVER_NOTIFICATIONS.get(method)
        if spec is None:
            raise McpError(METHOD_NOT_FOUND, f"{method} is not a server notification of MCP {self.version}")
        if spec.gate is not None and spec.gate.side == "server" and not spec.gate.present_in(self.advertised):
            raise McpError(METHOD_NOT_FOUND, f"{method} needs the {spec.gate}, which this server does not advertise")
        await self.session.notify(method, versions.dump(params) if params is not None else None)

    async def request(self, method: str, params: Any = None, *, timeout: float | None = None) -> Any:
        """Ask the client (sampling, elicitation, roots); returns the negotiated version's result model."""
        if self.protocol is None or self.session is None:
            raise McpError(INVALID_REQUEST, f"cannot send {method} before initialize")
        spec = self.protocol.SERVER_REQUESTS.get(method)
        if spec is None:
            raise McpError(METHOD_NOT_FOUND, f"{method} is not a server request of MCP {self.version}")
        data = versions.dump(params) if params is not None else None
        for capability in spec.needed_capabilities(data):
            if capability.side == "client" and not capability.present_in(self.client_capabilities):
                raise McpError(METHOD_NOT_FOUND, f"{method} needs the {capability}, which the client did not declare")
        raw = await self.session.request(method, data, timeout=timeout)
        try:
            return versions.validate(spec.result, raw)
        except ValidationError as exc:
            raise McpError(INTERNAL_ERROR, f"the client's {method} result is invalid: {exc.errors()[0]['msg']}") from None


def _is_input_required(result: Any) -> bool:
    return type(result).__name__ == "InputRequiredResult" and isinstance(result, BaseModel)


class ServerRequestContext:
    """The context of one request handler (see `context.RequestContext`)."""

    __slots__ = ("_runtime", "_session", "_request", "_progress_token", "_last_progress")

    def __init__(self, runtime: ServerRuntime, session: Session, request: Request) -> None:
        self._runtime = runtime
        self._session = session
        self._request = request
        meta = (request.params or {}).get("_meta") if isinstance(request.params, dict) else None
        self._progress_token = meta.get("progressToken") if isinstance(meta, dict) else None
        self._last_progress: float | None = None

    @property
    def request_id(self) -> str | int:
        return self._request.id

    @property
    def protocol_version(self) -> str:
        return self._runtime.version or ""

    @property
    def peer_capabilities(self) -> dict[str, Any]:
        return self._runtime.client_capabilities

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        if self._progress_token is None:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            raise ValueError(f"progress must increase: {progress} after {self._last_progress}")
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": self._progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self._session.notify("notifications/progress", params)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}")
        if not self._runtime.allows_log(level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._session.notify("notifications/message", params)

    async def notify(self, method: str, params: Any = None) -> None:
        await self._runtime.notify(method, params)

    async def request(self, method: str, params: Any = None, *, timeout: float | None = None, raw: bool = False) -> Any:
        result = await self._runtime.request(method, params, timeout=timeout)
        return versions.dump(result) if raw else result


class ServerNotificationContext:
    __slots__ = ("_runtime",)

    def __init__(self, runtime: ServerRuntime) -> None:
        self._runtime = runtime

    @property
    def protocol_version(self) -> str:
        return self._runtime.version or ""

    @property
    def peer_capabilities(self) -> dict[str, Any]:
        return self._runtime.client_capabilities
