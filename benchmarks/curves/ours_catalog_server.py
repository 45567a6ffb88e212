"""Ours' server for the catalog curve and the hit rates (``benchmarks/curves/catalog.py``,
``hits.py``): the tools of a catalog file (JSON, a list of tool definitions as ``tools/list`` lists
them) on the low-level 2025-11-25 stub, each answering its ``text`` argument; ``--search`` puts
``ToolSearch`` in front (docs/discovery.md: ``search_tools``, ``describe_tool``, ``call_tool``).
Its twins: ``peers/official_catalog_server.py`` (the official SDK's low-level ``Server``; no search) and
``peers/fastmcp_catalog_server.py`` (FastMCP; ``--search``: its ``BM25SearchTransform``). stdio.

    .venv/bin/python benchmarks/curves/ours_catalog_server.py --catalog FILE [--search]
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from mcp_bindings.runtime.protocol.context import RequestContext
from mcp_bindings.v2025_11_25 import models as m
from mcp_bindings.v2025_11_25.server import Server


def build(tools: list[dict[str, Any]], search: bool) -> Server:
    listed = m.ListToolsResult.model_validate({"tools": tools})

    class CatalogServer(Server):
        name = "catalog"
        version = "1.0.0"

        async def list_tools(self, params: Any, ctx: RequestContext) -> m.ListToolsResult:
            return listed

        async def call_tool(self, params: m.CallToolRequestParams, ctx: RequestContext) -> m.CallToolResult:
            text = str((params.arguments or {}).get("text", ""))
            return m.CallToolResult(content=[m.TextContent(text=f"{params.name}: {text}")])

    server = CatalogServer()
    if search:
        from mcp_bindings.runtime.discovery import ToolSearch
        from mcp_bindings.runtime.server.plugins import extend

        extend(server, ToolSearch())
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--catalog", required=True, help="a JSON file: the tools' definitions")
    parser.add_argument("--search", action="store_true", help="list the search tools in place of the catalog")
    args = parser.parse_args()
    with open(args.catalog, encoding="utf-8") as file:
        server = build(json.load(file), args.search)
    from mcp_bindings.runtime.stdio import serve_stdio

    serve_stdio(server)


if __name__ == "__main__":
    main()
