"""Official MCP Python SDK (mcp==2.3.0) `MCPServer` stdio server with one ``echo`` tool: the
official authoring layer, against which benchmarks/bench_app.py measures ours.

Run: ``<official-venv>/bin/python benchmarks/peers/official_mcpserver_echo.py``.
"""

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("echo", version="1.0.0")


@mcp.tool(structured_output=False)  # text content only, as ours and the stub echo
def echo(text: str) -> str:
    """Echo the text back"""
    return text


if __name__ == "__main__":
    mcp.run()
