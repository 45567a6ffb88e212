"""Real-socket tests of the Streamable HTTP transport (runtime/http/app.py, runtime/client/http.py).

Every server listens on a free 127.0.0.1 port: our apps run on uvicorn in a background thread of
this process (so options such as `max_body_bytes` can be set), the official SDK's server in a
subprocess of its own venv. Every exchange runs under a bounded timeout and every server is
stopped when its fixture ends.

Covered: DNS-rebinding protection (Host / Origin), the body limit, session ids (unknown, deleted),
the session's protocol-version header, the GET stream of a handshake session; the stateless
2026-07-28 wire (discover, -32022 / -32020 / -32021 / -32602 with their HTTP statuses, header
checks, log opt-in, SSE progress, subscriptions/listen); stream resumption through `connect_http`;
16 concurrent clients of both eras; and the official Python SDK (mcp==2.3.0) as a peer over HTTP
both ways, plus its legacy `sse_client` against our `/sse` endpoint.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx
import orjson
import pytest

from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.runtime.http.app import create_app
from tests.peers.harness import PEERS, Recorder, client_module, make_handlers, server_env, tool_text
from tests.support import REPO_ROOT, bound_socket, refused_port, stop
from tests.support.http import (
    ACCEPT,
    HANDSHAKE,
    STATELESS,
    load_example,
    open_session,
    rpc,
    serve_in_thread,
    sse_messages,
    stateless,
    stateless_headers,
)

pytestmark = pytest.mark.anyio

DEADLINE = 20  # seconds per async test
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


# -- servers ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def everything() -> Iterator[str]:
    """The conformance everything-server with default options; its /mcp URL."""
    module = load_example("everything_server")
    with serve_in_thread(create_app(module.EverythingServer())) as base:
        yield base + "/mcp"


@pytest.fixture(scope="module")
def echo_base() -> Iterator[str]:
    """examples/echo_server.py (2026-07-28 stub) with a small body limit; its base URL."""
    module = load_example("echo_server")
    with serve_in_thread(create_app(module.make_server(STATELESS), max_body_bytes=2048)) as base:
        yield base


# -- 1. handshake sessions: security, limits, session lifecycle, GET stream ---------------------


async def test_host_header_rejected_unless_local(everything: str) -> None:
    port = everything.split(":")[2].split("/")[0]
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:
            init = rpc(
                1,
                "initialize",
                {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "pytest", "version": "0"}},
            )
            for host in ("evil.example.com", f"evil.example.com:{port}", "localhost.evil.com", "127.0.0.2", "0.0.0.0"):
                refused = await client.post(everything, json=init, headers={**ACCEPT, "Host": host})
                assert refused.status_code == 403, host
                assert refused.json()["error"]["code"] == -32600
                assert "mcp-session-id" not in refused.headers
            # GET and DELETE are refused the same way, before any session lookup.
            assert (
                await client.get(everything, headers={"Accept": "text/event-stream", "Host": "evil.example.com"})
            ).status_code == 403
            assert (await client.delete(everything, headers={"Host": "evil.example.com"})).status_code == 403
            for host in (
                f"localhost:{port}",
                "localhost:1",
                "127.0.0.1:65535",
                "LOCALHOST:8080",
                "localhost",
                "127.0.0.1",
            ):
                accepted = await client.post(everything, json=init, headers={**ACCEPT, "Host": host})
                assert accepted.status_code == 200, (host, accepted.text)
                assert accepted.headers["mcp-session-id"]


async def test_origin_header_rejected_unless_local(everything: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:
            init = rpc(
                1,
                "initialize",
                {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "pytest", "version": "0"}},
            )
            for origin in (
                "http://evil.example.com",
                "https://evil.example.com:443",
                "http://localhost.evil.com:3000",
                "null",
                "file://localhost",
                "http://127.0.0.1.nip.io",
            ):
                refused = await client.post(everything, json=init, headers={**ACCEPT, "Origin": origin})
                assert refused.status_code == 403, origin
                assert "Origin" in refused.json()["error"]["message"]
            for origin in ("http://localhost:5173", "http://127.0.0.1:1", "https://localhost", "http://127.0.0.1"):
                accepted = await client.post(everything, json=init, headers={**ACCEPT, "Origin": origin})
                assert accepted.status_code == 200, (origin, accepted.text)
            # A session's later requests are checked too.
            session = await open_session(client, everything)
            ping = rpc(2, "ping")
            assert (
                await client.post(everything, json=ping, headers={**session, "Origin": "http://evil.example.com"})
            ).status_code == 403
            assert (
                await client.post(everything, json=ping, headers={**session, "Origin": "http://localhost:9"})
            ).status_code == 200


async def test_body_over_the_limit_is_413(echo_base: str) -> None:
    url = echo_base + "/mcp"
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:
            small = rpc(1, "tools/call", stateless({"name": "echo", "arguments": {"text": "x" * 100}}))
            ok = await client.post(url, json=small, headers=stateless_headers("tools/call", "echo"))
            assert ok.status_code == 200 and ok.json()["result"]["content"][0]["text"] == "x" * 100

            big = rpc(2, "tools/call", stateless({"name": "echo", "arguments": {"text": "x" * 4096}}))
            body = orjson.dumps(big)
            refused = await client.post(
                url,
                content=body,
                headers={**stateless_headers("tools/call", "echo"), "Content-Type": "application/json"},
            )
            assert refused.status_code == 413 and refused.json()["error"]["code"] == -32600

            # No Content-Length (chunked): the limit is enforced while reading.
            async def chunks() -> AsyncIterator[bytes]:
                for start in range(0, len(body), 512):
                    yield body[start : start + 512]

            chunked = await client.post(
                url,
                content=chunks(),
                headers={**stateless_headers("tools/call", "echo"), "Content-Type": "application/json"},
            )
            assert "content-length" not in chunked.request.headers
            assert chunked.status_code == 413

            # The legacy /messages endpoint has the same limit.
            async with client.stream("GET", echo_base + "/sse", headers={"Accept": "text/event-stream"}) as stream:
                endpoint = None
                # Kept (a local, alive to the end of the test): a line iterator left by `break` and
                # dropped is finalized (closed) by the event loop, which closes the stream, and with it
                # the session, under the POST below.
                lines = stream.aiter_lines()
                async for line in lines:
                    if line.startswith("data:"):
                        endpoint = line[5:].strip()
                        break
                assert endpoint and endpoint.startswith("/messages?session_id=")
                over = await client.post(
                    echo_base + endpoint, content=body, headers={"Content-Type": "application/json"}
                )
                assert over.status_code == 413


async def test_unknown_session_and_delete(everything: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:
            bogus = {**ACCEPT, "Mcp-Session-Id": "no-such-session", "MCP-Protocol-Version": HANDSHAKE}
            unknown = await client.post(everything, json=rpc(1, "ping"), headers=bogus)
            assert unknown.status_code == 404 and unknown.json()["error"]["code"] == -32600
            assert (await client.get(everything, headers={**bogus, "Accept": "text/event-stream"})).status_code == 404
            assert (await client.delete(everything, headers=bogus)).status_code == 404

            session = await open_session(client, everything)
            assert (await client.post(everything, json=rpc(2, "ping"), headers=session)).json()["result"] == {}
            assert (await client.delete(everything, headers=session)).status_code == 200
            assert (await client.post(everything, json=rpc(3, "ping"), headers=session)).status_code == 404
            assert (await client.get(everything, headers={**session, "Accept": "text/event-stream"})).status_code == 404
            assert (await client.delete(everything, headers=session)).status_code == 404
            # DELETE without any session id is a bad request, not a not-found.
            assert (await client.delete(everything, headers=ACCEPT)).status_code == 400


async def test_batches_in_a_2025_03_26_session_only(everything: str) -> None:
    """A batch POST runs its requests concurrently and answers one JSON array (notifications get no
    entry); a session at a version without batches refuses one with 400."""
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:
            session = await open_session(client, everything, "2025-03-26")
            batch = [
                rpc("a", "tools/list"),
                {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
                rpc(7, "ping"),
                rpc(8, "no/such/method"),
            ]
            reply = await client.post(everything, json=batch, headers=session)
            assert reply.status_code == 200 and reply.headers["content-type"].startswith("application/json")
            answers = {item["id"]: item for item in reply.json()}
            assert set(answers) == {"a", 7, 8}
            assert any(tool["name"] == "test_simple_text" for tool in answers["a"]["result"]["tools"])
            assert answers[7]["result"] == {}
            assert answers[8]["error"]["code"] == -32601

            newer = await open_session(client, everything, HANDSHAKE)
            refused = await client.post(everything, json=[rpc(1, "ping")], headers=newer)
            assert refused.status_code == 400 and "batch" in refused.json()["error"]["message"]


async def test_session_bound_and_idle_expiry() -> None:
    """At most `max_sessions` sessions (503 past it); an idle session expires (then 404)."""
    module = load_example("echo_server")
    app = create_app(module.make_server(STATELESS), max_sessions=2, session_idle_seconds=0.5)
    with serve_in_thread(app) as base:
        url = base + "/mcp"
        with anyio.fail_after(DEADLINE):
            async with httpx.AsyncClient(timeout=10) as client:
                first = await open_session(client, url)
                await open_session(client, url)
                init = rpc(
                    1,
                    "initialize",
                    {
                        "protocolVersion": HANDSHAKE,
                        "capabilities": {},
                        "clientInfo": {"name": "pytest", "version": "0"},
                    },
                )
                refused = await client.post(url, json=init, headers=ACCEPT)
                assert refused.status_code == 503
                await anyio.sleep(0.8)  # both sessions idle past the limit
                expired = await client.post(url, json=rpc(2, "tools/list"), headers=first)
                assert expired.status_code == 404
                await open_session(client, url)  # room again


async def test_wrong_protocol_version_header_for_session(everything: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:
            session = await open_session(client, everything, "2025-06-18")
            for wrong in ("2025-11-25", "2024-11-05", STATELESS, "garbage"):
                reply = await client.post(
                    everything, json=rpc(2, "ping"), headers={**session, "MCP-Protocol-Version": wrong}
                )
                assert reply.status_code == 400, wrong
                assert reply.json()["error"]["code"] == -32600
            ok = await client.post(everything, json=rpc(3, "ping"), headers=session)
            assert ok.status_code == 200 and ok.json() == {"jsonrpc": "2.0", "id": 3, "result": {}}
            # Omitting the header is tolerated (the 2025-03-26 fallback rule).
            bare = {k: v for k, v in session.items() if k != "MCP-Protocol-Version"}
            assert (await client.post(everything, json=rpc(4, "ping"), headers=bare)).status_code == 200


async def test_get_stream_delivers_list_changed(everything: str) -> None:
    """Session A listens on its GET stream; session B changes the tool list; A hears about it."""
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as client:
            listener = await open_session(client, everything)
            actor = await open_session(client, everything)
            get_headers = {**listener, "Accept": "text/event-stream"}
            async with client.stream("GET", everything, headers=get_headers) as stream:
                assert stream.status_code == 200
                assert stream.headers["content-type"].startswith("text/event-stream")
                # A second GET stream for the same session is refused while this one is open.
                assert (await client.get(everything, headers=get_headers)).status_code == 409
                call = rpc(5, "tools/call", {"name": "test_trigger_tool_change", "arguments": {}})
                changed = await client.post(everything, json=call, headers=actor)
                assert changed.status_code == 200
                messages = sse_messages(stream)
                with anyio.fail_after(5):
                    first = await anext(messages)
                assert first == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"} or (
                    first["method"] == "notifications/tools/list_changed" and not first.get("params", {}).get("_meta")
                ), first
            # The acting session got the notification on its own POST (SSE) or not at all, and
            # its result is intact either way.
            if changed.headers["content-type"].startswith("text/event-stream"):
                frames = [
                    orjson.loads(line[5:])
                    for line in changed.text.splitlines()
                    if line.startswith("data:") and line[5:].strip()
                ]
                assert frames[-1]["id"] == 5 and frames[-1]["result"]["content"][0]["text"] == "tool list changed"
            else:
                assert changed.json()["result"]["content"][0]["text"] == "tool list changed"


# -- 2. the stateless 2026-07-28 wire ------------------------------------------------------------


async def test_stateless_discover(everything: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:
            reply = await client.post(
                everything, json=rpc(1, "server/discover", stateless()), headers=stateless_headers("server/discover")
            )
            assert reply.status_code == 200 and "mcp-session-id" not in reply.headers
            result = reply.json()["result"]
            assert result["supportedVersions"][0] == STATELESS and HANDSHAKE in result["supportedVersions"]
            assert result["capabilities"]["tools"]["listChanged"] is True
            assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]


async def test_stateless_unsupported_version(everything: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:
            meta = {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}
            reply = await client.post(
                everything,
                json=rpc(7, "tools/list", stateless(meta=meta)),
                headers=stateless_headers("tools/list", version="2099-01-01"),
            )
            assert reply.status_code == 400, reply.text
            error = reply.json()["error"]
            assert reply.json()["id"] == 7 and error["code"] == -32022
            assert STATELESS in error["data"]["supported"]


async def test_stateless_header_and_meta_mismatches(everything: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:
            listing = rpc(1, "tools/list", stateless())
            # MCP-Protocol-Version header vs _meta protocolVersion
            reply = await client.post(
                everything, json=listing, headers=stateless_headers("tools/list", version=HANDSHAKE)
            )
            assert reply.status_code == 400 and reply.json()["error"]["code"] == -32020 and reply.json()["id"] == 1
            # Mcp-Method vs the body's method; and Mcp-Method missing
            reply = await client.post(everything, json=listing, headers=stateless_headers("prompts/list"))
            assert reply.status_code == 400 and reply.json()["error"]["code"] == -32020
            missing = {k: v for k, v in stateless_headers("tools/list").items() if k != "Mcp-Method"}
            reply = await client.post(everything, json=listing, headers=missing)
            assert reply.status_code == 400 and reply.json()["error"]["code"] == -32020
            # Mcp-Name vs params.name (tools/call), params.uri (resources/read); missing Mcp-Name
            call = rpc(2, "tools/call", stateless({"name": "test_simple_text", "arguments": {}}))
            for name in ("test_image_content", "=?base64?dGVzdF9pbWFnZV9jb250ZW50?=", None):
                reply = await client.post(everything, json=call, headers=stateless_headers("tools/call", name))
                assert reply.status_code == 400 and reply.json()["error"]["code"] == -32020, name
            read = rpc(3, "resources/read", stateless({"uri": "test://static-text"}))
            reply = await client.post(
                everything, json=read, headers=stateless_headers("resources/read", "test://static-binary")
            )
            assert reply.status_code == 400 and reply.json()["error"]["code"] == -32020
            # ... and the matching headers (plain and Base64) are accepted.
            for name in ("test_simple_text", "=?base64?dGVzdF9zaW1wbGVfdGV4dA==?="):
                reply = await client.post(everything, json=call, headers=stateless_headers("tools/call", name))
                assert reply.status_code == 200 and reply.json()["result"]["content"][0]["text"].startswith(
                    "This is a simple"
                )
            reply = await client.post(
                everything, json=read, headers=stateless_headers("resources/read", "test://static-text")
            )
            assert reply.status_code == 200


async def test_stateless_missing_capability_and_tampered_state(everything: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:
            call = rpc(
                3,
                "tools/call",
                stateless(
                    {"name": "test_missing_capability", "arguments": {}},
                    {"io.modelcontextprotocol/clientCapabilities": {}},
                ),
            )
            refused = await client.post(
                everything, json=call, headers=stateless_headers("tools/call", "test_missing_capability")
            )
            assert refused.status_code == 400 and refused.json()["error"]["code"] == -32021
            assert refused.json()["error"]["data"]["requiredCapabilities"] == {"sampling": {}}

            name = "test_input_required_result_tampered_state"
            headers = stateless_headers("tools/call", name)
            first = await client.post(
                everything, json=rpc(4, "tools/call", stateless({"name": name, "arguments": {}})), headers=headers
            )
            issued = first.json()["result"]
            assert issued["resultType"] == "input_required" and isinstance(issued["requestState"], str)
            answer = {"confirm": {"action": "accept", "content": {"ok": True}}}
            for state in (issued["requestState"] + "x", issued["requestState"][:-2], "round-1", ""):
                params = stateless({"name": name, "arguments": {}, "inputResponses": answer, "requestState": state})
                tampered = await client.post(everything, json=rpc(5, "tools/call", params), headers=headers)
                assert tampered.status_code == 400, state
                assert tampered.json()["error"]["code"] == -32602 and tampered.json()["id"] == 5
            params = stateless(
                {"name": name, "arguments": {}, "inputResponses": answer, "requestState": issued["requestState"]}
            )
            good = await client.post(everything, json=rpc(6, "tools/call", params), headers=headers)
            assert good.status_code == 200 and good.json()["result"]["content"][0]["text"] == "state-ok: round-1"


async def test_stateless_logs_only_on_request(everything: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:
            headers = stateless_headers("tools/call", "test_logging_tool")
            quiet = rpc(1, "tools/call", stateless({"name": "test_logging_tool", "arguments": {}}))
            async with client.stream("POST", everything, json=quiet, headers=headers) as response:
                kind = response.headers["content-type"]
                frames = (
                    [m async for m in sse_messages(response)]
                    if "event-stream" in kind
                    else [orjson.loads(await response.aread())]
                )
            assert not [f for f in frames if f.get("method") == "notifications/message"]
            assert frames[-1]["id"] == 1 and "result" in frames[-1]

            loud = rpc(
                2,
                "tools/call",
                stateless({"name": "test_logging_tool", "arguments": {}}, {"io.modelcontextprotocol/logLevel": "info"}),
            )
            async with client.stream("POST", everything, json=loud, headers=headers) as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                frames = [m async for m in sse_messages(response)]
            logs = [f for f in frames if f.get("method") == "notifications/message"]
            assert [entry["params"]["level"] for entry in logs] == ["info"]
            assert frames[-1]["id"] == 2 and "result" in frames[-1]

            above = rpc(
                3,
                "tools/call",
                stateless(
                    {"name": "test_logging_tool", "arguments": {}}, {"io.modelcontextprotocol/logLevel": "error"}
                ),
            )
            reply = await client.post(everything, json=above, headers=headers)
            assert reply.headers["content-type"].startswith("application/json")  # nothing sent before the result
            assert reply.json()["id"] == 3


async def test_stateless_progress_is_streamed(everything: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:
            call = rpc(
                4,
                "tools/call",
                stateless({"name": "test_tool_with_progress", "arguments": {}}, {"progressToken": "pt-1"}),
            )
            headers = stateless_headers("tools/call", "test_tool_with_progress")
            async with client.stream("POST", everything, json=call, headers=headers) as response:
                assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
                frames = [m async for m in sse_messages(response)]
            progress = [f["params"] for f in frames if f.get("method") == "notifications/progress"]
            assert [p["progress"] for p in progress] == [0, 50, 100]
            assert {p["progressToken"] for p in progress} == {"pt-1"}
            assert frames[-1]["id"] == 4 and frames[-1]["result"]["resultType"] == "complete"


async def test_stateless_subscriptions_listen(everything: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as client:
            listen = rpc("sub-1", "subscriptions/listen", stateless({"notifications": {"toolsListChanged": True}}))
            async with client.stream(
                "POST", everything, json=listen, headers=stateless_headers("subscriptions/listen")
            ) as stream:
                assert stream.status_code == 200 and stream.headers["content-type"].startswith("text/event-stream")
                messages = sse_messages(stream)
                with anyio.fail_after(5):
                    ack = await anext(messages)
                assert ack["method"] == "notifications/subscriptions/acknowledged"
                assert ack["params"]["notifications"] == {"toolsListChanged": True}
                assert ack["params"]["_meta"][SUBSCRIPTION_ID] == "sub-1"

                call = rpc(9, "tools/call", stateless({"name": "test_trigger_tool_change", "arguments": {}}))
                done = await client.post(
                    everything, json=call, headers=stateless_headers("tools/call", "test_trigger_tool_change")
                )
                assert (
                    done.status_code == 200 and done.json()["id"] == 9
                )  # no notification leaks onto the caller's POST
                with anyio.fail_after(5):
                    changed = await anext(messages)
                assert changed["method"] == "notifications/tools/list_changed"
                assert changed["params"]["_meta"][SUBSCRIPTION_ID] == "sub-1"
                assert "id" not in changed


# -- 3. a broken stream, resumed by our client ----------------------------------------------------


async def test_connect_http_resumes_a_closed_stream(everything: str) -> None:
    recorder = Recorder()
    with anyio.fail_after(DEADLINE):
        async with connect_http(
            everything,
            client_module(HANDSHAKE).Client,
            protocol_version=HANDSHAKE,
            handlers=make_handlers(HANDSHAKE, recorder),
            request_timeout=10,
        ) as client:
            started = time.monotonic()
            result = await client.call_tool(name="test_reconnection", arguments={})
            assert tool_text(result) == "Reconnection test completed"
            assert time.monotonic() - started >= 0.9  # waited the server's `retry:` (1000 ms) before resuming
            # The message sent before the break and the one replayed after it both arrived, once each.
            await recorder.wait_for(lambda r: len(r.of("log")) >= 2)
            assert [entry["data"] for entry in recorder.of("log")] == ["Before disconnect", "After reconnect"]
            # The session goes on normally afterwards.
            assert tool_text(await client.call_tool(name="test_simple_text", arguments={})).startswith(
                "This is a simple"
            )


async def test_connect_http_stateless_reconnection_tool(everything: str) -> None:
    """On the stateless wire `close_sse_stream` is a no-op: the call simply answers."""
    with anyio.fail_after(DEADLINE):
        async with connect_http(
            everything, client_module(STATELESS).Client, protocol_version=STATELESS, request_timeout=10
        ) as client:
            assert (
                tool_text(await client.call_tool(name="test_reconnection", arguments={}))
                == "Reconnection test completed"
            )


# -- 4. many concurrent clients -------------------------------------------------------------------


async def test_sixteen_concurrent_clients(echo_base: str) -> None:
    url = echo_base + "/mcp"
    results: dict[tuple[int, int], str] = {}
    calls = 20

    async def one_client(index: int) -> None:
        version = HANDSHAKE if index % 2 else STATELESS
        async with connect_http(
            url, client_module(version).Client, protocol_version=version, request_timeout=15
        ) as client:
            assert client.session.version == version

            async def call(n: int) -> None:
                text = f"client-{index}-call-{n}-" + "é" * (n % 3)
                results[(index, n)] = tool_text(await client.call_tool(name="echo", arguments={"text": text}))

            async with anyio.create_task_group() as group:
                for n in range(calls):
                    group.start_soon(call, n)

    with anyio.fail_after(40):
        async with anyio.create_task_group() as group:
            for index in range(16):
                group.start_soon(one_client, index)
    assert len(results) == 16 * calls
    crossed = {
        key: text for key, text in results.items() if text != f"client-{key[0]}-call-{key[1]}-" + "é" * (key[1] % 3)
    }
    assert not crossed


# -- 5. the official Python SDK as a peer over HTTP -----------------------------------------------


@pytest.fixture(scope="module")
def echo_stub_server() -> Iterator[str]:
    """examples/echo_server.py (2025-11-25 stub) with default options; its base URL."""
    module = load_example("echo_server")
    with serve_in_thread(create_app(module.make_server(HANDSHAKE))) as base:
        yield base


def run_sdk_client(sdk_python: str, mode: str, url: str) -> dict[str, Any]:
    argv = [sdk_python, str(PEERS / "http_sdk_client.py"), "--mode", mode, "--url", url]
    done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=60, cwd=str(REPO_ROOT))
    assert done.returncode == 0, f"the SDK client failed:\n{done.stderr[-3000:]}"
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert "fatal" not in report, report.get("traceback")
    for name, value in report.items():
        assert not (isinstance(value, dict) and "error" in value), f"step {name} failed: {value.get('traceback')}"
    return report


@pytest.mark.parametrize(("mode", "version"), [("legacy", HANDSHAKE), (STATELESS, STATELESS), ("auto", STATELESS)])
def test_sdk_client_against_our_http_server(sdk_python: str, echo_stub_server: str, mode: str, version: str) -> None:
    report = run_sdk_client(sdk_python, mode, echo_stub_server + "/mcp")
    assert report["protocol_version"] == version
    assert report["tools"] == ["echo"]
    assert report["echo"] == "héllo ✓ \U0001f600"
    assert report["concurrent"] == {str(i): f"c{i}" for i in range(5)}


def test_sdk_sse_client_against_our_legacy_endpoint(sdk_python: str, echo_stub_server: str) -> None:
    report = run_sdk_client(sdk_python, "sse", echo_stub_server + "/sse")
    assert report["initialize"]["protocolVersion"] == "2024-11-05"
    assert report["initialize"]["serverInfo"] == {"name": "echo", "version": "1.0.0"}
    assert report["tools"] == ["echo"]
    assert report["echo"] == "héllo ✓ \U0001f600"
    assert report["concurrent"] == {str(i): f"c{i}" for i in range(5)}


@pytest.fixture(scope="module")
def sdk_http_server(sdk_python: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("sdk-http") / "server.log"
    with open(log, "wb") as out, bound_socket() as sock:  # bound here, listened on by the server
        sock.listen()
        port = sock.getsockname()[1]
        process = subprocess.Popen(
            [sdk_python, str(PEERS / "http_sdk_server.py"), "--fd", str(sock.fileno())],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=server_env(),
            cwd=str(REPO_ROOT),
            pass_fds=(sock.fileno(),),
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                if process.poll() is not None:
                    pytest.fail(f"the SDK server exited with {process.returncode}:\n{log.read_text(errors='replace')}")
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
                if time.monotonic() > deadline:
                    pytest.fail(f"the SDK server did not listen within 30 s:\n{log.read_text(errors='replace')}")
                time.sleep(0.05)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            stop(process)


@pytest.mark.parametrize("version", [HANDSHAKE, STATELESS, "auto"])
async def test_our_client_against_sdk_http_server(sdk_http_server: str, version: str) -> None:
    stub = STATELESS if version == "auto" else version
    with anyio.fail_after(DEADLINE):
        async with connect_http(
            sdk_http_server, client_module(stub).Client, protocol_version=version, request_timeout=10
        ) as client:
            runtime = client.session
            assert runtime.version == (STATELESS if version == "auto" else version)
            if version != STATELESS:  # a pinned stateless connection never asks (no discover probe)
                assert runtime.server_info == {"name": "sdk-http-server", "version": "2.3.0-test"}
            assert [tool.name for tool in (await client.list_tools()).tools] == ["echo", "add"]
            assert (
                tool_text(await client.call_tool(name="echo", arguments={"text": "héllo ✓ \U0001f600"}))
                == "héllo ✓ \U0001f600"
            )
            assert tool_text(await client.call_tool(name="add", arguments={"a": 2, "b": 3})) == "5"

            async def echo(i: int) -> None:
                assert tool_text(await client.call_tool(name="echo", arguments={"text": f"n{i}"})) == f"n{i}"

            async with anyio.create_task_group() as group:
                for i in range(10):
                    group.start_soon(echo, i)


# -- regressions: request ids of different clients/sessions never meet --------------------------

# Stateless requests of different clients used to share one session keyed by the bare JSON-RPC id,
# so overlapping requests with equal ids were refused or lost their progress; and a broadcast from
# one session's request used that request's id to route in every other session.


async def test_stateless_same_id_from_concurrent_clients_keeps_progress_apart(everything: str) -> None:
    frames_of: dict[int, list[Any]] = {}
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:

            async def one(i: int) -> None:
                call = rpc(
                    1,
                    "tools/call",
                    stateless({"name": "test_tool_with_progress", "arguments": {}}, {"progressToken": f"tok-{i}"}),
                )
                headers = stateless_headers("tools/call", "test_tool_with_progress")
                async with client.stream("POST", everything, json=call, headers=headers) as response:
                    kind = response.headers["content-type"]
                    frames_of[i] = (
                        [m async for m in sse_messages(response)]
                        if "event-stream" in kind
                        else [orjson.loads(await response.aread())]
                    )

            async with anyio.create_task_group() as group:
                for i in range(6):
                    group.start_soon(one, i)
    for i, frames in frames_of.items():
        tokens = [f["params"]["progressToken"] for f in frames if f.get("method") == "notifications/progress"]
        assert tokens == [f"tok-{i}"] * 3, (i, tokens)
        assert frames[-1]["id"] == 1 and "result" in frames[-1]


async def test_stateless_distinct_ids_from_concurrent_clients_keep_progress_apart(everything: str) -> None:
    """The control of the test above: with distinct ids every stream gets exactly its own progress."""
    frames_of: dict[int, list[Any]] = {}
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=10) as client:

            async def one(i: int) -> None:
                call = rpc(
                    100 + i,
                    "tools/call",
                    stateless({"name": "test_tool_with_progress", "arguments": {}}, {"progressToken": f"tok-{i}"}),
                )
                headers = stateless_headers("tools/call", "test_tool_with_progress")
                async with client.stream("POST", everything, json=call, headers=headers) as response:
                    frames_of[i] = [m async for m in sse_messages(response)]

            async with anyio.create_task_group() as group:
                for i in range(6):
                    group.start_soon(one, i)
    for i, frames in frames_of.items():
        tokens = [f["params"]["progressToken"] for f in frames if f.get("method") == "notifications/progress"]
        assert tokens == [f"tok-{i}"] * 3, (i, tokens)
        assert frames[-1]["id"] == 100 + i


async def test_stateless_listeners_with_the_same_id_each_get_their_notification(everything: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as client:
            listen = rpc(1, "subscriptions/listen", stateless({"notifications": {"toolsListChanged": True}}))
            headers = stateless_headers("subscriptions/listen")
            async with (
                client.stream("POST", everything, json=listen, headers=headers) as first,
                client.stream("POST", everything, json=listen, headers=headers) as second,
            ):
                assert (first.status_code, second.status_code) == (200, 200)
                streams = [sse_messages(first), sse_messages(second)]
                for messages in streams:
                    with anyio.fail_after(5):
                        assert (await anext(messages))["method"] == "notifications/subscriptions/acknowledged"
                call = rpc(9, "tools/call", stateless({"name": "test_trigger_tool_change", "arguments": {}}))
                await client.post(
                    everything, json=call, headers=stateless_headers("tools/call", "test_trigger_tool_change")
                )
                seen: list[list[str]] = [[], []]

                async def drain(index: int) -> None:
                    with anyio.move_on_after(1.5):
                        async for message in streams[index]:
                            seen[index].append(message["method"])

                async with anyio.create_task_group() as group:
                    group.start_soon(drain, 0)
                    group.start_soon(drain, 1)
            assert seen == [["notifications/tools/list_changed"], ["notifications/tools/list_changed"]], seen


async def test_two_stateless_connect_http_clients_overlapping_calls(everything: str) -> None:
    """The same bug as our own clients meet it: two independent 2026-07-28 clients whose first call
    (id 1 in both) overlaps in time; both must get their result."""
    texts: list[str] = []
    with anyio.fail_after(DEADLINE):

        async def one() -> None:
            async with connect_http(
                everything, client_module(STATELESS).Client, protocol_version=STATELESS, request_timeout=10
            ) as client:
                texts.append(tool_text(await client.call_tool(name="test_tool_with_logging", arguments={})))

        async with anyio.create_task_group() as group:
            group.start_soon(one)
            group.start_soon(one)
    assert texts == ["Tool with logging executed successfully"] * 2


async def test_broadcast_to_other_session_uses_its_get_stream_despite_equal_ids(everything: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as client:
            listener = await open_session(client, everything)
            actor = await open_session(client, everything)
            on_get: list[str] = []
            on_post: list[Any] = []
            async with client.stream("GET", everything, headers={**listener, "Accept": "text/event-stream"}) as stream:

                async def read_get() -> None:
                    async for message in sse_messages(stream):
                        on_get.append(message["method"])

                async def busy_listener() -> None:  # the listener's own request 7 (takes ~0.1 s, logs)
                    call = rpc(7, "tools/call", {"name": "test_tool_with_logging", "arguments": {}})
                    async with client.stream("POST", everything, json=call, headers=listener) as response:
                        on_post.extend([m.get("method") or m["id"] async for m in sse_messages(response)])

                async with anyio.create_task_group() as group:
                    group.start_soon(read_get)
                    group.start_soon(busy_listener)
                    await anyio.sleep(0.03)
                    call = rpc(7, "tools/call", {"name": "test_trigger_tool_change", "arguments": {}})
                    assert (await client.post(everything, json=call, headers=actor)).status_code == 200
                    await anyio.sleep(0.5)
                    group.cancel_scope.cancel()
    assert on_post[-1] == 7 and "notifications/tools/list_changed" not in on_post, on_post
    assert on_get == ["notifications/tools/list_changed"], on_get


async def test_connect_failures_and_caller_errors_come_out_unwrapped(everything: str) -> None:
    """No ExceptionGroup leaks from connect_http: a refused connection is an McpError, and an error
    raised in the caller's block is that very error."""
    from mcp_bindings.runtime.rpc.errors import McpError

    with anyio.fail_after(DEADLINE):
        with refused_port() as port, pytest.raises(McpError, match="HTTP request failed"):
            async with connect_http(
                f"http://127.0.0.1:{port}/mcp",
                client_module(HANDSHAKE).Client,
                protocol_version=HANDSHAKE,
                request_timeout=5,
            ):
                pass
        mine = LookupError("raised by the caller")
        with pytest.raises(LookupError) as caught:
            async with connect_http(everything, client_module(HANDSHAKE).Client, protocol_version=HANDSHAKE):
                raise mine
        assert caught.value is mine
