"""Process helpers: spawning peers, reading /proc, free ports, guaranteed teardown."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from benchmarks.config import LOG_DIR, LOOPBACK

CLK_TCK = os.sysconf("SC_CLK_TCK")

_LIVE: set[subprocess.Popen] = set()


def spawn(
    argv: Sequence[str],
    *,
    env: dict[str, str],
    log_name: str,
    stdin: int | None = subprocess.DEVNULL,
    stdout: int | None = subprocess.DEVNULL,
    cwd: Path | None = None,
) -> subprocess.Popen:
    """Start a peer in its own session (so teardown can signal its whole group); stderr to a log."""
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    log = open(LOG_DIR / f"{log_name}.log", "ab")  # noqa: SIM115 - closed with the process
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=stdin,
            stdout=stdout,
            stderr=log,
            env=env,
            cwd=str(cwd) if cwd else None,
            bufsize=0,
            start_new_session=True,
        )
    finally:
        log.close()
    _LIVE.add(proc)
    return proc


def stop(proc: subprocess.Popen, grace: float = 3.0) -> None:
    """Close stdin, wait briefly, then SIGTERM, then SIGKILL the peer's process group. Idempotent."""
    try:
        if proc.stdin and not proc.stdin.closed:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        if proc.poll() is None:
            try:
                proc.wait(timeout=min(grace, 1.0) if proc.stdin else 0.05)
            except subprocess.TimeoutExpired:
                pass
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if proc.poll() is not None:
                break
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, sig)
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                continue
        # The group may still hold children the peer spawned; end them too.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.stdout and not proc.stdout.closed:
            with contextlib.suppress(OSError):
                proc.stdout.close()
        _LIVE.discard(proc)


def stop_all() -> None:
    """Last-resort teardown of every peer this process started (only those)."""
    for proc in list(_LIVE):
        stop(proc, grace=0.5)


@contextlib.contextmanager
def running(proc: subprocess.Popen) -> Iterator[subprocess.Popen]:
    try:
        yield proc
    finally:
        stop(proc)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def wait_for_port(proc: subprocess.Popen, port: int, timeout: float) -> float:
    """Block until the peer accepts TCP on 127.0.0.1:port; returns seconds waited."""
    start = time.perf_counter()
    deadline = start + timeout
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection((LOOPBACK, port), timeout=0.5):
                return time.perf_counter() - start
        except OSError:
            time.sleep(0.02)
    raise TimeoutError(f"server did not listen on {port} within {timeout}s")


def cpu_seconds(pid: int) -> float:
    """utime + stime of the whole process (all threads, reaped ones included) from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        data = f.read()
    fields = data[data.rindex(b")") + 2 :].split()
    # fields[0] is state (field 3); utime is field 14, stime field 15.
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def memory_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (KiB) from /proc/<pid>/status."""
    out: dict[str, int] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":", 1)
                out[key] = int(value.split()[0])
    return out
