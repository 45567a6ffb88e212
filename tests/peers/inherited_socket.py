"""Serving a peer's ASGI app on the listening socket its test handed over (`--fd N`: bound once by the
test, `tests.support.bound_socket`, and inherited), so the peer binds no port of its own. Imported by
the peer scripts beside it (run by path, in whichever venv: it needs only uvicorn)."""

from __future__ import annotations

import socket
from typing import Any


def serve_on_fd(app: Any, fd: int, log_level: str = "warning") -> None:
    import uvicorn

    sock = socket.socket(fileno=fd)  # family and type read from the descriptor
    uvicorn.Server(uvicorn.Config(app, log_level=log_level)).run(sockets=[sock])
