"""stdio, the client's side: spawn a server process and talk to it over its pipes (the spec's shutdown
order on exit: close stdin, wait, SIGTERM, wait, SIGKILL). What the server's environment holds is
decided here, once, for every path that starts one (`child_environment`)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import deque
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from enum import Enum
from functools import partial
from typing import Any, Final, Literal, TypeVar, Unpack

import anyio
from anyio.abc import Process

from mcp_bindings.runtime.client.options import ClientArgs, ClientOptions
from mcp_bindings.runtime.client.runtime import ProbeFailedError, connect
from mcp_bindings.runtime.client.stub import ClientStub
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.errors import ConnectionClosed, sole_exception
from mcp_bindings.runtime.rpc.transport import DEFAULT_MAX_MESSAGE_BYTES, Features, LineTransport

log = logs.logger("stdio")

C = TypeVar("C", bound=ClientStub)
SHUTDOWN_GRACE_SECONDS = 2.0
RESPAWNS = Features(respawns=True)


class Inherit(Enum):
    """`env=INHERIT`: the server gets this process's whole environment (opt-in; see `child_environment`)."""

    INHERIT = "inherit"


INHERIT: Final = Inherit.INHERIT
ChildEnv = Mapping[str, str] | Literal[Inherit.INHERIT] | None

# What a stdio server inherits by default: the official SDK's list (mcp.client.stdio), which names
# what a program needs to find itself and the user, and nothing that is anyone's secret; plus the
# locale and time zone (how the server reads and writes text and dates) and, on POSIX, TMPDIR (the
# per-user temporary folder, e.g. on macOS; the Windows list has TEMP); and PYTHONPATH, where a Python
# server run from its source (a project not installed, its tests) finds its own package: no secret,
# and without it such a server exits before the handshake with nothing to say why.
SAFE_POSIX = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LANGUAGE", "TZ", "TMPDIR", "PYTHONPATH")
SAFE_WINDOWS = (
    "APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE",
    "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE", "PYTHONPATH",
)  # fmt: skip
SAFE_PREFIXES = ("LC_",)  # LC_ALL, LC_CTYPE, ...


def child_environment(env: ChildEnv = None) -> dict[str, str]:
    """The environment of a stdio server this process starts (`connect_stdio`, `App.proxy(command)`,
    the CLI's commands that start a server): the safe variables of this process's environment
    (`SAFE_POSIX` or, on Windows, `SAFE_WINDOWS`, and `LC_*`; a value starting with "()", an exported
    shell function, is left out), then `env` over them. `env=INHERIT`: the whole environment."""
    if env is INHERIT:
        return dict(os.environ)
    names = SAFE_WINDOWS if sys.platform == "win32" else SAFE_POSIX
    safe = {
        name: value
        for name, value in os.environ.items()
        if (name.upper() in names or name.startswith(SAFE_PREFIXES)) and not value.startswith("()")
    }
    return {**safe, **(env or {})}


async def shutdown_process(process: Process) -> None:
    """The spec's order: close the server's stdin, wait, SIGTERM, wait, SIGKILL."""
    with anyio.CancelScope(shield=True):
        if process.stdin is not None:
            try:
                await process.stdin.aclose()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                pass
        for stop in (process.terminate, process.kill):  # each after a grace period of waiting
            with anyio.move_on_after(SHUTDOWN_GRACE_SECONDS):
                await process.wait()
                return
            try:
                stop()
            except ProcessLookupError:
                return
        await process.wait()


async def spawn(
    command: Sequence[str],
    *,
    env: ChildEnv = None,
    cwd: str | None = None,
    stderr: Any = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> tuple[Process, LineTransport]:
    """Start a stdio server (its stderr goes to ours unless `stderr` says otherwise); its pipes as a
    line transport. Its environment is `child_environment(env)`: the safe variables of ours and
    `env`, or all of ours (`INHERIT`). `ConnectionError` naming the command when it cannot start."""
    try:
        process = await anyio.open_process(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=child_environment(env),
            cwd=cwd,
        )
    except OSError as exc:
        raise ConnectionError(f"cannot start the MCP server {list(command)!r}: {exc}") from None
    assert process.stdout is not None and process.stdin is not None
    return process, LineTransport(process.stdout, process.stdin, max_message_bytes)


@asynccontextmanager
async def connect_stdio(
    command: Sequence[str],
    client: type[C],
    *,
    env: ChildEnv = None,
    cwd: str | None = None,
    stderr: Any = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    options: ClientOptions | None = None,
    **args: Unpack[ClientArgs],
) -> AsyncGenerator[C, None]:
    """Spawn a stdio server, initialize, and yield the typed client; shut the server down after.
    `options` (or the same as keyword arguments) are `client.connect`'s: see `ClientOptions`.

    The server does not get this process's environment: only the safe variables (PATH, HOME, the
    locale, ...) and `env` over them (`child_environment`); `env=INHERIT` gives it everything.

    The server's stderr goes to this process's stderr unless `stderr` says otherwise; its last lines
    are kept, so that a server that exits before answering is reported with its exit code and them.
    `stderr=TAIL_ONLY` keeps those last lines without echoing anything (a tool that reports them).

    With `protocol_version="auto"`, a server that leaves the `server/discover` probe unanswered
    (within `probe_timeout`) or closes on it is started again for the `initialize` handshake: one on
    an old SDK (mcp 1.1.x) stops reading on a method it cannot parse, and is only good for a fresh
    start. Restarting only then, rather than probing every server in a throw-away process first,
    costs nothing for the servers that answer the probe, with a result or an error (all current
    ones, and the legacy servers that follow JSON-RPC): they are started once."""
    settings = ClientOptions.of(options, args)
    spawn = partial(_spawned, command, client, env, cwd, stderr, max_message_bytes)
    started = False
    try:
        async with spawn(settings) as typed:
            started = True
            yield typed
        return
    except ProbeFailedError:
        if started or settings.protocol_version != "auto":
            raise
    handshake = registry.info(registry.default_version(stateless=False)).version
    log.info("the MCP server %r failed the server/discover probe; starting it again for initialize", list(command))
    async with spawn(replace(settings, protocol_version=handshake)) as typed:
        yield typed


@asynccontextmanager
async def _spawned(
    command: Sequence[str],
    client: type[C],
    env: ChildEnv,
    cwd: str | None,
    stderr: Any,
    max_message_bytes: int,
    settings: ClientOptions,
) -> AsyncGenerator[C, None]:
    """One server process and the client session over its pipes."""
    tail = _StderrTail(echo=stderr is None) if stderr is None or stderr is TAIL_ONLY else None
    process, transport = await spawn(
        command,
        env=env,
        cwd=cwd,
        stderr=subprocess.PIPE if tail is not None else stderr,
        max_message_bytes=max_message_bytes,
    )
    transport.features = RESPAWNS  # this function can start the server again ("auto": `connect_stdio`)
    started = False
    try:
        async with anyio.create_task_group() as group:
            if tail is not None and process.stderr is not None:
                group.start_soon(tail.follow, process.stderr)
            try:
                async with connect(transport, client, options=settings) as typed:
                    started = True
                    yield typed
            except (ConnectionClosed, anyio.BrokenResourceError, anyio.EndOfStream, anyio.ClosedResourceError) as exc:
                if started:
                    raise
                raise await _exited(process, tail, command, exc) from None
            finally:
                await shutdown_process(process)
                group.cancel_scope.cancel()
    except BaseExceptionGroup as group_error:
        sole = sole_exception(group_error)
        if sole is None:
            raise
        raise sole from None


TAIL_ONLY: Any = object()  # `connect_stdio(stderr=TAIL_ONLY)`: keep the server's last stderr lines, echo none


class _StderrTail:
    """Forwards a child's stderr to ours, keeping its last lines for error messages."""

    def __init__(self, keep: int = 20, echo: bool = True) -> None:
        self.lines: deque[str] = deque(maxlen=keep)
        self.echo = echo

    async def follow(self, stream: anyio.abc.ByteReceiveStream) -> None:
        pending = b""
        try:
            async for chunk in stream:
                if self.echo:
                    sys.stderr.buffer.write(chunk)
                    sys.stderr.flush()
                pending += chunk
                *complete, pending = pending.split(b"\n")
                self.lines.extend(line.decode("utf-8", "replace") for line in complete)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        if pending:
            self.lines.append(pending.decode("utf-8", "replace"))


async def _exited(
    process: Process, tail: _StderrTail | None, command: Sequence[str], cause: BaseException
) -> Exception:
    """The error for a server that went away before the handshake: its exit code and stderr's end."""
    with anyio.move_on_after(1):
        await process.wait()
    code = process.returncode
    what = f"exited with code {code}" if code is not None else f"closed its stdout ({type(cause).__name__})"
    message = f"the MCP server {list(command)!r} {what} before answering the handshake"
    if tail is not None and tail.lines:
        message += "; its stderr ends with:\n" + "\n".join(tail.lines)
    return ConnectionError(message)
