"""Message transports: a frame is one JSON-RPC message (or batch) as bytes.

A transport has `receive() -> bytes` (raising `anyio.EndOfStream` at the end), `send(frame,
related)` and `aclose()`. `related` is the id of the peer's request a message belongs to (progress,
logs and server requests sent while handling it), None for messages of the connection as a whole:
a transport with one channel ignores it, Streamable HTTP routes by it (the request's response
stream, else the GET stream). What else a transport can do it declares in `features`, and the
runtime asks nothing it did not declare. Here: newline-delimited streams (subprocess pipes, and
stdio where it is a file or device; the stdio server's pipes are `pipes.PipeTransport`) and an
in-memory pair for tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, ObjectReceiveStream, ObjectSendStream

from mcp_bindings.runtime.rpc import jsonrpc
from mcp_bindings.runtime.rpc.jsonrpc import RequestId

DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024

# Per-message HTTP headers of a stateless request (Mcp-Method, Mcp-Name, Mcp-Param-*), from the message.
HeaderHook = Callable[[dict[str, Any]], Mapping[str, str]]


@dataclass(frozen=True, slots=True)
class Features:
    """Optional abilities of a transport; each names the method that provides it."""

    # `close_stream(related)`: end the response stream of one request early (resumable HTTP, SEP-1699).
    closes_streams: bool = False
    # `use_version(version, header_hook)`: the wire carries the protocol version and per-message
    # headers outside the body (client side of Streamable HTTP).
    message_headers: bool = False
    # `open_server_stream()`: a channel for what the server sends outside any response (the GET
    # stream of a Streamable HTTP session).
    server_stream: bool = False
    # The client can start the peer again (a stdio server process): in "auto", a server that leaves
    # the `server/discover` probe unanswered or closes on it is restarted for the handshake.
    respawns: bool = False


PLAIN = Features()


class Transport(Protocol):
    @property
    def features(self) -> Features: ...

    async def receive(self) -> bytes: ...

    async def send(self, frame: bytes, related: RequestId | None = None) -> None: ...

    async def send_result(self, id: RequestId, result_json: bytes) -> None:
        """Send the result response of request `id` around already-serialised result JSON."""
        ...

    async def aclose(self) -> None: ...

    # Optional (see `Features`); `TransportBase` has do-nothing versions.
    async def close_stream(self, related: RequestId) -> None: ...

    def use_version(self, version: str | None, header_hook: HeaderHook | None) -> None: ...

    async def open_server_stream(self) -> None: ...


class TransportBase:
    """No optional features; the methods behind them do nothing (subclasses override what they declare)."""

    features: Features = PLAIN

    async def send(self, frame: bytes, related: RequestId | None = None) -> None:
        raise NotImplementedError

    async def send_result(self, id: RequestId, result_json: bytes) -> None:
        """The response as one frame (`send`); a transport writing to a stream may instead write
        the envelope and the result JSON one after the other, without a copy of the result."""
        await self.send(jsonrpc.encode_result(id, result_json), id)

    async def close_stream(self, related: RequestId) -> None:
        return None

    def use_version(self, version: str | None, header_hook: HeaderHook | None) -> None:
        return None

    async def open_server_stream(self) -> None:
        return None


class QueueTransport(TransportBase):
    """A transport whose incoming frames something else puts on a memory stream (`_inbound`)."""

    _inbound: ObjectReceiveStream[bytes]

    async def receive(self) -> bytes:
        try:
            return await self._inbound.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise anyio.EndOfStream from None


class OversizedMessage(Exception):
    """A frame longer than the configured limit; it was discarded, not buffered."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"message exceeds the {limit}-byte limit and was discarded")
        self.limit = limit


class LineTransport(TransportBase):
    """Newline-delimited JSON over a byte stream pair (stdio, a child's pipes)."""

    def __init__(
        self,
        receive_stream: ByteReceiveStream,
        send_stream: ByteSendStream,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self._receive_stream = receive_stream
        self._send_stream = send_stream
        self._max = max_message_bytes
        self._buffer = bytearray()
        self._discarding = False
        # fast_acquire: an uncontended send does not yield to the event loop (a request served by
        # the reader is then answered without a task switch; see `session`).
        self._send_lock = anyio.Lock(fast_acquire=True)
        # A stream that takes each frame whole before it waits (`whole_frames`, e.g. stdio's asyncio
        # pipe writer) cannot interleave two frames: no lock needed.
        self._whole_frames: bool = getattr(send_stream, "whole_frames", False)

    async def receive(self) -> bytes:
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                frame = bytes(self._buffer[:newline])
                del self._buffer[: newline + 1]
                if self._discarding:
                    self._discarding = False
                    continue
                if len(frame) > self._max:
                    raise OversizedMessage(self._max)
                frame = frame.strip()
                if frame:
                    return frame
                continue
            if len(self._buffer) > self._max:
                # Drop what we have and skip to the next newline: never buffer without bound.
                self._buffer.clear()
                if not self._discarding:
                    self._discarding = True
                    raise OversizedMessage(self._max)
            try:
                chunk = await self._receive_stream.receive(65536)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                rest = bytes(self._buffer).strip()
                self._buffer.clear()
                if rest and not self._discarding:
                    return rest
                raise anyio.EndOfStream from None
            if not self._buffer and not self._discarding and chunk.find(b"\n") == len(chunk) - 1 <= self._max:
                # The usual read: exactly one whole frame. Taken as is, without the buffer's copies.
                frame = chunk[:-1].strip()
                if frame:
                    return frame
                continue
            self._buffer += chunk

    async def send(self, frame: bytes, related: RequestId | None = None) -> None:
        if self._whole_frames:
            await self._send_stream.send(frame + b"\n")
            return
        async with self._send_lock:
            await self._send_stream.send(frame + b"\n")

    async def aclose(self) -> None:
        for stream in (self._send_stream, self._receive_stream):
            try:
                await stream.aclose()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                pass


class MemoryTransport(QueueTransport):
    """One end of an in-memory pair."""

    def __init__(self, send_stream: ObjectSendStream[bytes], receive_stream: ObjectReceiveStream[bytes]) -> None:
        self._send_stream = send_stream
        self._inbound = receive_stream

    async def send(self, frame: bytes, related: RequestId | None = None) -> None:
        try:
            await self._send_stream.send(frame)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            raise anyio.BrokenResourceError from None

    async def aclose(self) -> None:
        await self._send_stream.aclose()
        await self._inbound.aclose()


def memory_pair() -> tuple[MemoryTransport, MemoryTransport]:
    """Two connected transports (client end, server end)."""
    a_send, b_receive = anyio.create_memory_object_stream[bytes](math.inf)
    b_send, a_receive = anyio.create_memory_object_stream[bytes](math.inf)
    return MemoryTransport(a_send, a_receive), MemoryTransport(b_send, b_receive)
