"""A method exists only at the versions whose schema has it (issue 28, item 4): the fuzzer's oracle
is each version's generated method table. A server offering everything (tools that may run as
tasks, so the tasks capability at 2025-11-25 and the tasks extension at 2026-07-28; resources,
prompts, completions, logging) is asked every method any version or the tasks extension defines,
at every version: a method the client's version does not define is -32601, whatever the runtime
or a plug-in could serve. Before the fix `tasks/get` was served at 2024-11-05, 2025-03-26 and
2025-06-18 (answered -32602 or -32021)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc.errors import METHOD_NOT_FOUND, McpError
from mcp_bindings.runtime.rpc.jsonrpc import Request
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.server.runtime import ServerRuntime
from mcp_bindings.runtime.tasks.core.wire import EXTENSION as TASKS_EXTENSION

pytestmark = pytest.mark.anyio

VERSIONS = list(registry.versions())
TASKS_EXTENSION_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")  # the extension's schema
EVERY_METHOD = sorted(
    {m for v in VERSIONS for m in registry.protocol(v).client_requests} | set(TASKS_EXTENSION_METHODS)
)


def everything_app(version: str) -> App:
    app = App("everything", protocol=version)

    @app.tool(task=True)
    async def slow(text: str) -> str:
        return text

    @app.resource("file:///a.txt")
    def a() -> str:
        return "a"

    @app.prompt()
    def hello(name: str) -> str:
        return f"hello {name}"

    return app


async def answer(runtime: ServerRuntime, session: Session, method: str, params: dict[str, Any]) -> int | None:
    """The error code of `method` (None: answered with a result)."""
    try:
        await runtime.on_request(Request(7, method, params, {}), session)
    except McpError as exc:
        return exc.code
    except Exception:  # the handler ran (with made-up params) and failed: the method exists
        return None
    return None


def meta(version: str) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
    }


@pytest.mark.parametrize("stub", [VERSIONS[-1], "2025-11-25"])
@pytest.mark.parametrize("version", VERSIONS)
async def test_a_method_the_version_does_not_define_is_not_found(stub: str, version: str) -> None:
    runtime = ServerRuntime(everything_app(stub).server)
    session = Session(None, runtime)  # type: ignore[arg-type]  # no transport: nothing is sent
    protocol = registry.protocol(version)
    stateless = protocol.info.stateless
    if not stateless:
        init = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
        await runtime.on_request(Request(0, "initialize", init, {}), session)
    defined = set(protocol.client_requests) | (set(TASKS_EXTENSION_METHODS) if stateless else set())
    wrong: dict[str, int | None] = {}
    for method in EVERY_METHOD:
        if method in defined:
            continue
        params: dict[str, Any] = {"_meta": meta(version)} if stateless else {}
        code = await answer(runtime, session, method, params)
        if code != METHOD_NOT_FOUND:
            wrong[method] = code
    assert wrong == {}, f"MCP {version} does not define these methods, yet they were served: {wrong}"
