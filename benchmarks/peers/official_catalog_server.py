"""Official MCP Python SDK (mcp==2.3.0) twin of ``benchmarks/curves/ours_catalog_server.py``: the
low-level ``Server`` listing the tools of a catalog file, each answering its ``text`` argument,
over stdio. The official SDK has no tool search, so there is no ``--search``.

Run: ``<official-venv>/bin/python benchmarks/peers/official_catalog_server.py --catalog FILE``.
"""

from __future__ import annotations

import argparse
import json

import anyio
import mcp_types as types
from mcp.server import Server


def build(tools: list[dict[str, object]]) -> Server:
    listed = types.ListToolsResult.model_validate({"tools": tools})

    async def list_tools(ctx, params):  # noqa: ANN001, ANN202 - SDK handler signature
        return listed

    async def call_tool(ctx, params: types.CallToolRequestParams):  # noqa: ANN001, ANN202
        text = str((params.arguments or {}).get("text", ""))
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"{params.name}: {text}")])

    return Server("bench-official-catalog", version="2.3.0-bench", on_list_tools=list_tools, on_call_tool=call_tool)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--catalog", required=True, help="a JSON file: the tools' definitions")
    args = parser.parse_args()
    with open(args.catalog, encoding="utf-8") as file:
        server = build(json.load(file))
    from mcp.server.stdio import stdio_server

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
