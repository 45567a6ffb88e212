"""A server's per-message path driven in-process without an event loop: an echo server on any
stub, a `ServerRuntime` with its `Session`, and one frame in, the decoded response out."""

from __future__ import annotations

import importlib
from collections.abc import Coroutine
from typing import Any

import orjson

from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc import jsonrpc
from mcp_bindings.runtime.rpc.errors import McpError
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.server.runtime import ServerRuntime

LEGACY = "2025-11-25"
STATELESS = "2026-07-28"


def complete(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never suspends (the handlers here do no I/O)."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise AssertionError("the request path suspended")


def make_server(stub: str, *, result: Any = None, seen: list[Any] | None = None) -> Any:
    """An echo server written against `stub`; `result` replaces the handler's result when given."""
    package = importlib.import_module(f"mcp_bindings.{registry.info(stub).package}.server")
    m = importlib.import_module(f"mcp_bindings.{registry.info(stub).package}.models")

    class Echo(package.Server):  # type: ignore[misc, name-defined]
        name = "echo"
        version = "1.0.0"

        async def list_tools(self, params: Any, ctx: Any) -> Any:
            return m.ListToolsResult(tools=[])

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            if seen is not None:
                seen.append(params)
            if result is not None:
                return result(m) if callable(result) else result
            text = str((params.arguments or {}).get("text", ""))
            return m.CallToolResult(content=[m.TextContent(type="text", text=text)])

    return Echo()


def connect(stub: str = LEGACY, version: str = LEGACY, **server_options: Any) -> tuple[ServerRuntime, Session]:
    runtime = ServerRuntime(make_server(stub, **server_options))
    session = Session(None, runtime)  # type: ignore[arg-type]
    if version != STATELESS:
        init = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
        complete(runtime.on_request(jsonrpc.Request(0, "initialize", init, {}), session))
    return runtime, session


def stateless_meta() -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
    }


def serve(runtime: ServerRuntime, session: Session, frame: bytes) -> Any:
    """One frame through the calls `Session` makes; returns the decoded response."""
    message = jsonrpc.classify(jsonrpc.decode(frame))
    assert isinstance(message, jsonrpc.Request)
    try:
        out = jsonrpc.encode_result(message.id, complete(runtime.on_request(message, session)))
    except McpError as exc:
        out = jsonrpc.encode_error(message.id, exc.code, exc.message, exc.data)
    return orjson.loads(out)


def call(params: Any, id: Any = 1, method: str = "tools/call") -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return orjson.dumps(message)
