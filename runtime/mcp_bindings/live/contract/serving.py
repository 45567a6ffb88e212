"""`mcp-bindgen run TARGET`: serve the server object a file or module defines, on stdio or
Streamable HTTP (the URL printed first on stdout). `dev` (`contract.reload`) runs it as a child."""

from __future__ import annotations

import argparse
import socket
import sys
from typing import Any

from .connection import ExitCode, LiveError
from .target import Target, server_object


def url_of(host: str, port: int, path: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}"


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound, listening TCP socket (port 0: one the system picks); a taken port is a one-line error."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise LiveError(
            f"cannot listen on {host}:{port} ({exc.strerror}): pick another --port (0 lets the system choose)",
            ExitCode.CONNECTION,
        ) from exc
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def cmd_run(args: argparse.Namespace) -> int:
    target = Target.parse(args.target)
    value = server_object(target)
    server = getattr(value, "server", value)  # an App's server object, or the stub instance itself
    if args.transport == "stdio":
        from mcp_bindings.runtime.stdio.serve import serve_stdio

        serve_stdio(server)
        return 0
    sock = socket.socket(fileno=args.fd) if args.fd is not None else listening_socket(args.host, args.port)
    serve_on(server, sock, args.host, args.path, args.forwarded_allow_ips)
    return 0


def serve_on(server: Any, sock: socket.socket, host: str, path: str, forwarded_allow_ips: str = "") -> None:
    """Streamable HTTP on an already listening socket (the one `dev` keeps across reloads);
    `forwarded_allow_ips`: `--forwarded-allow-ips` (`HttpOptions.forwarded_allow_ips`)."""
    import uvicorn

    from mcp_bindings.runtime.http.app import create_app
    from mcp_bindings.runtime.http.serving import uvicorn_config

    port = int(sock.getsockname()[1])
    print(f"serving on {url_of(host, port, path)}", flush=True)
    config = uvicorn_config(create_app(server, path=path, forwarded_allow_ips=forwarded_allow_ips), host, port)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:  # Ctrl-C ends the server quietly, as `serve_http`
        pass
    sys.stdout.flush()
