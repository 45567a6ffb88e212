"""A server on FastMCP 4.2.3 (PyPI `fastmcp`, `contract_peers.fastmcp()`) behind the proxy
(tests/interop/test_proxy_peers.py), over stdio: a tool with structured output, one that fails
(isError), a resource, a resource template and a prompt."""

from __future__ import annotations

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError

app = FastMCP("proxied-fastmcp")


@app.tool(description="Add two numbers.")
def add(a: int, b: int) -> int:
    return a + b


@app.tool(description="Always fails.")
def refuse(reason: str) -> str:
    raise ToolError(f"refused: {reason}")


@app.resource("proxied://config", description="A resource to read.")
def config() -> str:
    return "debug=false"


@app.resource("proxied://users/{name}", description="A resource template.")
def user(name: str) -> str:
    return f"user {name}"


@app.prompt(description="A prompt with an argument.")
def greet(name: str) -> str:
    return f"Say hello to {name}."


if __name__ == "__main__":
    app.run(show_banner=False)
