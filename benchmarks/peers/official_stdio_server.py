"""Official MCP Python SDK (mcp==2.3.0) low-level stdio server with one ``echo`` tool.

Run: ``<official-venv>/bin/python benchmarks/peers/official_stdio_server.py``.
``Server.run`` drives the SDK's dual-era loop: a client that opens with
``initialize`` gets the 2025-11-25 handshake era, a client whose first request
carries the 2026-07-28 ``_meta`` envelope gets the stateless era.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import anyio
from mcp.server.stdio import stdio_server
from official_common import build_server


async def main() -> None:
    server = build_server()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
