"""The client side: `initialize`, typed calls gated by the server's capabilities, and answering
what the server asks for through the client's handlers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from functools import partial
from typing import Any, TypeVar, Unpack, cast

import anyio
import orjson
from anyio.abc import TaskGroup
from pydantic import ValidationError

from mcp_bindings.ext.io_modelcontextprotocol_tasks import names as tasks_ext
from mcp_bindings.runtime.client import eras, extensions, seam
from mcp_bindings.runtime.client import headers as mirroring
from mcp_bindings.runtime.client.handling import answer_request, handle_notification
from mcp_bindings.runtime.client.legacy import LegacyCheck, LegacyServerError
from mcp_bindings.runtime.client.listen import Listening, ListenStream
from mcp_bindings.runtime.client.options import ClientArgs, ClientOptions
from mcp_bindings.runtime.client.retry import RetryPolicy, send_with_retries
from mcp_bindings.runtime.client.seam import Finished, Hook, OutgoingCall, Send
from mcp_bindings.runtime.client.stateless import stateless_request, with_meta
from mcp_bindings.runtime.client.stub import ClientHandlerStub, ClientStub
from mcp_bindings.runtime.client.task_handle import TaskHandles
from mcp_bindings.runtime.client.tasks import ClientTasks
from mcp_bindings.runtime.client.tasks_ext import ToolTasks
from mcp_bindings.runtime.client.tool_catalog import ClientToolCatalog
from mcp_bindings.runtime.client.tool_checks import ClientToolChecks
from mcp_bindings.runtime.protocol import registry, versions
from mcp_bindings.runtime.protocol.custom_methods import CustomMethod
from mcp_bindings.runtime.protocol.headers import encode_value
from mcp_bindings.runtime.protocol.lenient import read_newer
from mcp_bindings.runtime.protocol.spec import MethodSpec, ProtocolTables
from mcp_bindings.runtime.protocol.tool_catalog import TOOLS_LIST_CHANGED
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.calls import ProgressCallback
from mcp_bindings.runtime.rpc.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CapabilityError,
    ConnectionClosed,
    McpError,
    ungrouped,
)
from mcp_bindings.runtime.rpc.jsonrpc import Notification, Request, first_problem
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.rpc.transport import Transport
from mcp_bindings.v2025_11_25 import names as v2025
from mcp_bindings.v2026_07_28 import names as v2026

log = logs.logger("client")

PING = v2025.PING

C = TypeVar("C", bound=ClientStub)
R = TypeVar("R")

_on_progress = seam._on_progress  # the progress callback of this task's requests (`ClientRuntime.progress`)


class ProtocolVersionError(McpError):
    """The server answered `initialize` with a version this client does not speak."""

    def __init__(self, offered: Any, supported: list[str]) -> None:
        super().__init__(
            INVALID_PARAMS,
            f"the server chose protocol version {offered!r}, which this client does not support "
            f"(supported: {', '.join(supported)})",
        )


class ProbeFailedError(ConnectionError):
    """In "auto", over a transport that can start the server again (`Features.respawns`: stdio), the
    server left the `server/discover` probe unanswered or closed on it, as a server on an old SDK does
    (mcp 1.1.x stops reading on a method it cannot parse): `connect_stdio` starts a fresh process for
    the handshake rather than trust this one with it."""

    def __init__(self, why: str) -> None:
        super().__init__(
            f"the server {why} on the server/discover probe; it may be a legacy server: "
            "pin a handshake version (e.g. protocol_version='2025-11-25')"
        )


_CLOSED = (ConnectionClosed, anyio.BrokenResourceError, anyio.EndOfStream, anyio.ClosedResourceError)


class ClientRuntime:
    """The dispatcher of one client connection."""

    def __init__(
        self,
        client_cls: type[ClientStub],
        handler_stub: ClientHandlerStub | None = None,
        /,
        *,
        options: ClientOptions | None = None,
        **args: Unpack[ClientArgs],
    ) -> None:
        """`options` (or the same as keyword arguments): see `ClientOptions`; handlers given here
        (positionally) replace the options' `handlers`."""
        self.options = options = ClientOptions.of(options, args)
        self.stub: ProtocolTables = client_cls.protocol
        # The one record of the listed tools: output checks, header mirroring and retry safety read it.
        self.tools = ClientToolCatalog()
        # When a request whose connection failed is sent again ("safe", "always", "never": client_retry).
        self.retry = RetryPolicy(options.retry, self.tools)
        self.lenient = options.lenient  # read what the negotiated version refuses with newer versions' models
        self.probe_timeout = options.probe_timeout  # "auto": how long a server/discover probe may go unanswered
        self.stub_version: str = self.stub.version
        self.handlers = handler_stub or options.handlers
        self.supported = registry.handshake_versions()
        self.stateless_supported = registry.stateless_versions()
        self.requested = options.protocol_version or self.stub_version
        if self.requested in registry.names():  # a version's name (e.g. "draft") stands for its wire version
            self.requested = registry.info(self.requested).version
        if self.requested != "auto" and self.requested not in self.supported + self.stateless_supported:
            known = ", ".join(self.supported + self.stateless_supported)
            raise ValueError(f"unknown protocol version {self.requested!r}; known: {known}")
        self.stateless = False
        self.client_info = options.client_info or {"name": "mcp-bindgen-client", "version": "0.1.0"}
        self.request_timeout = options.request_timeout
        self.protocol: ProtocolTables | None = None
        self.version: str | None = None
        self.peer_capabilities: dict[str, Any] = {}
        self.server_info: dict[str, Any] = {}
        self.instructions: str | None = None
        self.session: Session | None = None
        # False in a pinned stateless session (no discover probe): the server alone enforces gates.
        self.capabilities_known = False
        self.log_level: str | None = None  # stateless: asks the server for notifications/message
        self.tool_checks = ClientToolChecks(self.tools)  # tools/call structuredContent against the outputSchema
        # The call seam (`client.seam`): the user's hooks (outermost), then the runtime's own.
        self.hooks: tuple[Hook, ...] = tuple(options.hooks)
        self.builtin_hooks: tuple[Hook, ...] = (
            TaskHandles(self.stub),
            TYPED,
            ToolTasks(self),
            mirroring.HeaderMirroring(self),
            self.tool_checks,
            self.tools,
            LegacyCheck(self),
        )
        self._chains: dict[int, tuple[MethodSpec, Send]] = {}  # id(negotiated spec) -> its chain
        self.listening = Listening()  # open subscriptions/listen streams (`client_listen`)
        self.tasks = ClientTasks()  # tasks the server asked the client to run (`client_tasks`)
        self.task_group: TaskGroup | None = None  # where those tasks run: the connection's
        self._header_wire = False  # set when an HTTP transport takes the per-message headers

    @property
    def batches_allowed(self) -> bool:
        """Batches from the server are answered where the negotiated version has them (2025-03-26)."""
        return self.protocol is not None and self.protocol.info.batches

    @property
    def tool_schemas(self) -> dict[str, Any]:
        """Input schemas of the tools the server listed, as it sent them (what x-mcp-header mirroring reads)."""
        return {
            name: orjson.loads(tool.definition.input_source) if tool.definition.input_source is not None else {}
            for name, tool in self.tools.last_listed.items()
        }

    @property
    def capabilities(self) -> dict[str, Any]:
        return extensions.client_capabilities(self)  # the handlers', extensions where the version puts them

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

    async def start(self, session: Session, handshake_timeout: float = 60.0) -> None:
        """Open the conversation: `initialize` for handshake versions; for the stateless version a
        `server/discover` probe (in "auto" mode, falling back to `initialize` when the server answers
        the probe with an error, or not within `probe_timeout`: a legacy server may stay silent)."""
        self.session = session
        if self.requested in self.stateless_supported:
            await self._start_pinned_stateless(session)
            return
        if self.requested == "auto" and self.stateless_supported:
            with anyio.move_on_after(self.probe_timeout) as probe:
                try:
                    await self._start_stateless(session, self.stateless_supported[-1], probe=True)
                    return
                except McpError as exc:
                    log.debug("server/discover failed (%s); falling back to initialize", exc.message)
                except _CLOSED as exc:
                    raise ProbeFailedError(f"closed the connection ({type(exc).__name__})") from None
            if probe.cancelled_caught:
                if session.transport.features.respawns:
                    raise ProbeFailedError(f"did not answer within {self.probe_timeout:g} s")
                log.debug("server/discover unanswered after %s s; falling back to initialize", self.probe_timeout)
            self.protocol, self.version, self.stateless = None, None, False  # the probe's version: not agreed
            self.use_version(session, None)
            self.requested = self.supported[-1]
        with anyio.fail_after(handshake_timeout):
            await self.initialize(session)

    async def _start_pinned_stateless(self, session: Session) -> None:
        """Pinned to a stateless version. Over HTTP the server's answer to each request says whether
        it speaks it; a transport without per-message headers (stdio, in memory) cannot tell, so the
        client asks with `server/discover` first (the spec's SHOULD), within `probe_timeout`."""
        version = self.requested
        if session.transport.features.message_headers:
            await self._start_stateless(session, version, probe=False)
            return
        with anyio.move_on_after(self.probe_timeout):
            try:
                await self._start_stateless(session, version, probe=True)
            except McpError as exc:
                raise LegacyServerError(version, f"server/discover failed: {exc.message}") from None
            return
        raise LegacyServerError(version, f"server/discover unanswered after {self.probe_timeout:g} s")

    async def _start_stateless(self, session: Session, version: str, *, probe: bool) -> None:
        self.protocol, self.version, self.stateless = registry.protocol(version, own=self.stub), version, True
        self.use_version(session, version)
        if not probe:
            return
        raw = await stateless_request(
            self, self.protocol.client_requests[v2026.SERVER_DISCOVER], with_meta(self, None), None
        )
        if isinstance(raw, dict):
            self.capabilities_known = True
            self.peer_capabilities = raw.get("capabilities") or {}
            self.server_info = self.protocol.stated_server_info(raw)
            self.instructions = raw.get("instructions")

    async def initialize(self, session: Session) -> None:
        self.session = session
        params = {"protocolVersion": self.requested, "capabilities": self.capabilities, "clientInfo": self.client_info}
        # The spec: a client MUST NOT cancel initialize (a timeout just ends the attempt).
        raw = await session.request(v2025.INITIALIZE, params, timeout=self.request_timeout, cancellable=False)
        offered = raw.get("protocolVersion") if isinstance(raw, dict) else None
        if offered not in self.supported:
            raise ProtocolVersionError(offered, self.supported)
        protocol = registry.protocol(offered, own=self.stub)
        try:
            result = versions.validate(protocol.client_requests[v2025.INITIALIZE].result, raw)
        except ValidationError as exc:
            raise McpError(
                INTERNAL_ERROR, f"invalid initialize result from the server: {exc.errors()[0]['msg']}"
            ) from None
        self.protocol, self.version = protocol, offered
        self.peer_capabilities = raw.get("capabilities") or {}
        self.capabilities_known = True
        self.server_info = protocol.stated_server_info(raw)
        self.instructions = getattr(result, "instructions", None)
        self.use_version(session, offered)
        await session.notify(v2025.NOTIFICATIONS_INITIALIZED)
        # Streamable HTTP: listen for what the server sends outside any response (requests and
        # notifications not tied to one of ours arrive on the GET stream only).
        if session.transport.features.server_stream:
            await session.transport.open_server_stream()

    def use_version(self, session: Session, version: str | None) -> None:
        """Tell a transport that carries the version and per-message headers outside the body (HTTP)."""
        transport = session.transport
        if transport.features.message_headers:
            transport.use_version(version, self.http_headers)
            self._header_wire = True

    # -- calls made by the typed client ------------------------------------------------------

    def negotiated_spec(self, stub_spec: MethodSpec) -> MethodSpec:
        """The negotiated version's spec of a method the typed client sends (`NotExpressible` naming
        the session's version where it has no such method: `client.eras`)."""
        return eras.negotiated(self, stub_spec.method, stub_spec.kind)

    def prepare(self, stub_spec: MethodSpec, spec: MethodSpec, params: Any) -> Any:
        if isinstance(params, dict):
            params = {key: value for key, value in params.items() if value is not None}
        data = versions.dump(params) if params is not None else None
        for capability in spec.needed_capabilities(data) if self.capabilities_known else ():
            if capability.side == "server" and not capability.present_in(self.peer_capabilities):
                raise CapabilityError(spec.method, str(capability))
        if self.stateless:
            data = with_meta(self, data)  # the request's `_meta`, built once
        elif data == {} and not spec.params_required:
            data = None
        return eras.params(self, stub_spec, spec, data)  # checked in the stub's version, or crossed to the session's

    async def call(self, stub_spec: MethodSpec, params: Any, *, timeout: float | None = None) -> Any:
        """Send a typed client request through its method's chain of hooks (`client.seam`);
        `timeout` (seconds) replaces the client's request_timeout for each message of this call
        (each input round of a stateless request)."""
        spec = self.negotiated_spec(stub_spec)
        data = self.prepare(stub_spec, spec, params)
        limit = timeout if timeout is not None else self.request_timeout
        return await self._chain(spec)(OutgoingCall(self, stub_spec, spec, data, limit, _on_progress.get()))

    async def call_method(self, method: str, params: Any, result: Any = None, *, timeout: float | None = None) -> Any:
        """A typed call of a request the stub's version may lack (the other era's: `client.eras`),
        by name; answers the stub's `result` type (None: the JSON object)."""
        spec = eras.negotiated(self, method)
        return await self.call(eras.stub_spec(self, spec, result), params, timeout=timeout)

    def _chain(self, spec: MethodSpec) -> Send:
        """The chain of `spec`'s messages, built once (per method and negotiated version): a request's
        through every hook, a notification's through the user's arounds that name it."""
        chain = self._chains.get(id(spec))
        if chain is not None and chain[0] is spec:
            return chain[1]
        if spec.kind == "notification":
            send = seam.compose_notification(self.hooks, spec, _notify)
        else:
            send = seam.compose((*self.hooks, *self.builtin_hooks), spec, _send)
        self._chains[id(spec)] = (spec, send)
        return send

    def add_hook(self, hook: Hook) -> None:
        """Register a hook (`client.seam`): inside the user's hooks registered before it, outside
        the runtime's own. Calls made from now on go through it."""
        self.hooks = (*self.hooks, hook)
        self._chains.clear()

    def typed_result(self, stub_spec: MethodSpec, spec: MethodSpec, raw: Any) -> Any:
        """A decoded result as the typed client returns it: validated against the negotiated
        version's model, then crossed to the stub's version (lenient: a newer version's type)."""
        try:
            result = versions.validate(spec.result, raw)
        except ValidationError as exc:
            newer = read_newer(spec.method, raw, part="result", version=self.version or "") if self.lenient else None
            if newer is None:
                why = first_problem(exc)
                raise McpError(INTERNAL_ERROR, f"invalid {spec.method} result from the server: {why}") from None
            return newer  # lenient: the newer version's type, as is (see lenient.py)
        return eras.result(self, stub_spec, spec, result)

    async def ping(self, *, timeout: float | None = None) -> None:
        """Send `ping`; returns when the server answers (McpError -32001 after `timeout` seconds)."""
        assert self.session is not None and self.protocol is not None
        limit = timeout if timeout is not None else self.request_timeout
        if PING not in self.protocol.client_requests:
            raise eras.missing(self, PING)
        await self.session.request(PING, None, timeout=limit)

    async def set_logging_level(self, level: str, *, timeout: float | None = None) -> None:
        """Ask for the server's `notifications/message` from `level` up: `logging/setLevel` where
        the negotiated version has it, else (stateless) the level every later request carries in
        `_meta`, whichever the stub's version (`client.eras`)."""
        await eras.set_logging_level(self, level, timeout)

    def listen(
        self, notifications: Any, *, extra: Mapping[str, MethodSpec] | None = None
    ) -> AbstractAsyncContextManager[ListenStream]:
        """Open a `subscriptions/listen` stream (see `client_listen`); `extra`: extension notifications
        (method: spec) the stream delivers too."""
        return self.listening.open(self, notifications, extra)

    async def call_extension(self, method: CustomMethod[Any, R], params: Any = None) -> R:
        """Call a custom or extension request (`extensions.request`); returns its typed result."""
        return await extensions.call(self, method, params)

    async def notify_extension(self, method: CustomMethod[Any, Any], params: Any = None) -> None:
        """Send a custom or extension notification (`extensions.notification`)."""
        await extensions.notify_server(self, method, params)

    def request_meta(self) -> dict[str, Any]:
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

    @property
    def mirrors_headers(self) -> bool:
        """Whether requests mirror parts of their body into HTTP headers (the stateless HTTP wire)."""
        return self.stateless and self._header_wire

    def http_headers(self, message: dict[str, Any]) -> dict[str, str]:
        """Per-message headers of the stateless HTTP wire: Mcp-Method, Mcp-Name, Mcp-Param-*
        (and the tasks extension's Mcp-Name: the taskId of tasks/get|update|cancel)."""
        if not self.stateless:
            return {}
        headers = mirroring.headers(message, self.tools, self.protocol.routing if self.protocol is not None else {})
        key = tasks_ext.ROUTING.get(str(message.get("method")))
        params = message.get("params")
        value = cast("dict[str, Any]", params).get(key) if key is not None and isinstance(params, dict) else None
        if "Mcp-Method" in headers and isinstance(value, str):
            headers.setdefault("Mcp-Name", encode_value(value) or "")
        return headers

    async def notify(self, stub_spec: MethodSpec, params: Any) -> None:
        spec = self.negotiated_spec(stub_spec)
        data = self.prepare(stub_spec, spec, params)
        for capability in spec.needed_capabilities(data):
            if capability.side == "client" and not capability.present_in(self.capabilities):
                raise CapabilityError(spec.method, str(capability))
        await self._chain(spec)(OutgoingCall(self, stub_spec, spec, data, None))

    # -- what the server sends ---------------------------------------------------------------

    async def on_request(self, request: Request, session: Session) -> bytes:
        return await answer_request(self, request)

    async def on_notification(self, notification: Notification, session: Session) -> None:
        if notification.method == TOOLS_LIST_CHANGED:
            # On whichever stream it came (a listen stream too), what was listed may be stale: tool
            # results go unchecked and no tool call is known safe to repeat until tools are listed again.
            self.tools.forget()
        if self.listening.route(self, notification):
            return
        await handle_notification(self, notification)


class _Typed:
    """The `typed` hook (`client.seam`): the decoded answer of the hooks inside it becomes the
    typed result (`ClientRuntime.typed_result`); a `Finished` answer passes as it is."""

    def wrap(self, spec: MethodSpec, send: Send) -> Send:
        async def typed(call: OutgoingCall) -> Any:
            raw = await send(call)
            return raw if isinstance(raw, Finished) else call.runtime.typed_result(call.stub_spec, call.spec, raw)

        return typed


TYPED = _Typed()


async def _notify(call: OutgoingCall) -> None:
    """The end of a notification's chain: the notification on the session."""
    session = call.runtime.session
    assert session is not None
    await session.notify(call.spec.method, call.params)


async def _send(call: OutgoingCall) -> Any:
    """The end of every chain: the request on the session (its decoded result). Stateless: with its
    input rounds and retries (`stateless_request`); a handshake session's request is sent again
    only if it never left (`client_retry`)."""
    runtime, session = call.runtime, call.runtime.session
    assert session is not None
    if runtime.stateless:
        return await stateless_request(runtime, call.spec, call.params, call.progress, timeout=call.timeout)
    attempt = partial(session.request, call.method, call.params, timeout=call.timeout, on_progress=call.progress)
    return await send_with_retries(runtime.retry, call.method, call.params, attempt, stateless=False)


@asynccontextmanager
async def connect(
    transport: Transport,
    client: type[C],
    *,
    options: ClientOptions | None = None,
    **args: Unpack[ClientArgs],
) -> AsyncIterator[C]:
    """Run a client session over any transport: initialize, yield the typed client, then close.
    `options` (or the same as keyword arguments: `handlers`, `protocol_version`, `client_info`,
    `request_timeout`, `probe_timeout`, `lenient`, `retry`, `hooks`): see `ClientOptions`."""
    settings = ClientOptions.of(options, args)
    runtime = ClientRuntime(client, options=settings)
    request_timeout = settings.request_timeout
    session = Session(transport, runtime)
    # The task group is an implementation detail: a failed handshake (McpError, TimeoutError,
    # ConnectionError) or an error in the caller's block comes out as itself, not in a group.
    with ungrouped():
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(session.run)
            runtime.task_group = task_group
            try:
                await runtime.start(session, handshake_timeout=request_timeout or 60)
                yield client(runtime)
            finally:
                task_group.cancel_scope.cancel()
                with anyio.CancelScope(shield=True):
                    await transport.aclose()
