"""Official MCP Python SDK (mcp==2.3.0) Streamable HTTP server with one ``echo`` tool.

Run: ``<official-venv>/bin/python benchmarks/peers/official_http_server.py --fd FD [--sse]``.
Serves ``Server.streamable_http_app()`` (path ``/mcp``, stateful sessions for
2025-11-25, the stateless single-exchange entry for 2026-07-28) under uvicorn on
the socket inherited as FD (bound on 127.0.0.1 by the harness: ``procs.listener``).
By default ``json_response=True`` so every peer answers a POST with one JSON body;
``--sse`` keeps the SDK's default SSE responses instead.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import uvicorn
from official_common import build_server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fd", type=int, required=True, help="the inherited socket to serve on")
    parser.add_argument("--sse", action="store_true", help="SDK default SSE responses instead of JSON")
    args = parser.parse_args()
    server = build_server()
    app = server.streamable_http_app(json_response=not args.sse, host="127.0.0.1")
    uvicorn.run(app, fd=args.fd, log_level="warning", access_log=False, lifespan="on")


if __name__ == "__main__":
    main()
