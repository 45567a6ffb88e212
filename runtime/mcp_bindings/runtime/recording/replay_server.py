"""Replaying a recorded server: answer a live client from a recording, on any transport.

The recording is cut into exchanges: each message the client sent (request or notification) with
what the server sent because of it, in order: the notifications and server-to-client requests sent
while that request was open (or after that notification), then the response. An incoming request is
matched to a recorded one (`compare.MatchRules`); its exchange is played back with the incoming id,
progress notifications carry the incoming progress token, and a server-to-client request waits for
the client's answer before the exchange goes on. A request that matches nothing gets a JSON-RPC
error naming the nearest recorded request and what differed.

`order="strict"` takes the recorded requests in their order (a request may only match the next
unplayed one); `order="any"` takes the first unplayed match, then, for a request asked again, the
last played one. `timing="fast"` answers at once; `timing="preserved"` keeps the recorded delays
from each request to what answered it, each at most `MAX_PRESERVED_DELAY` seconds: a recording
with a longer one is refused when the replay is made (`SessionFileError` naming the line), not
served as a request left unanswered."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import anyio

from mcp_bindings.runtime.recording.compare import DEFAULT_RULES, Difference, MatchRules, first_message, what_is
from mcp_bindings.runtime.recording.crossed_replay import needs_crossing, serve_crossed
from mcp_bindings.runtime.recording.exchanges import Exchange, Unmatched, exchanges_of
from mcp_bindings.runtime.recording.live_fallback import (
    Fallback,
    LiveFallback,
    RecordingTransport,
    episodes_done,
    episodes_writer,
)
from mcp_bindings.runtime.recording.recorder import STATELESS_VERSION_KEY, Recorder, meta_value
from mcp_bindings.runtime.recording.session_file import Entry, Recording, SessionFileError, SessionWriter
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR
from mcp_bindings.runtime.rpc.jsonrpc import encode_error
from mcp_bindings.runtime.rpc.transport import OversizedMessage, Transport
from mcp_bindings.v2026_07_28 import names as v2026

Order = Literal["strict", "any"]
Timing = Literal["fast", "preserved"]

CLIENT_ANSWER_SECONDS = 30.0
MAX_PRESERVED_DELAY = 300.0  # seconds from a request to what answers it, under timing="preserved"


@dataclass(eq=False)
class ServerReplay:
    """Plays the server side of a recording to one client connection (`serve`)."""

    recording: Recording
    _: KW_ONLY
    rules: MatchRules = DEFAULT_RULES
    order: Order = "any"
    timing: Timing = "fast"
    log: Any = None  # where `note` writes (None: stderr)
    fallback: Fallback | None = None
    prologue: list[Entry] = field(init=False)
    exchanges: list[Exchange] = field(init=False)
    unmatched: list[tuple[dict[str, Any], Unmatched]] = field(init=False, default_factory=list)
    forwarded: list[dict[str, Any]] = field(init=False, default_factory=list)
    _next_id: int = field(init=False, default=0)
    _waiting: dict[Any, anyio.Event] = field(init=False, default_factory=dict)
    _closing: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        self.prologue, self.exchanges = exchanges_of(self.recording)
        if self.log is None:
            self.log = sys.stderr
        if self.timing == "preserved":
            self._check_delays()

    def _check_delays(self) -> None:
        """Every delay `timing="preserved"` would wait is at most `MAX_PRESERVED_DELAY`."""
        delays: list[tuple[Entry, float]] = [(entry, entry.t) for entry in self.prologue]
        for exchange in self.exchanges:
            answers = [*exchange.episode, *([exchange.response] if exchange.response is not None else [])]
            delays += [(entry, entry.t - exchange.entry.t) for entry in answers]
        for entry, delay in delays:
            if delay > MAX_PRESERVED_DELAY:
                raise SessionFileError(
                    f"{self.recording.where(entry)}: recorded {delay:g} s after the request it answers, longer than "
                    f"--timing preserved waits ({MAX_PRESERVED_DELAY:g} s); replay it with --timing fast"
                )

    def note(self, text: str) -> None:
        """Say something about the replay on its log (stderr by default)."""
        print(f"mcp replay: {text}", file=self.log)

    # -- matching --------------------------------------------------------------------------------

    def claim(self, message: dict[str, Any]) -> Exchange | Unmatched:
        """The recorded exchange that answers `message` (marked played), or why there is none."""
        spoken = meta_value(message, STATELESS_VERSION_KEY)  # the version a stateless-era request states
        spoken = spoken if isinstance(spoken, str) else None
        if spoken is not None and self.recording.versions and spoken not in self.recording.versions:
            return Unmatched(
                INVALID_PARAMS,
                f"{what_is(message)} is at protocol {spoken}, the recording at {', '.join(self.recording.versions)}: "
                f"a recording replays at the protocol era it was made in (record the session with a {spoken} client)",
            )
        is_request = "id" in message
        candidates = [ex for ex in self.exchanges if ex.is_request == is_request]
        key = self.rules.key(message)
        if self.order == "strict":
            upcoming = next((ex for ex in candidates if not ex.played), None)
            if upcoming is not None and self.rules.key(upcoming.message) == key:
                upcoming.played += 1
                return upcoming
            return self._unmatched(message, candidates, upcoming)
        fresh = next((ex for ex in candidates if not ex.played and self.rules.key(ex.message) == key), None)
        again = next((ex for ex in reversed(candidates) if ex.played and self.rules.key(ex.message) == key), None)
        chosen = fresh or again
        if chosen is None:
            return self._unmatched(message, candidates, None)
        chosen.played += 1
        return chosen

    def _unmatched(self, message: dict[str, Any], candidates: list[Exchange], upcoming: Exchange | None) -> Unmatched:
        method = message.get("method")
        name = what_is(message)
        if upcoming is not None:
            diffs = self.rules.differences(upcoming.message, message)
            return Unmatched(
                INVALID_PARAMS,
                f"{name} is out of the recorded order: {self._describe(upcoming, diffs)} comes next",
                upcoming,
                tuple(diffs),
            )
        same_method = [ex for ex in candidates if ex.message.get("method") == method]
        if not same_method:
            methods = sorted({str(ex.message.get("method")) for ex in candidates})
            return Unmatched(
                METHOD_NOT_FOUND,
                f"{method} was never recorded (the recording has {', '.join(methods) or 'no requests'})",
            )
        # Nearest: the same params present (a retried round is nearest a recorded retry), then the
        # fewest differences, then one not played yet.
        shape = self._shape(message)
        scored = [
            (len(shape ^ self._shape(ex.message)), len(self.rules.differences(ex.message, message)), ex.played > 0, ex)
            for ex in same_method
        ]
        nearest = min(scored, key=lambda item: item[:3])[3]
        diffs = self.rules.differences(nearest.message, message)
        if not diffs:
            return Unmatched(
                INVALID_PARAMS,
                f"{name} was asked more often than recorded: {self._describe(nearest, diffs)} was already played",
                nearest,
            )
        return Unmatched(
            INVALID_PARAMS,
            f"no recorded {method} matches: the nearest is {self._describe(nearest, diffs)}",
            nearest,
            tuple(diffs),
        )

    def _shape(self, message: dict[str, Any]) -> set[str]:
        params = self.rules.key(message).get("params")
        return set(cast("dict[str, Any]", params)) if isinstance(params, dict) else set()

    def _describe(self, exchange: Exchange, diffs: list[Difference]) -> str:
        where = f"{what_is(exchange.message)} ({self.recording.where(exchange.entry)})"
        if not diffs:
            return where
        shown = "; ".join(d.describe() for d in diffs[:3])
        more = f" and {len(diffs) - 3} more" if len(diffs) > 3 else ""
        return f"{where}, which differs in {shown}{more}"

    # -- serving ---------------------------------------------------------------------------------

    async def serve(self, transport: Transport) -> None:
        """Answer the client on `transport` until it closes its side."""
        started = anyio.current_time()
        async with anyio.create_task_group() as group:
            for entry in self.prologue:
                await self._pause(started, entry.t)
                await transport.send(json.dumps(entry.message).encode())
            first = True
            while True:
                try:
                    frame = await transport.receive()
                except OversizedMessage as exc:
                    await transport.send(encode_error(None, INVALID_REQUEST, str(exc)))
                    continue
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    break
                if first and needs_crossing(self.recording, first_message(frame)):
                    await serve_crossed(self, transport, frame)  # a client of the other era: the runtime
                    break
                first = False
                await self.incoming(transport, group, frame)
            self._closing = True
            for event in self._waiting.values():
                event.set()
            if self.fallback is not None:  # the client is done: so is the live server (its reader ends)
                await self.fallback.aclose()

    async def incoming(self, transport: Transport, group: anyio.abc.TaskGroup, frame: bytes) -> None:
        """Handle one frame from the client; what answers it goes to `transport` (the final answer to a
        request with `related` set to its id)."""
        try:
            message = json.loads(frame)
        except ValueError as exc:
            await transport.send(encode_error(None, PARSE_ERROR, f"Parse error: {exc}"))
            return
        if not isinstance(message, dict):
            await transport.send(encode_error(None, INVALID_REQUEST, "a JSON-RPC message is an object"))
            return
        message = cast("dict[str, Any]", message)
        if "method" not in message:  # the client's answer to a request the replay sent
            event = self._waiting.pop(message.get("id"), None)
            if event is not None:
                event.set()
            elif self.fallback is not None:  # or to one the live server sent
                await self.fallback.forward(message, transport, group)
            return
        if self.fallback is not None:
            self.fallback.remember(message)
            if self.fallback.takes(message):
                await self.fallback.forward(message, transport, group)
                return
        found = self.claim(message)
        if isinstance(found, Unmatched) and self.fallback is not None:
            self.forwarded.append(message)
            await self.fallback.forward(message, transport, group)
            return
        if isinstance(found, Unmatched):
            self.unmatched.append((message, found))
            if "id" in message:
                data = {
                    "nearest": None if found.nearest is None else self.recording.where(found.nearest.entry),
                    "differences": [d.to_json() for d in found.differences],
                }
                await transport.send(encode_error(message["id"], found.code, found.message, data), message["id"])
            else:
                self.note(f"ignored {found.message}")
            return
        group.start_soon(self._play, transport, found, message, anyio.current_time())

    async def _play(self, transport: Transport, exchange: Exchange, incoming: dict[str, Any], arrived: float) -> None:
        token = meta_value(incoming, "progressToken")
        recorded_token = meta_value(exchange.message, "progressToken")
        for entry in exchange.episode:
            await self._pause(arrived, entry.t - exchange.entry.t)
            message = dict(entry.message or {})
            if message.get("method") == v2026.NOTIFICATIONS_PROGRESS and recorded_token is not None:
                params = dict(cast("dict[str, Any]", message.get("params") or {}))
                if params.get("progressToken") == recorded_token:
                    params["progressToken"] = token
                    message["params"] = params
            await self._send_recorded(transport, message)
        if exchange.response is not None and "id" in incoming:
            await self._pause(arrived, exchange.response.t - exchange.entry.t)
            answer = {**(exchange.response.message or {}), "id": incoming["id"]}
            await transport.send(json.dumps(answer).encode(), incoming["id"])
        for entry in exchange.after:  # the session's, once the exchange is over (as recorded)
            await self._pause(arrived, entry.t - exchange.entry.t)
            await self._send_recorded(transport, dict(entry.message or {}))

    async def _send_recorded(self, transport: Transport, message: dict[str, Any]) -> None:
        """A recorded server message: a request waits for the client's answer (`_ask`)."""
        if "id" in message:
            await self._ask(transport, message)
        else:
            await transport.send(json.dumps(message).encode())

    async def _ask(self, transport: Transport, message: dict[str, Any]) -> None:
        """Send a recorded server-to-client request under a fresh id; wait for the client's answer."""
        self._next_id += 1
        request_id = f"replay-{self._next_id}"
        event = anyio.Event()
        self._waiting[request_id] = event
        await transport.send(json.dumps({**message, "id": request_id}).encode())
        if self._closing:
            return
        with anyio.move_on_after(CLIENT_ANSWER_SECONDS):
            await event.wait()

    async def _pause(self, since: float, offset: float) -> None:
        if self.timing == "preserved":
            delay = since + max(offset, 0.0) - anyio.current_time()
            if delay > 0:
                await anyio.sleep(delay)


async def replay_stdio(
    recording: Recording, *, live: Sequence[str] | None = None, record_to: Path | None = None, **options: Any
) -> ServerReplay:
    """Serve the recorded server side on this process's stdin/stdout until the client closes it.
    With `live` (a server command, or a Streamable HTTP URL), what the recording cannot answer goes
    to that server; with `record_to`, the whole conversation is written there as a new session file
    (`new_episodes`)."""
    from mcp_bindings.runtime.recording.http_fallback import HttpLiveFallback, is_url
    from mcp_bindings.runtime.stdio.serve import open_stdio_transport

    fallback: Fallback | None = None
    if live:
        fallback = HttpLiveFallback(live[0]) if is_url(live) else LiveFallback(live)
    replay = ServerReplay(recording, fallback=fallback, **options)
    transport: Transport = await open_stdio_transport()
    writer: SessionWriter | None = None
    if record_to is not None:
        server = (
            {"url": live[0]}
            if live and is_url(live)
            else {"command": list(live or recording.header["server"].get("command", []))}
        )
        writer = episodes_writer(recording, record_to, "stdio", server)
        transport = RecordingTransport(transport, Recorder(writer, "stdio"), uuid.uuid4().hex)
    try:
        await replay.serve(transport)
    finally:
        if fallback is not None:
            await fallback.aclose()
        await transport.aclose()
        if writer is not None and record_to is not None:
            episodes_done(writer, record_to)
    return replay
