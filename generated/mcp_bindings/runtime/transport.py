"""Message transports: a frame is one JSON-RPC message (or batch) as bytes.

A transport is anything with `receive() -> bytes` (raising `anyio.EndOfStream` at the end),
`send(bytes)` and `aclose()`. Here: newline-delimited streams (stdio, subprocess pipes) and an
in-memory pair for tests.
"""

from __future__ import annotations

import math
from typing import Protocol

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024


class Transport(Protocol):
    async def receive(self) -> bytes: ...

    async def send(self, frame: bytes) -> None: ...

    async def aclose(self) -> None: ...


class OversizedMessage(Exception):
    """A frame longer than the configured limit; it was discarded, not buffered."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"message exceeds the {limit}-byte limit and was discarded")
        self.limit = limit


class LineTransport:
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
        self._send_lock = anyio.Lock()

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
            self._buffer += chunk

    async def send(self, frame: bytes) -> None:
        async with self._send_lock:
            await self._send_stream.send(frame + b"\n")

    async def aclose(self) -> None:
        for stream in (self._send_stream, self._receive_stream):
            try:
                await stream.aclose()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                pass


class MemoryTransport:
    """One end of an in-memory pair."""

    def __init__(
        self,
        send_stream: anyio.abc.ObjectSendStream[bytes],
        receive_stream: anyio.abc.ObjectReceiveStream[bytes],
    ) -> None:
        self._send_stream = send_stream
        self._receive_stream = receive_stream

    async def receive(self) -> bytes:
        try:
            return await self._receive_stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise anyio.EndOfStream from None

    async def send(self, frame: bytes) -> None:
        try:
            await self._send_stream.send(frame)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            raise anyio.BrokenResourceError from None

    async def aclose(self) -> None:
        await self._send_stream.aclose()
        await self._receive_stream.aclose()


def memory_pair() -> tuple[MemoryTransport, MemoryTransport]:
    """Two connected transports (client end, server end)."""
    a_send, b_receive = anyio.create_memory_object_stream[bytes](math.inf)
    b_send, a_receive = anyio.create_memory_object_stream[bytes](math.inf)
    return MemoryTransport(a_send, a_receive), MemoryTransport(b_send, b_receive)
