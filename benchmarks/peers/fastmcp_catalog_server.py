"""FastMCP (fastmcp==4.2.3) twin of ``benchmarks/curves/ours_catalog_server.py``: the tools of a catalog
file as FastMCP ``Tool`` objects (the definition's JSON Schema as their parameters), each answering
its ``text`` argument, over stdio; ``--search`` adds FastMCP's ``BM25SearchTransform`` (its
``search_tools`` and ``call_tool``, five results a search, its default).

Run: ``<fastmcp-venv>/bin/python benchmarks/peers/fastmcp_catalog_server.py --catalog FILE [--search]``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from fastmcp import FastMCP
from fastmcp.tools import Tool
from fastmcp.tools.base import ToolResult
from mcp_types import TextContent


class CatalogTool(Tool):
    """A tool of the catalog: its definition as given, answering `<name>: <text>`."""

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(content=[TextContent(type="text", text=f"{self.name}: {arguments.get('text', '')}")])


def build(tools: list[dict[str, Any]], search: bool) -> FastMCP:
    mcp = FastMCP("bench-fastmcp-catalog", version="4.2.3-bench")
    for tool in tools:
        mcp.add_tool(
            CatalogTool(name=tool["name"], description=tool.get("description"), parameters=tool["inputSchema"])
        )
    if search:
        from fastmcp.server.transforms.search import BM25SearchTransform

        mcp.add_transform(BM25SearchTransform())
    return mcp


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--catalog", required=True, help="a JSON file: the tools' definitions")
    parser.add_argument("--search", action="store_true", help="list FastMCP's BM25 search tools, not the catalog")
    args = parser.parse_args()
    with open(args.catalog, encoding="utf-8") as file:
        mcp = build(json.load(file), args.search)
    mcp.run(show_banner=False)


if __name__ == "__main__":
    main()
