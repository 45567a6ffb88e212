"""Smoke tests of examples/everything_server.py, the conformance everything-server, with raw JSON-RPC.

The official harness runs against it separately (scripts/conformance); these start the real
process over stdio and over HTTP (uvicorn in a subprocess on a free 127.0.0.1 port) and check a
handful of fixtures on both wire eras, each exchange under a bounded timeout.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import orjson
import pytest

from tests.peers.harness import RawPeer, server_env
from tests.support import REPO_ROOT, announced_url, stop

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

SCRIPT = REPO_ROOT / "examples" / "everything_server.py"
DEADLINE = 30  # seconds per test, start-up included
STATELESS = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientInfo": {"name": "pytest", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {"sampling": {}, "elicitation": {}, "roots": {}},
}
JSON_SCHEMA_FIXTURE: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}
MISSING_URI = "test://nonexistent-resource-for-conformance-testing"


def stateless(params: dict[str, Any] | None = None, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    return {**(params or {}), "_meta": {**META, **(meta or {})}}


# -- stdio ------------------------------------------------------------------------------------


@asynccontextmanager
async def stdio_server(tmp_path: Path) -> AsyncIterator[RawPeer]:
    stderr_path = tmp_path / "server.stderr"
    with open(stderr_path, "wb") as stderr:
        process = await anyio.open_process(
            [sys.executable, str(SCRIPT), "--transport", "stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=server_env(),
            cwd=str(REPO_ROOT),
        )
        try:
            yield RawPeer(process, stderr_path)
        finally:
            with anyio.CancelScope(shield=True):
                assert process.stdin is not None
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    await process.stdin.aclose()
                with anyio.move_on_after(5):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    await process.wait()


async def test_stdio_handshake_wire(tmp_path: Path) -> None:
    with anyio.fail_after(DEADLINE):
        async with stdio_server(tmp_path) as peer:
            init = await peer.initialize("2025-11-25", {"sampling": {}, "elicitation": {}})
            capabilities = init["result"]["capabilities"]
            assert {"tools", "prompts", "resources", "logging", "completions"} <= capabilities.keys()
            assert capabilities["resources"].get("subscribe") is True

            listed = (await peer.request("tools/list", {}))["result"]
            names = [t["name"] for t in listed["tools"]]
            assert names[:3] == ["test_simple_text", "test_image_content", "test_audio_content"]
            assert all(t.get("description") and t.get("inputSchema") for t in listed["tools"])
            # A 2026-07-28 server answering a 2025-11-25 client: no stateless-era fields leak, and
            # open JSON Schema content survives the conversion verbatim.
            assert not {"resultType", "ttlMs", "cacheScope"} & listed.keys()
            schema = next(t["inputSchema"] for t in listed["tools"] if t["name"] == "json_schema_2020_12_tool")
            assert schema == JSON_SCHEMA_FIXTURE

            text = (await peer.request("tools/call", {"name": "test_simple_text"}))["result"]
            assert text["content"] == [{"type": "text", "text": "This is a simple text response for testing."}]

            missing = await peer.request("resources/read", {"uri": MISSING_URI})
            assert missing["error"]["code"] == -32002 and missing["error"]["data"] == {"uri": MISSING_URI}

            template = (await peer.request("resources/read", {"uri": "test://template/123/data"}))["result"]
            assert json.loads(template["contents"][0]["text"])["id"] == "123"

            # The sampling tool answers MRTR-style; the runtime turns that into a real request.
            await peer.send_json(
                {
                    "jsonrpc": "2.0",
                    "id": "s1",
                    "method": "tools/call",
                    "params": {"name": "test_sampling", "arguments": {"prompt": "Hi there"}},
                }
            )
            ask = await peer.recv_response()
            assert ask["method"] == "sampling/createMessage", ask
            assert ask["params"]["messages"][0]["content"] == {"type": "text", "text": "Hi there"}
            assert ask["params"]["maxTokens"] == 100
            await peer.send_json(
                {
                    "jsonrpc": "2.0",
                    "id": ask["id"],
                    "result": {
                        "role": "assistant",
                        "content": {"type": "text", "text": "Hello from the LLM"},
                        "model": "test-model",
                        "stopReason": "endTurn",
                    },
                }
            )
            done = await peer.recv_response()
            assert done["id"] == "s1" and done["result"]["content"][0]["text"] == "LLM response: Hello from the LLM"

            # Progress: three notifications with the caller's token, non-decreasing.
            await peer.send_json(
                {
                    "jsonrpc": "2.0",
                    "id": "p1",
                    "method": "tools/call",
                    "params": {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "tok"}},
                }
            )
            progress: list[float] = []
            while True:
                message = await peer.recv()
                if message.get("id") == "p1":
                    break
                assert message["method"] == "notifications/progress" and message["params"]["progressToken"] == "tok"
                progress.append(message["params"]["progress"])
            assert progress == [0, 50, 100]

            # resources/subscribe is served by the runtime (the 2026 stub has no such handler).
            assert (await peer.request("resources/subscribe", {"uri": "test://watched-resource"}))["result"] == {}
            await peer.send_json(
                {
                    "jsonrpc": "2.0",
                    "id": "u1",
                    "method": "tools/call",
                    "params": {"name": "test_trigger_resource_update", "arguments": {}},
                }
            )
            seen = [await peer.recv(), await peer.recv()]
            assert {
                "jsonrpc": "2.0",
                "method": "notifications/resources/updated",
                "params": {"uri": "test://watched-resource"},
            } in seen
            assert (await peer.request("resources/unsubscribe", {"uri": "test://watched-resource"}))["result"] == {}


async def test_stdio_stateless_wire(tmp_path: Path) -> None:
    with anyio.fail_after(DEADLINE):
        async with stdio_server(tmp_path) as peer:
            discover = (await peer.request("server/discover", stateless()))["result"]
            assert STATELESS in discover["supportedVersions"]
            assert discover["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]
            assert discover["capabilities"]["tools"]["listChanged"] is True

            listed = (await peer.request("tools/list", stateless()))["result"]
            assert (
                listed["resultType"] == "complete"
                and listed["ttlMs"] >= 0
                and listed["cacheScope"] in ("public", "private")
            )
            schema = next(t["inputSchema"] for t in listed["tools"] if t["name"] == "json_schema_2020_12_tool")
            assert schema == JSON_SCHEMA_FIXTURE

            missing = await peer.request("resources/read", stateless({"uri": MISSING_URI}))
            assert missing["error"]["code"] == -32602 and missing["error"]["data"] == {"uri": MISSING_URI}

            refused = await peer.request(
                "tools/call",
                stateless(
                    {"name": "test_missing_capability", "arguments": {}},
                    {"io.modelcontextprotocol/clientCapabilities": {}},
                ),
            )
            assert refused["error"]["code"] == -32021
            assert refused["error"]["data"]["requiredCapabilities"] == {"sampling": {}}

            # requestState is sealed by the runtime: the as-issued copy works, an altered one is -32602.
            call = {"name": "test_input_required_result_tampered_state", "arguments": {}}
            first = (await peer.request("tools/call", stateless(call)))["result"]
            assert first["resultType"] == "input_required" and isinstance(first["requestState"], str)
            answer = {"confirm": {"action": "accept", "content": {"ok": True}}}
            tampered = await peer.request(
                "tools/call",
                stateless({**call, "inputResponses": answer, "requestState": first["requestState"] + "-TAMPERED"}),
            )
            assert tampered["error"]["code"] == -32602
            good = await peer.request(
                "tools/call", stateless({**call, "inputResponses": answer, "requestState": first["requestState"]})
            )
            assert good["result"]["resultType"] == "complete"
            assert good["result"]["content"][0]["text"] == "state-ok: round-1"

            # MRTR on prompts/get, answered without a prior round.
            prompt = {"name": "test_input_required_result_prompt"}
            asked = (await peer.request("prompts/get", stateless(prompt)))["result"]
            assert asked["inputRequests"]["user_context"]["method"] == "elicitation/create"
            answered = await peer.request(
                "prompts/get",
                stateless(
                    {**prompt, "inputResponses": {"user_context": {"action": "accept", "content": {"context": "ctx"}}}}
                ),
            )
            assert answered["result"]["messages"][0]["content"]["text"] == "Use the following context: ctx"


# -- HTTP -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("everything-http") / "server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, str(SCRIPT), "--transport", "http", "--port", "0"],  # it binds, and says where
            stdout=out,
            stderr=subprocess.STDOUT,
            env=server_env(),
            cwd=str(REPO_ROOT),
        )
        try:
            yield announced_url(log, process, DEADLINE)
        finally:
            stop(process)


def stateless_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": STATELESS,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


async def sse_events(response: httpx.Response) -> AsyncIterator[dict[str, str]]:
    """Raw SSE events (field -> value; `data` lines joined)."""
    event: dict[str, str] = {}
    async for line in response.aiter_lines():
        if not line:
            if event:
                yield event
            event = {}
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        event[field] = event[field] + "\n" + value if field == "data" and field in event else value


async def sse_messages(response: httpx.Response) -> AsyncIterator[Any]:
    """The JSON-RPC messages of an SSE stream (priming events, with empty data, skipped)."""
    async for event in sse_events(response):
        if event.get("data", "").strip():
            yield orjson.loads(event["data"])


async def test_http_stateless_wire(http_url: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:
            body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": stateless()}
            reply = await client.post(http_url, json=body, headers=stateless_headers("server/discover"))
            assert reply.status_code == 200 and STATELESS in reply.json()["result"]["supportedVersions"]

            # DNS-rebinding protection: a foreign Host is refused before any JSON-RPC handling.
            evil = {
                **stateless_headers("server/discover"),
                "Host": "evil.example.com",
                "Origin": "http://evil.example.com",
            }
            assert (await client.post(http_url, json=body, headers=evil)).status_code == 403

            # Removed handshake methods are 404 / -32601 on the stateless wire.
            init = {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": stateless()}
            removed = await client.post(http_url, json=init, headers=stateless_headers("initialize"))
            assert removed.status_code == 404
            assert removed.json()["id"] == 2 and removed.json()["error"]["code"] == -32601

            # -32021 travels as HTTP 400.
            call = {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": stateless(
                    {"name": "test_missing_capability", "arguments": {}},
                    {"io.modelcontextprotocol/clientCapabilities": {}},
                ),
            }
            refused = await client.post(
                http_url, json=call, headers=stateless_headers("tools/call", "test_missing_capability")
            )
            assert refused.status_code == 400 and refused.json()["error"]["code"] == -32021

            # SEP-2243: x-mcp-header parameters must be mirrored in Mcp-Param-* (plain or Base64).
            # The server knows them from its tool catalog, which tools/list fills (as a client learns them).
            listing = {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": stateless()}
            listed = await client.post(http_url, json=listing, headers=stateless_headers("tools/list"))
            assert listed.status_code == 200, listed.text
            call = {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/call",
                "params": stateless({"name": "test_x_mcp_header", "arguments": {"region": "Hello"}}),
            }
            headers = stateless_headers("tools/call", "test_x_mcp_header")
            for header, status in (
                ("Hello", 200),
                ("=?base64?SGVsbG8=?=", 200),
                ("=?base64?SGVsbG8?=", 400),
                ("Bye", 400),
                (None, 400),
            ):
                sent = {**headers, "Mcp-Param-Region": header} if header is not None else headers
                answer = await client.post(http_url, json=call, headers=sent)
                assert answer.status_code == status, (header, answer.text)
                if status == 400:
                    assert answer.json()["error"]["code"] == -32020 and answer.json()["id"] == 5

            # Progress is streamed as SSE ahead of the result.
            call = {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "tools/call",
                "params": stateless(
                    {"name": "test_tool_with_progress", "arguments": {}}, {"progressToken": "progress-test-1"}
                ),
            }
            headers = stateless_headers("tools/call", "test_tool_with_progress")
            async with client.stream("POST", http_url, json=call, headers=headers) as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                frames = [frame async for frame in sse_messages(response)]
            assert [f["params"]["progress"] for f in frames if f.get("method") == "notifications/progress"] == [
                0,
                50,
                100,
            ]
            assert frames[-1]["id"] == 4 and frames[-1]["result"]["resultType"] == "complete"


async def test_http_handshake_wire_elicitation(http_url: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:
            base = {"Accept": "application/json, text/event-stream"}
            init = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"elicitation": {}},
                    "clientInfo": {"name": "pytest", "version": "0"},
                },
            }
            reply = await client.post(http_url, json=init, headers=base)
            assert reply.status_code == 200 and reply.json()["result"]["protocolVersion"] == "2025-11-25"
            session = reply.headers["mcp-session-id"]
            headers = {**base, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await client.post(http_url, json=note, headers=headers)).status_code == 202

            # The elicitation tool asks MRTR-style; on this wire the runtime sends a real
            # elicitation/create on the POST's SSE stream and re-runs the tool with the answer.
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "test_elicitation", "arguments": {"message": "Who are you?"}},
            }
            async with client.stream("POST", http_url, json=call, headers=headers) as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                frames = sse_messages(response)
                ask = await anext(frames)
                assert ask["method"] == "elicitation/create" and ask["params"]["message"] == "Who are you?"
                assert set(ask["params"]["requestedSchema"]["properties"]) == {"username", "email"}
                answer = {
                    "jsonrpc": "2.0",
                    "id": ask["id"],
                    "result": {"action": "accept", "content": {"username": "ann", "email": "ann@example.com"}},
                }
                assert (await client.post(http_url, json=answer, headers=headers)).status_code == 202
                result = await anext(frames)
            assert result["id"] == 2
            assert result["result"]["content"][0]["text"].startswith("User response: action=accept")
            assert "ann@example.com" in result["result"]["content"][0]["text"]

            assert (await client.delete(http_url, headers=headers)).status_code == 200
            gone = await client.post(http_url, json={"jsonrpc": "2.0", "id": 3, "method": "ping"}, headers=headers)
            assert gone.status_code == 404


async def test_http_handshake_wire_stream_resumption(http_url: str) -> None:
    """SEP-1699: the POST stream opens with a priming event, the tool ends it early, and the rest of
    the stream (its result included) is replayed to a GET with Last-Event-ID."""
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:
            base = {"Accept": "application/json, text/event-stream"}
            init = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "pytest", "version": "0"},
                },
            }
            reply = await client.post(http_url, json=init, headers=base)
            headers = {**base, "Mcp-Session-Id": reply.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
            await client.post(http_url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)

            call = {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {"name": "test_reconnection", "arguments": {}},
            }
            async with client.stream("POST", http_url, json=call, headers=headers) as response:
                events = [event async for event in sse_events(response)]
            assert events[0]["id"] and events[0]["retry"] and not events[0].get("data", "").strip()  # priming
            messages = [orjson.loads(e["data"]) for e in events[1:]]
            assert all("id" not in m for m in messages)  # closed before the result
            last = events[-1]["id"]

            resume = {
                "Accept": "text/event-stream",
                "Mcp-Session-Id": headers["Mcp-Session-Id"],
                "MCP-Protocol-Version": "2025-11-25",
                "Last-Event-ID": last,
            }
            async with client.stream("GET", http_url, headers=resume) as response:
                assert response.status_code == 200
                rest = [message async for message in sse_messages(response)]
            assert rest[-1]["id"] == 7
            assert rest[-1]["result"]["content"][0]["text"] == "Reconnection test completed"
