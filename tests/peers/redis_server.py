"""A private redis-server for the scale-out tests (the `redis_server` fixture of tests/conftest.py
starts one per test module), on a Unix socket in its own directory: no TCP port to pick (and lose to
another process between picking and binding), and the same address again after a restart."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.support import stop


class RedisServer:
    """A private redis-server on `directory`/redis.sock (no TCP, no persistence, its own directory)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.socket = directory / "redis.sock"
        self.url = f"unix://{self.socket}"
        self.process: subprocess.Popen[bytes] | None = None
        self.options = ("--save", "", "--appendonly", "no", "--dir", str(directory), "--protected-mode", "yes")

    def start(self) -> None:
        exe = shutil.which("redis-server")
        assert exe is not None
        self.process = subprocess.Popen(
            [exe, "--port", "0", "--unixsocket", str(self.socket), "--unixsocketperm", "700", *self.options],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    sock.settimeout(0.5)
                    sock.connect(str(self.socket))
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            if time.monotonic() > deadline or self.process.poll() is not None:
                pytest.fail("redis-server did not start within 10 s")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process, grace=5)
            self.process = None
