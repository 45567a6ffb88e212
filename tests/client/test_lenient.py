"""The client's lenient mode: content from a version newer than the negotiated one (as real servers
send it) is handed over as the newer version's type instead of refused; strict stays the default.
The server here is a raw JSON-RPC peer, since our own server never sends such content."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import anyio
import orjson
import pytest

from mcp_bindings.runtime.client.runtime import connect
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc.errors import McpError
from mcp_bindings.runtime.rpc.transport import MemoryTransport, memory_pair

pytestmark = pytest.mark.anyio

LINK = {"type": "resource_link", "uri": "file:///notes.txt", "name": "notes"}
MULTI_SELECT = {
    "type": "object",
    "properties": {"colors": {"type": "array", "items": {"type": "string", "enum": ["red", "green"]}}},
}


def mod(version: str, kind: str) -> Any:
    return importlib.import_module(f"mcp_bindings.{registry.info(version).package}.{kind}")


async def raw_server(
    end: MemoryTransport, version: str, answer: Callable[[dict[str, Any]], Any], log: list[Any]
) -> None:
    """Answers initialize at `version`; every other request by `answer`; records the client's replies."""
    try:
        while True:
            message = orjson.loads(await end.receive())
            if "method" not in message:
                log.append(message)
                continue
            if "id" not in message:
                continue
            if message["method"] == "initialize":
                result: Any = {
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "raw", "version": "1"},
                }
            else:
                result = await answer(message)
            await end.send(orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}))
    except (anyio.EndOfStream, anyio.ClosedResourceError):
        return


async def call_with(version: str, answer: Any, *, lenient: bool, handlers: Any = None) -> tuple[Any, list[Any]]:
    client_end, server_end = memory_pair()
    log: list[Any] = []
    outcome: Any = None
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(raw_server, server_end, version, answer, log)
            try:
                async with connect(
                    client_end, mod(version, "client").Client, handlers=handlers, lenient=lenient
                ) as client:
                    try:
                        outcome = await client.call_tool(name="t", arguments={})
                    except McpError as exc:
                        outcome = exc
            finally:
                group.cancel_scope.cancel()
    return outcome, log


async def link_result(message: dict[str, Any]) -> Any:
    return {"content": [LINK, {"type": "text", "text": "see the link"}]}


async def test_strict_client_refuses_content_newer_than_the_negotiated_version() -> None:
    outcome, _ = await call_with("2024-11-05", link_result, lenient=False)
    assert isinstance(outcome, McpError) and outcome.code == -32603
    assert "invalid tools/call result from the server: content.0" in outcome.message


async def test_lenient_client_hands_over_the_newer_type() -> None:
    outcome, _ = await call_with("2024-11-05", link_result, lenient=True)
    newer = mod("2025-06-18", "models")  # the oldest version with resource_link
    assert isinstance(outcome, newer.CallToolResult)
    link, text = outcome.content
    assert isinstance(link, newer.ResourceLink) and link.uri == "file:///notes.txt" and text.text == "see the link"


async def test_lenient_client_still_refuses_what_no_version_accepts() -> None:
    async def garbage(message: dict[str, Any]) -> Any:
        return {"content": [{"type": "hologram"}]}

    outcome, _ = await call_with("2024-11-05", garbage, lenient=True)
    assert isinstance(outcome, McpError) and outcome.code == -32603


def eliciting(version: str) -> tuple[Any, Any]:
    """A server tool that elicits with a multi-select enum (2025-11-25 schema) before answering,
    and client handlers that record what they were asked."""
    m = mod(version, "models")
    asked: list[Any] = []

    class Handlers(mod(version, "client").ClientHandlers):  # type: ignore[misc]
        async def elicit(self, params: Any, ctx: Any) -> Any:
            asked.append(params)
            return m.ElicitResult(action="accept", content={"colors": "red"})

    return Handlers(), asked


async def test_lenient_client_takes_an_elicitation_schema_from_a_newer_version() -> None:
    for lenient in (False, True):
        handlers, asked = eliciting("2025-06-18")
        replies: list[Any] = []

        async def tool(message: dict[str, Any], replies: list[Any] = replies) -> Any:
            return {"content": [{"type": "text", "text": "ok"}]}

        client_end, server_end = memory_pair()
        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(raw_server, server_end, "2025-06-18", tool, replies)
                async with connect(client_end, mod("2025-06-18", "client").Client, handlers=handlers, lenient=lenient):
                    ask = {"message": "pick", "requestedSchema": MULTI_SELECT}
                    frame = {"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create", "params": ask}
                    await server_end.send(orjson.dumps(frame))
                    while not replies:
                        await anyio.sleep(0.01)
                group.cancel_scope.cancel()
        [reply] = replies
        if lenient:
            assert reply["result"]["action"] == "accept"
            [params] = asked
            assert type(params).__module__ == "mcp_bindings.v2025_11_25.models"
        else:
            assert reply["error"]["code"] == -32602 and asked == []
