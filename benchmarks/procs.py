"""Process helpers: spawning peers, the sockets they serve on, reading /proc, guaranteed teardown."""

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
    pass_fds: Sequence[int] = (),
) -> subprocess.Popen:
    """Start a peer in its own session (so teardown can signal its whole group); stderr to a log.
    `pass_fds`: descriptors it inherits under the same numbers (a `listener()` to serve on)."""
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
            pass_fds=tuple(pass_fds),
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


def listener() -> socket.socket:
    """A TCP socket bound to 127.0.0.1 on a port the system picks, for one server process to serve on:
    spawned with `pass_fds=(sock.fileno(),)` and the number as its `--fd`, then this copy closed (the
    server's copy holds the port from then on). The port is `sock.getsockname()[1]`. Nothing here picks
    a port, closes it and lets a server bind it again later: another process (a test of the suite
    running in parallel) may take it in between. tests/benchmarks/test_bind_once.py keeps it so.

    Bound, not listening: the server listens when it is ready (uvicorn on an inherited socket calls
    `listen`), so a connection is refused until then and `wait_for_port` still tells when it serves;
    bound, the port is no other socket's meanwhile. TCP_NODELAY is set here, on the server's socket,
    because every connection accepted on it inherits it (Linux): uvicorn's `fd=` wraps an inherited
    descriptor as a Unix socket, so asyncio does not set it on the connections, and Nagle's algorithm
    with the client's delayed ACKs then holds a response written in two parts (head, body) about 40 ms
    (measured: 44 ms per call instead of 0.2 ms)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((LOOPBACK, 0))
    except OSError:
        sock.close()
        raise
    return sock


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


def process_cpu_clock(pid: int) -> int:
    """The clock id of process `pid`'s CPU clock (Linux: `MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)`,
    what `clock_getcpuclockid(3)` returns, which Python does not expose)."""
    return (~pid << 3) | 2


def cpu_seconds(pid: int) -> float:
    """CPU time of the whole process (all threads, reaped ones included), in seconds: its CPU clock,
    read to the nanosecond (the scheduler's own count, what `/proc/<pid>/task/*/schedstat` sums);
    `cpu_ticks` where that clock cannot be read (not Linux). The ticks of /proc/<pid>/stat are 10 ms:
    600 calls of 80 us read as 66.7, 83.3 or 100 us a call."""
    try:
        return time.clock_gettime(process_cpu_clock(pid))
    except OSError:  # not Linux's clock ids (or the process is gone: cpu_ticks says which)
        return cpu_ticks(pid)


def cpu_ticks(pid: int) -> float:
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
