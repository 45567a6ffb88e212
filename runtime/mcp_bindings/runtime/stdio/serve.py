"""stdio, the server's side: serve one client on this process's stdin/stdout."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import signal
import stat
import sys
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

import anyio

from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.pipes import PipeTransport
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.rpc.transport import DEFAULT_MAX_MESSAGE_BYTES, LineTransport, Transport
from mcp_bindings.runtime.server.runtime import ServerRuntime
from mcp_bindings.runtime.server.stubs import ServerStub

log = logs.logger("stdio")


@dataclass(slots=True)
class _PipeReceive:
    """anyio-style receive stream over an asyncio pipe reader (no thread per read)."""

    _reader: asyncio.StreamReader

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await self._reader.read(max_bytes)
        if not data:
            raise anyio.EndOfStream
        return data

    async def aclose(self) -> None:
        return None


@dataclass(slots=True)
class _PipeSend:
    whole_frames = True  # `write` buffers the whole frame at once; only then does `send` wait (`LineTransport`)

    _writer: asyncio.StreamWriter

    async def send(self, data: bytes) -> None:
        # Into the buffer only once it has drained, as `rpc.pipes` does: a frame added to a full
        # buffer would keep every earlier sender (and what it holds) waiting.
        await self._writer.drain()
        self._writer.write(data)
        await self._writer.drain()

    async def aclose(self) -> None:
        self._writer.close()


@dataclass(slots=True)
class _FileReceive:
    """Reads a file descriptor the event loop cannot watch (a regular file: `server < requests.jsonl`)
    in a worker thread."""

    _fd: int

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await anyio.to_thread.run_sync(os.read, self._fd, max_bytes)
        if not data:
            raise anyio.EndOfStream
        return data

    async def aclose(self) -> None:
        os.close(self._fd)


@dataclass(slots=True)
class _FileSend:
    """Writes to a file descriptor the event loop cannot watch (`server > answers.jsonl`)."""

    _fd: int

    async def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = await anyio.to_thread.run_sync(os.write, self._fd, view)
            view = view[written:]

    async def aclose(self) -> None:
        os.close(self._fd)


async def open_stdio_transport(max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> Transport:
    """This process's stdin/stdout as a line transport (fd 1 then points at stderr): `serve_stdio`'s,
    and that of what speaks raw frames on stdio without a `ServerRuntime` (the recording proxy and
    replays)."""
    # Protocol bytes get a private duplicate of fd 1; fd 1 itself then points at stderr, so a stray
    # print() in server code (or a C library) can never corrupt the message stream.
    protocol_out = os.dup(1)
    os.dup2(2, 1)
    loop = asyncio.get_running_loop()
    receive: Any
    send: Any
    protocol_in = os.dup(0)
    if _watchable(protocol_in) and _watchable(protocol_out):  # the usual case: on the loop's own protocols
        return await PipeTransport.open(
            os.fdopen(protocol_in, "rb", buffering=0, closefd=False),
            os.fdopen(protocol_out, "wb", buffering=0, closefd=False),
            max_message_bytes,
        )
    if _watchable(protocol_in):  # pipes, sockets, terminals: watched by the event loop, no thread per read
        reader = asyncio.StreamReader(limit=max_message_bytes + 1)
        stdin = os.fdopen(protocol_in, "rb", buffering=0, closefd=False)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        receive = _PipeReceive(reader)
    else:  # a regular file or a device such as /dev/null
        receive = _FileReceive(protocol_in)
    if _watchable(protocol_out):
        stdout = os.fdopen(protocol_out, "wb", buffering=0, closefd=False)
        write_transport, write_protocol = await loop.connect_write_pipe(
            lambda: asyncio.streams.FlowControlMixin(), stdout
        )
        send = _PipeSend(asyncio.StreamWriter(write_transport, write_protocol, None, loop))  # type: ignore[arg-type]
    else:
        send = _FileSend(protocol_out)
    return LineTransport(receive, send, max_message_bytes)


async def serve_stdio_async(
    server: ServerStub,
    *,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    lifespan: Callable[[], AbstractAsyncContextManager[Any]] | None = None,
    **runtime_options: Any,
) -> None:
    """Serve one client on stdin/stdout until stdin ends or SIGTERM/SIGINT arrives. `runtime_options`
    go to `ServerRuntime` (e.g. `supported_versions=[...]`); `lifespan()` is entered around it all
    (what the server holds while it serves: the authoring layer's `App(lifespan=...)`)."""
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if lifespan is not None:
        async with lifespan():
            await serve_stdio_async(server, max_message_bytes=max_message_bytes, **runtime_options)
        return
    transport = await open_stdio_transport(max_message_bytes)
    runtime = ServerRuntime(server, **runtime_options)
    session = Session(transport, runtime)
    async with anyio.create_task_group() as task_group:

        async def stop_on_signal() -> None:
            await until_stopped()
            task_group.cancel_scope.cancel()

        task_group.start_soon(stop_on_signal)
        try:
            await session.run()
        finally:
            runtime.host.disconnect(runtime)  # its resource subscriptions are let go
        task_group.cancel_scope.cancel()


async def until_stopped() -> None:
    """Return once SIGTERM or SIGINT arrives: what stops a server or a tool run from a shell."""
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for _ in signals:
            return


def serve_stdio(server: ServerStub, **options: Any) -> None:
    """`serve_stdio(MyServer())`: the whole main() of a stdio MCP server (`options`: `serve_stdio_async`'s)."""
    # uvloop where installed (the `http` extra): its loop costs a fraction of asyncio's per message.
    # Not for regular files (`server < requests.jsonl`): libuv cannot watch them (asyncio raises and
    # we read them in a thread; uvloop would abort the process).
    ttys = os.isatty(0) or os.isatty(1)
    fast_loop = _watchable(0) and _watchable(1) and not ttys and importlib.util.find_spec("uvloop") is not None
    anyio.run(
        lambda: serve_stdio_async(server, **options),
        backend_options={"use_uvloop": fast_loop},
    )


def _watchable(fd: int) -> bool:
    """A pipe, socket or terminal: what an event loop can watch. Not a regular file (asyncio refuses
    it, uvloop aborts the process) nor another device such as /dev/null (epoll refuses it only once
    the loop runs: the server would hang)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)
