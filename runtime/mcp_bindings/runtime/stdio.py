"""stdio: serve on this process's stdin/stdout, or spawn a server and talk to it over its pipes."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
from anyio.abc import Process

from .server import ServerRuntime
from .session import Session
from .stubs import ClientHandlerStub, ClientStub, ServerStub
from .transport import DEFAULT_MAX_MESSAGE_BYTES, LineTransport

log = logging.getLogger("mcp_bindings.runtime.stdio")

C = TypeVar("C", bound=ClientStub)
SHUTDOWN_GRACE_SECONDS = 2.0


class _PipeReceive:
    """anyio-style receive stream over an asyncio pipe reader (no thread per read)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await self._reader.read(max_bytes)
        if not data:
            raise anyio.EndOfStream
        return data

    async def aclose(self) -> None:
        return None


class _PipeSend:
    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def send(self, data: bytes) -> None:
        self._writer.write(data)
        await self._writer.drain()

    async def aclose(self) -> None:
        self._writer.close()


async def _stdio_transport(max_message_bytes: int) -> LineTransport:
    # Protocol bytes get a private duplicate of fd 1; fd 1 itself then points at stderr, so a stray
    # print() in server code (or a C library) can never corrupt the message stream.
    protocol_out = os.dup(1)
    os.dup2(2, 1)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=max_message_bytes + 1)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(0), "rb", buffering=0))
    write_transport, write_protocol = await loop.connect_write_pipe(
        lambda: asyncio.streams.FlowControlMixin(), os.fdopen(protocol_out, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)  # type: ignore[arg-type]
    return LineTransport(_PipeReceive(reader), _PipeSend(writer), max_message_bytes)  # type: ignore[arg-type]


async def serve_stdio_async(
    server: ServerStub, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, **runtime_options: Any
) -> None:
    """Serve one client on stdin/stdout until stdin ends or SIGTERM/SIGINT arrives. `runtime_options`
    go to `ServerRuntime` (e.g. `supported_versions=[...]`)."""
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    transport = await _stdio_transport(max_message_bytes)
    session = Session(transport, ServerRuntime(server, **runtime_options))
    async with anyio.create_task_group() as task_group:

        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for _ in signals:
                    task_group.cancel_scope.cancel()
                    return

        task_group.start_soon(stop_on_signal)
        await session.run()
        task_group.cancel_scope.cancel()


def serve_stdio(
    server: ServerStub, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, **runtime_options: Any
) -> None:
    """`serve_stdio(MyServer())`: the whole main() of a stdio MCP server."""
    anyio.run(lambda: serve_stdio_async(server, max_message_bytes=max_message_bytes, **runtime_options))


async def _shutdown(process: Process) -> None:
    """The spec's order: close the server's stdin, wait, SIGTERM, wait, SIGKILL."""
    with anyio.CancelScope(shield=True):
        if process.stdin is not None:
            try:
                await process.stdin.aclose()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                pass
        with anyio.move_on_after(SHUTDOWN_GRACE_SECONDS):
            await process.wait()
            return
        try:
            process.terminate()
        except ProcessLookupError:
            return
        with anyio.move_on_after(SHUTDOWN_GRACE_SECONDS):
            await process.wait()
            return
        try:
            process.kill()
        except ProcessLookupError:
            return
        await process.wait()


@asynccontextmanager
async def connect_stdio(
    command: Sequence[str],
    client: type[C],
    *,
    handlers: ClientHandlerStub | None = None,
    protocol_version: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    request_timeout: float | None = None,
    stderr: Any = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> AsyncGenerator[C, None]:
    """Spawn a stdio server, initialize, and yield the typed client; shut the server down after."""
    from .client import (
        connect,  # here, not at the top: a stdio *server* never loads the client side
    )

    process = await anyio.open_process(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=dict(env) if env is not None else None,
        cwd=cwd,
    )
    assert process.stdout is not None and process.stdin is not None
    transport = LineTransport(process.stdout, process.stdin, max_message_bytes)
    try:
        async with connect(
            transport, client, handlers=handlers, protocol_version=protocol_version, request_timeout=request_timeout
        ) as typed:
            yield typed
    finally:
        await _shutdown(process)
