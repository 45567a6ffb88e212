"""Newline-delimited JSON on pipes the event loop watches, on its own primitives (asyncio protocols).

The stdio server's transport: the loop hands each read to `_LineReader.data_received`, which cuts it
into frames and wakes the one reader waiting in `receive`; a frame is written straight to the pipe
transport, which writes it at once when it can and buffers it whole otherwise. No stream objects,
no task and no extra wake-up per frame: a call costs one wake-up of the reading task (none when
frames are already waiting) and one write.

Bounded like `LineTransport`: a frame over the limit is discarded as it arrives (the next `receive`
raises `OversizedMessage` in its place) and reading pauses while unread frames pile up; writing waits
only while the pipe's buffer is over its high-water mark, and a frame joins the buffer only once that
has passed (`_send_frame`). After large frames the heap is given back to the system (`trim.reclaim`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import Any, cast

import anyio

from mcp_bindings.runtime.rpc import jsonrpc
from mcp_bindings.runtime.rpc.jsonrpc import RequestId
from mcp_bindings.runtime.rpc.transport import DEFAULT_MAX_MESSAGE_BYTES, OversizedMessage, TransportBase

# Reading pauses while this many bytes of whole frames wait to be read (and resumes below half).
PAUSE_BYTES = 1 << 20


class _LineReader(asyncio.Protocol):
    """Cuts what the pipe delivers into frames; wakes the waiting reader."""

    def __init__(self, max_message_bytes: int) -> None:
        self.max = max_message_bytes
        self.frames: deque[bytes | None] = deque()  # None: an oversized frame was discarded here
        self.queued = 0  # bytes in `frames`
        self.partial = bytearray()  # the start of a frame whose newline has not arrived
        self.discarding = False  # skipping to the next newline after an oversized frame
        self.waiter: asyncio.Future[None] | None = None
        self.transport: asyncio.ReadTransport | None = None
        self.paused = False
        self.ended = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.ReadTransport, transport)

    def data_received(self, data: bytes) -> None:
        if not self.partial and not self.discarding and data.find(b"\n") == len(data) - 1 <= self.max:
            # The usual read: exactly one whole frame.
            frame = data[:-1].strip()
            if frame:
                self._queue(frame)
        else:
            self._split(data)
        if self.queued > PAUSE_BYTES and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        self._wake()

    def _split(self, data: bytes) -> None:
        start = 0
        while True:
            newline = data.find(b"\n", start)
            if newline < 0:
                break
            if self.discarding:
                self.discarding = False
            elif self.partial:
                self.partial += data[start:newline]
                frame = bytes(self.partial)
                self.partial.clear()
                self._take(frame)
            else:
                self._take(data[start:newline])
            start = newline + 1
        if start < len(data) and not self.discarding:
            self.partial += data[start:]
            if len(self.partial) > self.max:  # never buffer without bound: drop it, skip to the newline
                self.partial.clear()
                self.discarding = True
                self._queue(None)

    def _take(self, frame: bytes) -> None:
        if len(frame) > self.max:
            self._queue(None)
            return
        frame = frame.strip()
        if frame:
            self._queue(frame)

    def _queue(self, frame: bytes | None) -> None:
        self.frames.append(frame)
        if frame is not None:
            self.queued += len(frame)

    def eof_received(self) -> bool:
        rest = bytes(self.partial).strip()
        self.partial.clear()
        if rest and not self.discarding:
            self._queue(rest)
        self.ended = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class _LineWriter(asyncio.Protocol):
    """Flow control of the writing pipe: `drain` waits while the transport's buffer is full.

    Several senders may wait at once (concurrent answers larger than the pipe's buffer): each has
    its own future, and every one is woken when the pipe drains or is lost. A single shared slot
    would be overwritten by the second waiter and leave the first suspended for ever, holding its
    request and response (the leak of issue 28, item 1).
    """

    def __init__(self) -> None:
        self.paused = False
        self.lost = False
        self._waiters: deque[asyncio.Future[None]] = deque()

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self._release()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.paused = False
        self._release()

    def _release(self) -> None:
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)

    @property
    def waiting(self) -> int:
        """How many senders wait for the pipe to drain (0 once it drained or was lost)."""
        return len(self._waiters)

    async def drain(self) -> None:
        while self.paused and not self.lost:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if not waiter.done():  # cancelled while waiting: no longer a waiter
                    waiter.cancel()
                    with contextlib.suppress(ValueError):
                        self._waiters.remove(waiter)


SPLIT_BYTES = 64 * 1024  # a frame this large is written in parts, not joined (`PipeTransport._send_frame`)
# A frame this large, read or written, counts towards giving the heap back (`trim.reclaim`): glibc
# raises its mmap threshold to the largest block freed, so the copies of large frames (the line, its
# parsed strings, the result JSON) come from the heap afterwards, and it keeps them once freed.
RECLAIM_FRAME_BYTES = 128 * 1024


def _reclaim(size: int) -> None:
    # Imported on the first large frame: `trim` loads ctypes (about 2 ms of a stdio server's start-up),
    # which a server that never sees a large frame does without.
    from mcp_bindings.runtime.rpc.trim import reclaim

    reclaim(size)


class PipeTransport(TransportBase):
    """A transport over two pipes (or sockets) watched by the running asyncio loop."""

    def __init__(
        self,
        reader: _LineReader,
        read_transport: asyncio.ReadTransport,
        writer: _LineWriter,
        write_transport: asyncio.WriteTransport,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self._reader = reader
        self._read_transport = read_transport
        self._writer = writer
        self._write_transport = write_transport
        # The loop the pipes are connected to, kept: `asyncio.get_running_loop()` makes a system call
        # (getpid, its check against a fork) on every call, once per frame in `receive`.
        self._loop = loop

    @classmethod
    async def open(
        cls, read_pipe: Any, write_pipe: Any, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    ) -> PipeTransport:
        """Connect the running loop to `read_pipe` and `write_pipe` (file objects of pipes or sockets)."""
        loop = asyncio.get_running_loop()
        reader = _LineReader(max_message_bytes)
        writer = _LineWriter()
        read_transport, _ = await loop.connect_read_pipe(lambda: reader, read_pipe)
        write_transport, _ = await loop.connect_write_pipe(lambda: writer, write_pipe)
        return cls(reader, read_transport, writer, write_transport, loop)

    async def receive(self) -> bytes:
        reader = self._reader
        while not reader.frames:
            if reader.ended:
                raise anyio.EndOfStream
            loop = self._loop
            if loop is None:
                loop = self._loop = asyncio.get_running_loop()
            waiter = reader.waiter = loop.create_future()
            try:
                await waiter
            finally:
                reader.waiter = None
        frame = reader.frames.popleft()
        if frame is None:
            raise OversizedMessage(reader.max)
        size = len(frame)
        reader.queued -= size
        if size >= RECLAIM_FRAME_BYTES:  # a large request: given back a little after it is served
            _reclaim(size)
        if reader.paused and reader.queued < PAUSE_BYTES // 2:
            reader.paused = False
            self._read_transport.resume_reading()
        return frame

    async def send(self, frame: bytes, related: RequestId | None = None) -> None:
        await self._send_frame((frame, b"\n"))

    async def send_result(self, id: RequestId, result_json: bytes) -> None:
        """The envelope, the result JSON and the end of the frame as one frame (`_send_frame`): a
        10 MB result is not copied into a frame first. A small one, while the pipe takes it (the
        usual answer), is joined and written here, without `_send_frame`'s coroutine."""
        writer = self._writer
        if len(result_json) < SPLIT_BYTES and not writer.paused and not writer.lost:
            transport = self._write_transport
            if not transport.is_closing():
                transport.write(b"".join((jsonrpc.result_prefix(id), result_json, b"}\n")))
                if writer.paused:  # the pipe is full now: wait for it, as `_send_frame` does
                    await writer.drain()
                    if writer.lost:
                        raise anyio.BrokenResourceError
                return
        await self._send_frame((jsonrpc.result_prefix(id), result_json, b"}\n"))

    async def _send_frame(self, parts: tuple[bytes, ...]) -> None:
        """One frame from its parts, with no await between the writes, so two frames never interleave:
        joined into one write where small (one system call), written one after the other where large
        (no copy of a large body, which would briefly be held twice).

        A frame waits for the buffer to drain *before* it joins it, not only after. Joined while the
        pipe was full, every new answer kept the buffer over its low-water mark, so no sender was
        woken while answers kept coming: each held its request and response long after its own frame
        was written (18 answers of 1 MiB at once with 8 calls in flight; issue 44, item 1)."""
        writer = self._writer
        if writer.paused:
            await writer.drain()
        if writer.lost or self._write_transport.is_closing():
            raise anyio.BrokenResourceError
        write = self._write_transport.write
        size = sum(map(len, parts))
        if size < SPLIT_BYTES:
            write(b"".join(parts))
        else:
            for part in parts:
                write(part)
        if writer.paused:
            await writer.drain()
            if writer.lost:  # the reader went away while the frame waited in the buffer
                raise anyio.BrokenResourceError
        if size >= RECLAIM_FRAME_BYTES:  # its copies are freed by now: glibc's heap would keep them
            _reclaim(size)

    async def aclose(self) -> None:
        self._write_transport.close()
        self._read_transport.close()
