"""The version bridge of a server: between the version a client speaks and the version the server's
stub was written against.

Params cross into the stub's version (a sealed `requestState` opened on the way); results cross back
into the client's version, stamped with the server's identity and caching policy where the client's
version has them. A stateless-era handler that asks for input (`InputRequiredResult`) is answered,
for a stateless client, by sealing its state into the result; for a handshake-era client, by sending
the input requests as real requests and calling the handler again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from mcp_bindings.runtime.protocol import crossing, versions
from mcp_bindings.runtime.protocol.request_state import MAX_INPUT_ROUNDS, RequestStateSealer
from mcp_bindings.runtime.protocol.spec import INPUT_REQUIRED, MethodSpec, ProtocolTables
from mcp_bindings.runtime.rpc import jsonrpc, logs
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, METHOD_NOT_FOUND, McpError, NotExpressible
from mcp_bindings.runtime.rpc.jsonrpc import Request
from mcp_bindings.runtime.server.peer import PeerView
from mcp_bindings.runtime.server.results_out import ResultWriter
from mcp_bindings.v2026_07_28 import names as v2026

if TYPE_CHECKING:
    from mcp_bindings.runtime.server.context import ServerRequestContext
    from mcp_bindings.runtime.server.stubs import ServerStub

log = logs.logger("bridge")

HandlerCall = Callable[[Any, Any], Awaitable[Any]]  # (typed params, raw params) -> the handler's result
_ROUND = frozenset({v2026.INPUT_RESPONSES, v2026.REQUEST_STATE})  # what a request answering an input round adds


class VersionBridge:
    def __init__(self, server: ServerStub, sealer: RequestStateSealer, writer: ResultWriter) -> None:
        self.server = server
        self.stub = server.protocol
        self.sealer = sealer
        self.writer = writer  # the stub's own results as JSON: checked, stamped for stateless clients

    # -- into the stub's version -------------------------------------------------------------

    def params_to_stub(self, spec: MethodSpec, raw: Any, params: Any, view: PeerView) -> tuple[MethodSpec, Any, int]:
        """The params as the server's stub version types them, with a sealed requestState opened,
        and the round number that state was sealed in (0 for a first request)."""
        round_number = 0
        sealed = raw.get(v2026.REQUEST_STATE) if isinstance(raw, dict) else None
        if isinstance(sealed, str) and spec.input_required:
            # Bound to this method, target and arguments (params but the round's keys) and principal.
            state, round_number = self.sealer.open(spec.method, sealed, params=raw, principal=view.principal)
            raw = {**raw, v2026.REQUEST_STATE: state}
            if params is not None:
                params = versions.validate_params(spec, raw)
        elif not spec.input_required and isinstance(raw, dict) and _ROUND.intersection(raw):
            # The client's version has no input rounds: what it sends under these names is not
            # round state, and must not reach a stateless-era handler as such (unsealed).
            raw = {k: v for k, v in raw.items() if k not in _ROUND}
        if view.protocol is self.stub:
            return spec, params, round_number
        stub_spec = self.stub.client_requests.get(spec.method)
        if stub_spec is None or stub_spec.builtin or not self.server.implements(stub_spec):
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {spec.method}")
        return stub_spec, self._convert_params(spec, stub_spec, dict(raw or {}), view), round_number

    def _convert_params(self, spec: MethodSpec, stub_spec: MethodSpec, data: dict[str, Any], view: PeerView) -> Any:
        if self.stub.stateless:
            # A server written for the stateless era reads protocol metadata from every request;
            # for a handshake-era client that metadata is the session's.
            data["_meta"] = {**view.session_meta(self.stub.meta), **(data.get("_meta") or {})}
        if stub_spec.params is None:
            return data
        return crossing.cross(
            data, stub_spec.params, what=f"{spec.method} params", source=view.version, destination=self.stub.version
        )

    # -- back to the client's version --------------------------------------------------------

    async def settle(
        self,
        spec: MethodSpec,
        stub_spec: MethodSpec,
        request: Request,
        result: Any,
        context: ServerRequestContext,
        view: PeerView,
        round_number: int,
        call: HandlerCall | None = None,
    ) -> bytes:
        """A handler's result -> the result JSON (input rounds bridged for handshake-era clients;
        `call(params, raw_params)` calls the handler again the way the first call went, e.g. through
        the tool schema checks; default: the handler itself)."""
        rounds = 0
        while self.stub.is_input_required(result) and not view.stateless:
            # A stateless-era handler asked for input; a handshake-era client answers real requests.
            rounds += 1
            if rounds > MAX_INPUT_ROUNDS:
                raise McpError(INTERNAL_ERROR, f"{spec.method}: more than {MAX_INPUT_ROUNDS} rounds of input requests")
            result = await self._input_round(spec, stub_spec, request, result, context, view, call)
        return self._result_bytes(spec, result, view, round_number, request.params)

    def _result_bytes(
        self, spec: MethodSpec, result: Any, view: PeerView, round_number: int, request_params: Any
    ) -> bytes:
        if isinstance(result, dict):  # a handler's JSON: its InputRequiredResult where it says it is one
            asks = result.get("resultType") == INPUT_REQUIRED and self.stub.input_required_result is not None
            target = self.stub.input_required_result if asks else spec.result
            result = versions.checked(target, result, f"the result of the {spec.method} handler")
        asks = self.stub.is_input_required(result)
        if asks:
            if not spec.input_required:
                raise McpError(INTERNAL_ERROR, f"Internal error: {spec.method} cannot ask for input")
            result = self._checked_input_required(spec, result, view, round_number, request_params)
        elif view.protocol is self.stub and not isinstance(result, spec.result):
            log.error("%s handler returned %s, expected %s", spec.method, type(result).__name__, spec.result.__name__)
            raise McpError(INTERNAL_ERROR, f"Internal error: the {spec.method} handler returned the wrong type")
        if view.protocol is self.stub and isinstance(result, BaseModel):
            if view.stateless:
                return self.writer.stamped_json(spec.method, result, view)
            return self.writer.result_json(result, f"the {spec.method} result")
        if view.stateless:
            result = self.writer.stamped(result, view)
        if view.protocol is self.stub:
            return versions.to_json(result)
        target = view.protocol.input_required_result if asks else spec.result
        what, source, destination = f"the {spec.method} result", self.stub.version, view.version
        crossed = crossing.crossed(versions.dump(result), target, what=what, source=source, destination=destination)
        return jsonrpc.dumps(crossed)

    def _checked_input_required(
        self, spec: MethodSpec, result: Any, view: PeerView, round_number: int, request_params: Any
    ) -> Any:
        """Refuse input requests the client cannot answer (-32021) and seal the handler's state,
        bound to the request's method, params (`request_state.request_digest`) and principal."""
        missing: dict[str, Any] = {}
        for ask in map(versions.dump, (result.input_requests or {}).values()):
            ask_spec = view.protocol.input_requests.get(ask.get("method"))
            for capability in ask_spec.needed_capabilities(ask.get("params")) if ask_spec is not None else ():
                node = missing
                for key in capability.path if not capability.present_in(view.client_capabilities) else ():
                    node = node.setdefault(key, {})
        if missing:
            code = view.protocol.error_codes.missing_required_client_capability or INTERNAL_ERROR
            raise McpError(
                code,
                f"{spec.method} needs client capabilities the request did not declare: {', '.join(missing)}",
                {"requiredCapabilities": missing},
            )
        state = result.request_state
        if state is not None and view.stateless:
            sealed = self.sealer.seal(
                spec.method,
                state,
                round_number + 1,
                params=request_params,
                principal=view.principal,
                ttl_s=self.server.request_state_ttl_s,
            )
            result = result.model_copy(update={"request_state": sealed})
        return result

    async def _input_round(
        self,
        spec: MethodSpec,
        stub_spec: MethodSpec,
        request: Request,
        result: Any,
        context: ServerRequestContext,
        view: PeerView,
        call: HandlerCall | None,
    ) -> Any:
        """Send the handler's input requests to a handshake-era client, then call the handler again
        with the answers (as a stateless client would retry)."""
        responses: dict[str, Any] = {}
        for key, ask in (result.input_requests or {}).items():
            ask_data = versions.dump(ask)
            responses[key] = await context.request(ask_data["method"], ask_data.get("params"), raw=True)
        data = {k: v for k, v in (request.params or {}).items() if k != v2026.REQUEST_STATE}
        data[v2026.INPUT_RESPONSES] = responses
        if result.request_state is not None:
            data[v2026.REQUEST_STATE] = result.request_state
        params = self._convert_params(spec, stub_spec, data, view)
        if call is not None:
            return await call(params, data)
        return await getattr(self.server, stub_spec.handler)(params, context)


# -- the server's own requests -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OutgoingRequest:
    """A server's request to its client, crossed into the client's version (`data`); `answer`
    brings the client's result back into the stub's version."""

    method: str
    data: Any
    spec: MethodSpec  # the client's version's
    stub_spec: MethodSpec  # the server's stub's version's
    version: str  # the client's
    stub_version: str

    def answer(self, raw: Any) -> Any:
        result = versions.checked(self.spec.result, raw, f"the client's {self.method} result")
        if self.spec is self.stub_spec:
            return result
        what, source, destination = f"the client's {self.method} result", self.version, self.stub_version
        return crossing.cross(
            versions.dump(result), self.stub_spec.result, what=what, source=source, destination=destination
        )


def outgoing_request(stub: ProtocolTables, method: str, params: Any, view: PeerView) -> OutgoingRequest:
    """A request a handler of a `stub`-version server sends to the client of `view`: validated in
    the stub's version, crossed into the client's, gated by the client's declared capabilities.
    What cannot be sent raises `NotExpressible` (nothing is sent)."""
    stub_spec = stub.server_requests.get(method) or stub.input_requests.get(method)
    if stub_spec is None:
        raise McpError(INTERNAL_ERROR, f"{method} is not a request a server sends in MCP {stub.version}")
    spec = view.protocol.server_requests.get(method)
    if spec is None:
        raise NotExpressible(
            f"cannot send {method}: the client speaks MCP {view.version}, which has no {method}", version=view.version
        )
    data = versions.dump(params) if params is not None else None
    if isinstance(data, dict) and stub_spec.params is not None:
        versions.checked(stub_spec.params, data, f"the {method} params from the handler")
        if spec is not stub_spec and spec.params is not None:
            data = crossing.cross_params(
                data, spec.params, method=method, source=stub.version, destination=view.version
            )
    for capability in spec.needed_capabilities(data):
        if capability.side == "client" and not capability.present_in(view.client_capabilities):
            raise NotExpressible(
                f"cannot send {method}: it needs the {capability}, which this client did not declare",
                version=view.version,
            )
    return OutgoingRequest(method, data, spec, stub_spec, view.version, stub.version)


def outgoing_notification(stub: ProtocolTables, method: str, params: Any, view: PeerView) -> Any:
    """A notification's params from a handler of a `stub`-version server, as the client of `view`
    gets them: validated, and crossed into its version (fields it lacks left out, content degraded
    per policy/crossing.json). Raises `NotExpressible` for what the client's version refuses."""
    data = versions.dump(params) if params is not None else None
    spec = view.protocol.server_notifications.get(method)
    if not isinstance(data, dict) or spec is None or spec.params is None:
        return data
    stub_spec = stub.server_notifications.get(method)
    source = stub_spec.params if stub_spec is not None and stub_spec.params is not None else spec.params
    versions.checked(source, data, f"the {method} params from the handler")
    if source is spec.params:
        return data
    what = f"{method} params"
    return crossing.crossed(data, spec.params, what=what, source=stub.version, destination=view.version)
