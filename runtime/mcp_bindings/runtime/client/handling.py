"""What a client does with what the server sends: requests (sampling, elicitation, roots) and the
input requests of an `InputRequiredResult` answered by the client's handlers, in the handlers'
version, and notifications handed to them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from mcp_bindings.runtime.protocol import crossing, versions
from mcp_bindings.runtime.protocol.custom_methods import Bound, registered, result_data, typed_params
from mcp_bindings.runtime.protocol.lenient import read_newer
from mcp_bindings.runtime.protocol.spec import Kind, MethodSpec, ProtocolTables
from mcp_bindings.runtime.rpc import jsonrpc, logs
from mcp_bindings.runtime.rpc.errors import METHOD_NOT_FOUND, McpError
from mcp_bindings.runtime.rpc.jsonrpc import Notification, Request, validation_error
from mcp_bindings.v2025_11_25 import names as v2025

if TYPE_CHECKING:
    from mcp_bindings.runtime.client.runtime import ClientRuntime
    from mcp_bindings.runtime.client.stub import ClientHandlerStub

log = logs.logger("extensions")


@dataclass(slots=True, eq=False)
class ClientContext:
    """What a client handler gets besides its params (see `context.NotificationContext`)."""

    _runtime: ClientRuntime
    request_id: Any

    @property
    def protocol_version(self) -> str:
        return self._runtime.version or ""

    @property
    def peer_capabilities(self) -> dict[str, Any]:
        return self._runtime.peer_capabilities


def handler_spec(stub: ProtocolTables, method: str) -> MethodSpec | None:
    """The stub's spec of something a server asks: a wire request or an input request."""
    return stub.server_requests.get(method) or stub.input_requests.get(method)


def _typed(spec: MethodSpec, params: Any) -> Any:
    if spec.params is None or params is None:
        return params
    try:
        return versions.validate(spec.params, params)
    except ValidationError as exc:
        raise validation_error(exc) from None


async def answer_request(runtime: ClientRuntime, request: Request) -> bytes:
    """The result JSON of a server's request, in the negotiated version. A task-augmented request
    the client declared it takes as a task gets a `CreateTaskResult`, its handler running on
    (`client_tasks`); `tasks/*` are served from the client's task store unless the handlers do."""
    if request.method == v2025.PING:
        return b"{}"
    protocol = runtime.protocol
    spec = protocol.server_requests.get(request.method) if protocol is not None else None
    stub_spec = handler_spec(runtime.stub, request.method)
    handlers = runtime.handlers
    if spec is None and stub_spec is None:  # not the version's: a custom or extension request (`extensions`)
        return await answer_custom(runtime, request)
    implemented = stub_spec is not None and handlers is not None and handlers.implements(stub_spec)
    if spec is not None and not implemented and runtime.tasks.serves(runtime, request.method):
        return await runtime.tasks.answer_request(runtime, request)
    if spec is None or stub_spec is None or handlers is None or not implemented:
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
    work = _handler_work(runtime, request, spec, stub_spec, handlers)
    if runtime.tasks.augmented(runtime, request):
        return await runtime.tasks.create(runtime, request, work)
    return await work()


def _handler_work(
    runtime: ClientRuntime, request: Request, spec: MethodSpec, stub_spec: MethodSpec, handlers: ClientHandlerStub
) -> Callable[[], Awaitable[bytes]]:
    """The handler's run on the request's params (checked now, so bad params fail at once)."""
    protocol = runtime.protocol
    newer = None
    try:
        params = _typed(spec, request.params)
    except McpError:
        if runtime.lenient:
            newer = read_newer(request.method, request.params, part="request params", version=runtime.version or "")
        if newer is None:
            raise
        params = newer  # lenient: the handler gets the newer version's params as they are
    same = protocol is runtime.stub
    if newer is None and not same and stub_spec.params is not None and request.params is not None:
        params = crossing.cross(
            request.params,
            stub_spec.params,
            what=request.method,
            source=runtime.version or "?",
            destination=runtime.stub.version,
        )

    async def work() -> bytes:
        result = await getattr(handlers, stub_spec.handler)(params, ClientContext(runtime, request.id))
        if isinstance(result, dict):
            result = versions.validate(stub_spec.result, result)
        if same:
            return versions.to_json(result)
        crossed = crossing.crossed(
            versions.dump(result),
            spec.result,
            what=f"the {spec.method} result",
            source=runtime.stub.version,
            destination=runtime.version or "?",
        )
        return jsonrpc.dumps(crossed)

    return work


async def answer_input_requests(runtime: ClientRuntime, requests: dict[str, Any]) -> dict[str, Any]:
    """The `inputResponses` to an `InputRequiredResult`'s `inputRequests`, from the handlers."""
    responses: dict[str, Any] = {}
    assert runtime.protocol is not None
    for key, ask in requests.items():
        method = ask.get("method") if isinstance(ask, dict) else None
        spec = runtime.protocol.input_requests.get(method) if isinstance(method, str) else None
        stub_spec = handler_spec(runtime.stub, method or "")
        handlers = runtime.handlers
        if spec is None or stub_spec is None or handlers is None or not handlers.implements(stub_spec):
            how = f"; override ClientHandlers.{stub_spec.handler} to answer it" if stub_spec is not None else ""
            raise McpError(
                METHOD_NOT_FOUND, f"the server asked for input ({method!r}), which this client does not handle{how}"
            )
        params = _typed(stub_spec, ask.get("params"))
        result = await getattr(handlers, stub_spec.handler)(params, ClientContext(runtime, None))
        responses[key] = versions.dump(result)
    return responses


async def handle_notification(runtime: ClientRuntime, notification: Notification) -> None:
    if runtime.protocol is None or runtime.handlers is None:
        return
    spec = runtime.protocol.server_notifications.get(notification.method)
    stub_spec = runtime.stub.server_notifications.get(notification.method)
    if spec is None and stub_spec is None:  # not the version's: a custom or extension one (`extensions`)
        await custom_notified(runtime, notification)
        return
    if spec is None or stub_spec is None or stub_spec.builtin:
        return
    params = notification.params
    if stub_spec.params is not None and params is not None:
        params = versions.validate(stub_spec.params, params)
    await getattr(runtime.handlers, stub_spec.handler)(params, ClientContext(runtime, None))


# -- custom and extension methods the server sends (`protocol.custom_methods`) ----------------------


async def answer_custom(runtime: ClientRuntime, request: Request) -> bytes:
    """A server's request the version does not define: to the handlers' registered method, else -32601."""
    bound = _client_bound(runtime, request.method, "request")
    if bound is None:
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
    result = await bound.handler(typed_params(bound.method.spec, request.params), ClientContext(runtime, request.id))
    return jsonrpc.dumps(result_data(bound.method.spec, result))


async def custom_notified(runtime: ClientRuntime, notification: Notification) -> None:
    """A server's notification the version does not define: to the handlers' registered method."""
    bound = _client_bound(runtime, notification.method, "notification")
    if bound is None:
        log.debug("ignoring notification %s", notification.method)
        return
    await bound.handler(typed_params(bound.method.spec, notification.params), ClientContext(runtime, None))


def _client_bound(runtime: ClientRuntime, method: str, kind: Kind) -> Bound | None:
    methods = registered(runtime.handlers)
    bound = methods.handlers.get(method) if methods is not None else None
    return bound if bound is not None and bound.method.kind == kind else None
