"""Replaying a recording to a client of the other era, through the runtime's own version crossing.

A recording made at a handshake-era version (2025-11-25) asked by a stateless-era client (a
2026-07-28 request carrying its version in `_meta`), or the reverse, is served by the runtime, not
frame by frame: the recording becomes a server stub of the recorded version (`recorded_server`)
whose handlers answer from the recording (`ReplaySource.claim`), and a `ServerRuntime` serves that
stub. So the client's params cross into the recorded version before they are matched, the recorded
results and errors cross back into the client's version (`server.bridge`, `protocol.crossing`), and
`server/discover` or the handshake is the runtime's, from the recorded identity and capabilities.

What cannot cross is a JSON-RPC error naming the method, what the recording holds and both versions:
a recorded exchange in which the server asked the client something mid-request (sampling,
elicitation, roots: handshake-era server-to-client requests) cannot be played to a stateless client,
which is only asked through an input-required result."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, cast

from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.protocol.context import RequestContext
from mcp_bindings.runtime.protocol.spec import ProtocolTables
from mcp_bindings.runtime.recording.answering import answering_server
from mcp_bindings.runtime.recording.compare import what_is
from mcp_bindings.runtime.recording.exchanges import Exchange, Unmatched
from mcp_bindings.runtime.recording.recorder import STATELESS_VERSION_KEY, meta_value
from mcp_bindings.runtime.recording.session_file import Recording
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, McpError, NotExpressible
from mcp_bindings.runtime.rpc.jsonrpc import RequestId
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.rpc.transport import Transport, TransportBase
from mcp_bindings.runtime.server.runtime import ServerRuntime
from mcp_bindings.runtime.server.stubs import ServerStub
from mcp_bindings.v2025_11_25 import names as v2025
from mcp_bindings.v2026_07_28 import names as v2026

HANDSHAKE = v2025.INITIALIZE
DISCOVER = v2026.SERVER_DISCOVER


class ReplaySource(Protocol):
    """What the crossed replay needs of a `replay_server.ServerReplay`."""

    recording: Recording
    unmatched: list[tuple[dict[str, Any], Unmatched]]

    def claim(self, message: dict[str, Any]) -> Exchange | Unmatched: ...

    def note(self, text: str) -> None: ...


# -- which version the recording speaks, and who needs crossing --------------------------------


def recorded_version(recording: Recording) -> str | None:
    """The protocol version the recorded server spoke: its `initialize` answer's, else the newest
    version the entries state. None when the recording states none."""
    for entry in recording.entries:
        result = (entry.message or {}).get("result")
        if entry.dir == "server" and isinstance(result, dict):
            stated = cast("dict[str, Any]", result).get("protocolVersion")
            if isinstance(stated, str):
                return stated
    return recording.versions[-1] if recording.versions else None


def _known(version: str) -> ProtocolTables | None:
    try:
        return registry.protocol(version)
    except (KeyError, LookupError, ValueError):
        return None


def stated_version(message: Mapping[str, Any]) -> str | None:
    """The version a stateless-era request states in its `_meta`, if any."""
    for key in (STATELESS_VERSION_KEY, *registry.protocol_version_keys()):
        version = meta_value(message, key)
        if isinstance(version, str):
            return version
    return None


def needs_crossing(recording: Recording, message: Mapping[str, Any]) -> bool:
    """Whether `message`, a client's first, comes from the other era than the recording's (and both
    versions are known here, so the runtime can cross between them)."""
    version = recorded_version(recording)
    tables = _known(version) if version is not None else None
    if tables is None:
        return False
    if not tables.stateless:
        asked = stated_version(message)
        return asked is not None and asked not in recording.versions and _known(asked) is not None
    return message.get("method") == HANDSHAKE


# -- the recording as a server stub ------------------------------------------------------------


def _answers(recording: Recording, tables: ProtocolTables) -> tuple[dict[str, Any], dict[str, Any]]:
    """The recorded server's capabilities and identity (its `serverInfo` and `instructions`), from
    its answer to the recorded `initialize` or `server/discover`: where the recorded version puts
    them (a discover result states the server info under `_meta`, `stated_server_info`). A
    stateless-era recording without a `server/discover` (a client pinned to the version need not
    ask) shows them all the same: the capabilities that gate the requests the server answered, the
    identity its results are stamped with."""
    asked: set[Any] = set()
    for entry in recording.entries:
        message = entry.message or {}
        if entry.dir == "client" and message.get("method") in (HANDSHAKE, DISCOVER):
            asked.add(_key(message.get("id")))
            continue
        result = message.get("result")
        if entry.dir == "server" and _key(message.get("id")) in asked and isinstance(result, dict):
            result = cast("dict[str, Any]", result)
            identity = {"serverInfo": tables.stated_server_info(result), "instructions": result.get("instructions")}
            return dict(result.get("capabilities") or {}), identity
    return _shown(recording, tables)


def _key(request_id: Any) -> Any:
    return request_id if isinstance(request_id, (str, int)) else None


def _shown(recording: Recording, tables: ProtocolTables) -> tuple[dict[str, Any], dict[str, Any]]:
    """The capabilities and identity a recording without a lifecycle answer shows (`_answers`)."""
    capabilities: dict[str, Any] = {}
    asked: dict[Any, str] = {}
    info: dict[str, Any] = {}
    for entry in recording.entries:
        message = entry.message or {}
        request_id = _key(message.get("id"))
        if entry.dir == "client" and isinstance(message.get("method"), str):
            asked[request_id] = message["method"]
            continue
        result = message.get("result")
        spec = tables.client_requests.get(asked.pop(request_id, ""))
        if entry.dir != "server" or spec is None or not isinstance(result, dict):
            continue
        info = info or tables.stated_server_info(cast("dict[str, Any]", result))
        if spec.gate is not None and spec.gate.side == "server":
            *parents, leaf = spec.gate.path
            node = capabilities
            for key in parents:
                node = node.setdefault(key, {})
            node.setdefault(leaf, {} if not parents else True)
    return capabilities, {"serverInfo": info}


def recorded_server(replay: ReplaySource) -> ServerStub:
    """A server stub of the recorded version serving every method its recorded capabilities offer,
    each handler answering from the recording."""
    version = recorded_version(replay.recording)
    tables = _known(version) if version is not None else None
    if version is None or tables is None:
        raise ValueError(f"{replay.recording.path}: the recording states no protocol version this runtime has")
    capabilities, identity = _answers(replay.recording, tables)

    async def recorded(method: str, params: dict[str, Any] | None, ctx: RequestContext) -> dict[str, Any]:
        return await answer(replay, method, params, ctx, version)

    return answering_server(version, capabilities, identity, recorded)


async def answer(
    replay: ReplaySource, method: str, params: dict[str, Any] | None, ctx: RequestContext, recorded: str
) -> dict[str, Any]:
    """The recorded answer to `method` with `params` (wire JSON of the recorded version, without the
    client's era's `_meta`): its notifications sent, its result returned (the runtime crosses it
    back) or its error raised."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": ctx.request_id, "method": method}
    if params is not None:
        message["params"] = params
    found = replay.claim(message)
    if isinstance(found, Unmatched):
        replay.unmatched.append((message, found))
        raise McpError(found.code, found.message)
    client = ctx.protocol_version
    where = f"{what_is(found.message)} ({replay.recording.where(found.entry)})"
    asks = [entry.message for entry in found.episode if entry.message is not None and "id" in entry.message]
    if asks and registry.protocol(client).stateless:
        raise McpError(
            INTERNAL_ERROR,
            f"{where}: the recording (MCP {recorded}) asked the client {asks[0].get('method')} during this "
            f"request, which a client of MCP {client} cannot be asked (a handshake-era server-to-client request "
            f"does not cross to the stateless era): record the session with a {client} client",
            {"method": method, "recorded": recorded, "client": client, "asks": asks[0].get("method")},
        )
    for entry in found.episode:
        await _play(replay, entry.message or {}, ctx, client, recorded)
    for entry in found.after:  # the session's: nothing a request of the client's era carries
        replay.note(
            f"not played to the MCP {client} client ({what_is(entry.message or {})}, recorded at MCP {recorded} "
            f"after {what_is(found.message)} was answered): it belongs to the session, not to the request"
        )
    response = found.response.message if found.response is not None else None
    if response is None:
        raise McpError(INTERNAL_ERROR, f"{where}: the recording ends before the server answered it")
    error = response.get("error")
    if isinstance(error, dict):
        error = cast("dict[str, Any]", error)
        raise McpError(int(error.get("code", INTERNAL_ERROR)), str(error.get("message", "")), error.get("data"))
    return dict(cast("dict[str, Any]", response.get("result") or {}))


async def _play(replay: ReplaySource, message: dict[str, Any], ctx: RequestContext, client: str, recorded: str) -> None:
    method = str(message.get("method"))
    params = cast("dict[str, Any]", message.get("params") or {})
    try:
        if "id" in message:
            await ctx.request(method, params)
        elif method == v2026.NOTIFICATIONS_PROGRESS:
            await ctx.report_progress(params.get("progress", 0), params.get("total"), params.get("message"))
        else:
            await ctx.notify(method, params)
    except NotExpressible as exc:
        replay.note(f"not played to the MCP {client} client ({method}, recorded at MCP {recorded}): {exc}")


# -- serving ------------------------------------------------------------------------------------


class _Peeked(TransportBase):
    """A transport whose first frame was already read: given back first."""

    def __init__(self, inner: Transport, first: bytes) -> None:
        self.inner = inner
        self.first: bytes | None = first
        self.features = inner.features

    async def receive(self) -> bytes:
        if self.first is not None:
            frame, self.first = self.first, None
            return frame
        return await self.inner.receive()

    async def send(self, frame: bytes, related: RequestId | None = None) -> None:
        await self.inner.send(frame, related)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def serve_crossed(replay: ReplaySource, transport: Transport, first: bytes) -> None:
    """Serve the rest of a connection whose first frame (`first`) needs crossing through the runtime."""
    session = Session(_Peeked(transport, first), ServerRuntime(recorded_server(replay)))
    await session.run()
