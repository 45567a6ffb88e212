"""Ours on the authoring layer: the `echo` app of `examples/app_echo.py` (a decorated function), over
stdio or Streamable HTTP on an inherited socket, for the peers section (bench_peers.py).

Run: ``<ours python> benchmarks/peers/ours_app_echo.py --stub VERSION [--fd FD]``: stdio, or HTTP at
``/mcp`` on the socket inherited as FD (bound on 127.0.0.1 by the harness: ``procs.listener``), on the
stack `App.run` picks (httptools + uvloop where installed), as the stub echo of
``examples/echo_server.py`` runs.
"""

from __future__ import annotations

import argparse
import importlib.util
import socket
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "app_echo.py"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stub", required=True, help="the protocol version the app is written against")
    parser.add_argument("--fd", type=int, help="serve Streamable HTTP on this inherited socket")
    args = parser.parse_args()
    spec = importlib.util.spec_from_file_location("app_echo", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    app = module.make_app(args.stub)
    if args.fd is None:
        app.run()
    else:
        app.run("http", sock=socket.socket(fileno=args.fd))


if __name__ == "__main__":
    main()
