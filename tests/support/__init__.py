"""Helpers shared by the test modules (import them from here, never from another `test_*` module;
tests/test_layout.py checks that). Fixtures live in the conftest.py files; what is here is plain code:

- this package: `REPO_ROOT`, `shared_schema_dir`, `cache_lock`; ports: `bound_socket`, `refused_port`,
  `announced_url`, `said_url`, `url_in`, `port_of` (a server binds its port once, 0 or a socket handed
  over, and says where: nothing here picks a port for a server to bind again later);
- `pipeline`: the pinned versions and the generator's results per version, computed once per session;
- `http`: a server on uvicorn in a thread (`serve_in_thread`) and raw Streamable HTTP wire helpers;
- `sdk`: the official SDK's venv (Python) and the TypeScript SDK peers;
- `scaleout`: several uvicorn workers sharing a private Redis (`Deployment`) and their wire helpers;
- `auth`: the authorization tests' tokens and stateless requests;
- `message_path`: a `ServerRuntime` driven without an event loop;
- `tasks`: a server whose tool runs as a task;
- `pyright_snippet`: pyright strict over a snippet;
- `child_env`: what a stdio server started by the runtime may inherit (the secrets it must not).
- `wheel`: mcp-bindgen's wheel, built once per source tree into .cache/wheel/, and fresh venvs to install it in.

The peers run as processes (tests/peers/) stay there: their files are run as scripts by path.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

REPO_ROOT = Path(__file__).resolve().parent.parent.parent


def bound_socket(host: str = "127.0.0.1") -> socket.socket:
    """A TCP socket bound to a port the system picks on `host`, for a server to listen on (in this
    process, or inherited by a child: `pass_fds`). Never close it to hand its number to a server that
    binds it again: another process may take the port in between (the suite runs in parallel)."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((host, 0))
    return sock


@contextlib.contextmanager
def refused_port() -> Iterator[int]:
    """A port on 127.0.0.1 where nothing listens, for the block: bound but not listening, so a connection
    to it is refused and no other socket can take it meanwhile."""
    with bound_socket() as sock:
        yield int(sock.getsockname()[1])


def url_in(text: str) -> str | None:
    """The first `http://` URL in `text` (a server's announcement), or None."""
    found = re.search(r"http://[^\s,;)]+", text)
    return found.group(0).rstrip(".") if found else None


def said_url(stream: IO[str] | None, after: str = "") -> str:
    """The URL a process given port 0 says it listens at, read from `stream` (its stdout or stderr, a
    pipe): the first URL after `after` on the first line holding it. Fails if the stream ends first."""
    assert stream is not None, "the process's output is not a pipe"
    seen: list[str] = []
    for line in iter(stream.readline, ""):
        seen.append(line)
        url = url_in(line.split(after, 1)[1]) if after in line else None
        if url is not None:
            return url
    raise AssertionError("the process exited before it said where it listens: " + "".join(seen)[-2000:])


def announced_url(log: Path, process: subprocess.Popen[Any], deadline: float = 30) -> str:
    """The URL a server started on port 0 says it serves at once it listens (serve_http's `serving MCP
    (Streamable HTTP) at URL`, `replaying ... at URL`, ...), read from `log`, the file its output goes
    to: the server binds once and tells, nothing picks a port for it. Fails if it exits first."""
    end = time.monotonic() + deadline
    while True:
        text = log.read_text(errors="replace") if log.exists() else ""
        url = url_in(text)
        if url is not None:
            return url
        if process.poll() is not None:
            raise AssertionError(f"the server exited ({process.returncode}) before it listened:\n{text[-2000:]}")
        if time.monotonic() > end:
            raise AssertionError(f"the server did not listen within {deadline} s:\n{text[-2000:]}")
        time.sleep(0.05)


def stop(process: subprocess.Popen[Any], grace: float = 10) -> None:
    """End a server process the test started: SIGTERM, then SIGKILL after `grace` seconds."""
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def port_of(url: str) -> int:
    return int(urlsplit(url).port or 80)


def shared_schema_dir() -> Path:
    """The folder of official schemas CI passes to `schema sync` (env override for other layouts)."""
    return Path(os.environ.get("MCP_SCHEMA_DIR", REPO_ROOT.parent / "shared" / "mcp-schema")).resolve()


@contextlib.contextmanager
def cache_lock(entry: Path) -> Iterator[None]:
    """Hold an exclusive lock on a cache entry under .cache/ (a venv, an npm prefix) for the block: test
    processes run in parallel (pytest-xdist) build an entry once, the others wait and then reuse it.
    Check the entry's stamp inside the block. The lock file sits beside the entry and stays."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    with open(entry.parent / f".{entry.name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
        yield
