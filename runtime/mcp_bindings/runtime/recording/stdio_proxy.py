"""Recording a stdio server: a transparent proxy on this process's stdin/stdout that spawns the
server and passes every frame through unchanged, writing each to the session file."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Sequence

import anyio

from mcp_bindings.runtime.recording.recorder import Recorder
from mcp_bindings.runtime.recording.redaction import DEFAULT, Redaction
from mcp_bindings.runtime.recording.session_file import Direction, SessionWriter, new_header
from mcp_bindings.runtime.rpc.transport import DEFAULT_MAX_MESSAGE_BYTES, OversizedMessage, Transport
from mcp_bindings.runtime.stdio.connect import INHERIT, ChildEnv, spawn
from mcp_bindings.runtime.stdio.connect import shutdown_process as stop  # the spec's order: stdin, SIGTERM, SIGKILL
from mcp_bindings.runtime.stdio.serve import open_stdio_transport, until_stopped


async def frames(source: Transport) -> AsyncIterator[bytes]:
    """The frames `source` receives until it ends (an oversized one is skipped)."""
    while True:
        try:
            yield await source.receive()
        except OversizedMessage:
            continue
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return


async def pump(source: Transport, target: Transport, recorder: Recorder, direction: Direction, session: str) -> None:
    """Pass frames from `source` to `target` until `source` ends, recording each."""
    async for frame in frames(source):
        recorder.frame(direction, frame, session=session)
        try:
            await target.send(frame)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            return


async def record_stdio(
    command: Sequence[str],
    output: str | os.PathLike[str],
    *,
    redaction: Redaction = DEFAULT,
    env: ChildEnv = INHERIT,
    cwd: str | None = None,
    client: Transport | None = None,
    stop_on_signals: bool | None = None,
) -> int:
    """Proxy `client` (default: this process's stdin/stdout) to the server `command`, recording every
    frame to `output`, until either side ends (or, on our own stdio, SIGTERM/SIGINT arrives: the
    server is stopped in the spec's order); returns how many messages were recorded.

    The server gets our whole environment by default (`env=INHERIT`): the recorder stands in for it,
    started by a host with the environment the host chose for the server (a host's config `env`). A
    mapping gives it the safe variables and the mapping only (`child_environment`)."""
    server = {"command": [redaction.text(part) for part in command]}  # a secret passed as an argument, too
    writer = SessionWriter(output, new_header("stdio", server, redaction.describe()))
    recorder = Recorder(writer, "stdio", redaction)
    session = uuid.uuid4().hex
    if stop_on_signals is None:
        stop_on_signals = client is None  # on our own stdio we are a process of our own
    try:
        if client is None:
            client = await open_stdio_transport(DEFAULT_MAX_MESSAGE_BYTES)
        process, server = await spawn(command, env=env, cwd=cwd)
        try:
            async with anyio.create_task_group() as group:

                async def to_server() -> None:
                    await pump(client, server, recorder, "client", session)
                    await stop(process)  # the client is gone: the server's stdin closes too

                async def to_client() -> None:
                    await pump(server, client, recorder, "server", session)
                    group.cancel_scope.cancel()  # the server is gone: nothing more will come

                async def on_signal() -> None:  # the host stops us: stop the server too (the finally below)
                    await until_stopped()
                    group.cancel_scope.cancel()

                group.start_soon(to_server)
                group.start_soon(to_client)
                if stop_on_signals:
                    group.start_soon(on_signal)
        finally:
            await stop(process)
            await client.aclose()
    finally:
        writer.close()
    return writer.count
