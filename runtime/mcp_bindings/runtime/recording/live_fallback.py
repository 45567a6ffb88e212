"""The live server behind a replay (`new_episodes`): a request the recording cannot answer goes to
the real server, started on first need and given the client's own handshake first; what it sends
back (answers, notifications, its requests) goes to the client unchanged, and the client's answers
to its requests go back to it. `RecordingTransport` writes the whole conversation (replayed and
live) as a new session file (`episodes_writer`, then `episodes_done`). `Fallback` is what a replay
needs of a live server: this one (a stdio command) or `http_fallback.HttpLiveFallback` (a URL)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import anyio
import anyio.abc

from mcp_bindings.runtime.recording.compare import first_message
from mcp_bindings.runtime.recording.recorder import Recorder
from mcp_bindings.runtime.recording.session_file import Recording, SessionWriter, new_header
from mcp_bindings.runtime.recording.stdio_proxy import frames, stop
from mcp_bindings.runtime.rpc.jsonrpc import RequestId
from mcp_bindings.runtime.rpc.transport import Transport, TransportBase
from mcp_bindings.runtime.stdio.connect import INHERIT, spawn
from mcp_bindings.v2025_11_25 import names as v2025

HANDSHAKE_ID = "live-fallback-initialize"
HANDSHAKE_SECONDS = 30.0


class Fallback(Protocol):
    """The live server behind a replay."""

    def remember(self, message: dict[str, Any]) -> None:
        """See every client request and notification (the handshake is given to the live server first)."""
        ...

    def takes(self, message: dict[str, Any]) -> bool:
        """Whether `message` goes to the live server even where the recording has it: the client's
        `notifications/initialized` after its own `initialize` went there."""
        ...

    async def forward(self, message: dict[str, Any], client: Transport, group: anyio.abc.TaskGroup) -> None:
        """Send a message the recording cannot answer to the live server; what it answers goes to `client`."""
        ...

    async def aclose(self) -> None: ...


def episodes_writer(recording: Recording, record_to: Path, transport: str, server: dict[str, Any]) -> SessionWriter:
    """Where a `new_episodes` replay writes the whole session: beside `record_to` until `episodes_done`."""
    header = new_header(transport, server, {})
    header["redaction"] = recording.header.get("redaction", {})
    return SessionWriter(record_to.with_name(record_to.name + ".new"), header)


def episodes_done(writer: SessionWriter, record_to: Path) -> None:
    """The new session replaces the file it was replayed from."""
    writer.close()
    os.replace(writer.path, record_to)


@dataclass(eq=False)
class HandshakeKept:
    """What every live fallback keeps of the client's handshake (the `Fallback` methods that read it)."""

    handshake: dict[str, Any] | None = None  # the client's initialize request, as it came
    initialized: dict[str, Any] | None = None  # and its initialized notification
    live_handshake: bool = False  # the client's own initialize went to the live server

    def remember(self, message: dict[str, Any]) -> None:
        if message.get("method") == v2025.INITIALIZE:
            self.handshake = message
        elif message.get("method") == v2025.NOTIFICATIONS_INITIALIZED:
            self.initialized = message

    def takes(self, message: dict[str, Any]) -> bool:
        return self.live_handshake and message.get("method") == v2025.NOTIFICATIONS_INITIALIZED


class LiveFallback(HandshakeKept):
    def __init__(self, command: Sequence[str]) -> None:
        super().__init__()
        self.command = list(command)
        self._upstream: Transport | None = None
        self._process: Any = None
        self._ready = anyio.Event()
        self._starting = False
        self._answered = anyio.Event()

    async def _pump(self, upstream: Transport, client: Transport) -> None:
        async for frame in frames(upstream):
            message = first_message(frame)
            if message.get("id") == HANDSHAKE_ID and "method" not in message:
                self._answered.set()
                continue
            await client.send(frame)

    async def _start(self, client: Transport, group: anyio.abc.TaskGroup, first: dict[str, Any]) -> Transport:
        if self._starting:
            await self._ready.wait()
            assert self._upstream is not None
            return self._upstream
        self._starting = True
        # The replay stands in for the server (a host started it): the server gets what the host gave it.
        self._process, upstream = await spawn(self.command, env=INHERIT)
        self._upstream = upstream
        group.start_soon(self._pump, upstream, client)
        self.live_handshake = first.get("method") == v2025.INITIALIZE
        if self.handshake is not None and not self.live_handshake:  # the recording answered the client's
            await upstream.send(json.dumps({**self.handshake, "id": HANDSHAKE_ID}).encode())
            with anyio.move_on_after(HANDSHAKE_SECONDS):
                await self._answered.wait()
            if self.initialized is not None:
                await upstream.send(json.dumps(self.initialized).encode())
        self._ready.set()
        return upstream

    async def forward(self, message: dict[str, Any], client: Transport, group: anyio.abc.TaskGroup) -> None:
        """Send a client message the recording has no answer for to the live server."""
        upstream = await self._start(client, group, message)
        await upstream.send(json.dumps(message).encode())

    async def aclose(self) -> None:
        process, upstream = self._process, self._upstream
        self._process = self._upstream = None
        if process is not None:
            await stop(process)
        if upstream is not None:
            await upstream.aclose()


@dataclass(eq=False)
class RecordingTransport(TransportBase):
    """A transport that writes every frame it carries to a recorder (in: client, out: server)."""

    inner: Transport
    recorder: Recorder
    session: str

    async def receive(self) -> bytes:
        frame = await self.inner.receive()
        self.recorder.frame("client", frame, session=self.session)
        return frame

    async def send(self, frame: bytes, related: RequestId | None = None) -> None:
        self.recorder.frame("server", frame, session=self.session)
        await self.inner.send(frame, related)

    async def aclose(self) -> None:
        await self.inner.aclose()
