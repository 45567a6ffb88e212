"""Driving `mcp-bindgen` as a user does: the installed script as a subprocess (`bindgen`), and a
server it serves over Streamable HTTP for the length of a block (`served`), its URL read from the
first line it prints."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from tests.support import REPO_ROOT

SCRIPT = Path(sys.executable).parent / "mcp-bindgen"
APP_SERVER = REPO_ROOT / "examples" / "app_server.py"


def env(**extra: str) -> dict[str, str]:
    """The environment with this venv first on PATH (as a user who activated it has)."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PATH": path, **extra}


def bindgen(
    *args: str | Path, cwd: Path | None = None, timeout: float = 120, environ: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`mcp-bindgen ARGS...` run to its end (bounded), output captured, stdin closed (a command that
    serves on stdio ends at once); `environ` on top of `env()`."""
    return subprocess.run(
        [str(SCRIPT), *map(str, args)],
        stdin=subprocess.DEVNULL,
        cwd=cwd or REPO_ROOT,
        env=env(**(environ or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def read_url(process: subprocess.Popen[str], deadline: float = 30) -> str:
    """The URL of the `serving on URL` line a `run` / `dev` process prints first."""
    assert process.stdout is not None
    end = time.monotonic() + deadline
    line = ""
    while time.monotonic() < end and process.poll() is None:
        line = process.stdout.readline()
        if line.startswith("serving on "):
            return line.split()[2]
    raise AssertionError(f"no `serving on` line (exit {process.poll()}): {line!r}")


@contextlib.contextmanager
def served(command: Sequence[str | Path], cwd: Path | None = None) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`mcp-bindgen COMMAND...` (run or dev over HTTP on a free port) for the block: its URL and process."""
    process = subprocess.Popen(
        [str(SCRIPT), *map(str, command), "--transport", "http", "--port", "0"],
        cwd=cwd or REPO_ROOT,
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield read_url(process), process
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
