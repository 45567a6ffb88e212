"""The proxy (issue 32, item 3): `App.proxy(url | command)` serves a remote server of any version, on
any transport, as an app of its own. The remote here is the runtime tests' stdio server
(tests/peers/stdio_server.py, a 2025-11-25 stub), reached at 2024-11-05 (pinned) or in "auto"; the
proxy's clients speak 2025-11-25 and 2026-07-28. The real third-party servers behind the proxy, with
the official SDK's client in front, are in tests/interop/test_proxy_peers.py."""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.app.testing import client_handlers
from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.runtime.protocol import registry, versions
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, McpError
from mcp_bindings.v2025_11_25 import client as client_25
from tests.peers.harness import PEERS
from tests.support.http import serve_in_thread

pytestmark = pytest.mark.anyio

VERSIONS = ["2025-11-25", "2026-07-28"]
REMOTE = [sys.executable, str(PEERS / "stdio_server.py")]
LIMIT = 30  # seconds per scenario (the remote's start included)


def _text(result: Any) -> str:
    return versions.dump(result)["content"][0]["text"]


def old_remote() -> App:
    """The remote, reached at 2024-11-05 whatever its clients speak."""
    return App.proxy(REMOTE, name="old", protocol_version="2024-11-05")


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_2024_11_05_stdio_server_is_served_to_every_version(version: str) -> None:
    proxy = old_remote()
    with anyio.fail_after(LIMIT):
        async with proxy.test_client(version) as client:
            assert proxy.remote is not None and proxy.remote.client.session.version == "2024-11-05"
            tools = [tool.name for tool in (await client.list_tools()).tools]
            assert tools[:3] == ["echo", "sleep", "progress"] and "exit" in tools
            assert _text(await client.call_tool(name="echo", arguments={"text": "hello"})) == "hello"
            read = versions.dump(await client.read_resource(uri="test://r/3"))
            assert read["contents"] == [
                {"uri": "test://r/3", "mimeType": "text/plain", "text": "content of test://r/3"}
            ]
            prompts = [prompt.name for prompt in (await client.list_prompts()).prompts]
            assert prompts[:2] == ["p0", "p1"]
            got = versions.dump(await client.get_prompt(name="p1", arguments={"topic": "owls"}))
            assert "owls" in json.dumps(got["messages"])
            assert client.session.peer_capabilities.get("tools") == {"listChanged": True}


@pytest.mark.parametrize("version", VERSIONS)
async def test_errors_keep_their_code_and_message(version: str) -> None:
    proxy = old_remote()
    with anyio.fail_after(LIMIT):
        async with proxy.test_client(version) as client:
            with pytest.raises(McpError) as failed:
                await client.call_tool(name="fail", arguments={"code": -32099, "message": "remote says no"})
            assert (failed.value.code, failed.value.message) == (-32099, "remote says no")
            with pytest.raises(McpError) as unknown:
                await client.call_tool(name="nope", arguments={})
            assert unknown.value.code == INVALID_PARAMS and "nope" in unknown.value.message
            with pytest.raises(McpError) as missing:
                await client.read_resource(uri="other://x")
            expected = registry.protocol(version).error_codes.resource_not_found or INVALID_PARAMS
            assert missing.value.code == expected and "other://x" in missing.value.message


@pytest.mark.parametrize("version", VERSIONS)
async def test_progress_and_logs_of_a_call_reach_its_client(version: str) -> None:
    proxy = App.proxy(REMOTE, name="proxy")
    logs: list[dict[str, Any]] = []
    progress: list[tuple[float, float | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total))

    with anyio.fail_after(LIMIT):
        async with proxy.test_client(version, on_log=logs.append) as client:
            await client.set_logging_level("warning")
            with client.session.progress(on_progress):
                assert _text(await client.call_tool(name="progress", arguments={"steps": 3})) == "done"
            assert _text(await client.call_tool(name="log_all", arguments={})) == "logged"
            with anyio.fail_after(5):
                while len(logs) < 5:
                    await anyio.sleep(0.02)
    assert progress == [(1, 3), (2, 3), (3, 3)]
    assert [entry["data"]["level"] for entry in logs] == ["warning", "error", "critical", "alert", "emergency"]


@pytest.mark.parametrize("version", VERSIONS)
async def test_the_remotes_requests_are_asked_of_the_client_of_the_call(version: str) -> None:
    # Pinned: the remote's handlers send requests, which a stateless (2026-07-28) session of its cannot.
    proxy = App.proxy(REMOTE, name="proxy", protocol_version="2025-11-25")
    asked: list[str] = []

    def sample(params: dict[str, Any]) -> str:
        asked.append(params["messages"][0]["content"]["text"])
        return "a haiku"

    with anyio.fail_after(LIMIT):
        async with proxy.test_client(
            version, sample=sample, elicit=lambda message, schema: {"name": "ada"}, roots=["file:///work"]
        ) as client:
            sampled = json.loads(_text(await client.call_tool(name="ask_sampling", arguments={"prompt": "write"})))
            assert sampled["content"]["text"] == "a haiku" and asked[-1] == "write"
            elicited = json.loads(_text(await client.call_tool(name="ask_elicitation", arguments={})))
            assert elicited == {"action": "accept", "content": {"name": "ada"}}
            roots = json.loads(_text(await client.call_tool(name="ask_roots", arguments={})))
            assert [root["uri"] for root in roots["roots"]] == ["file:///work"]


async def test_a_client_that_cannot_answer_is_named_in_the_remotes_error() -> None:
    proxy = App.proxy(REMOTE, name="proxy", protocol_version="2025-11-25")
    with anyio.fail_after(LIMIT):
        async with proxy.test_client("2025-11-25") as client:  # declares no sampling
            with pytest.raises(McpError) as refused:
                await client.call_tool(name="ask_sampling", arguments={"prompt": "write"})
    assert "sampling" in refused.value.message


async def test_the_remotes_list_changes_reach_the_clients() -> None:
    proxy = App.proxy(REMOTE, name="proxy")
    seen: list[str] = []
    with anyio.fail_after(LIMIT):
        async with proxy.test_client("2025-11-25", on_notification=lambda method, params: seen.append(method)) as c:
            await c.call_tool(name="change_lists", arguments={})
            with anyio.fail_after(5):
                while len(set(seen)) < 3:
                    await anyio.sleep(0.02)
            assert (await c.list_tools()).tools[0].name == "echo"  # listed again, still there
    assert set(seen) == {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
    }


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_remote_that_exits_mid_call_is_a_json_rpc_error_naming_it(version: str) -> None:
    proxy = App.proxy(REMOTE, name="proxy")
    with anyio.fail_after(LIMIT):
        async with proxy.test_client(version) as client:
            with pytest.raises(McpError) as died:
                await client.call_tool(name="exit", arguments={"code": 3})
            assert died.value.code == INTERNAL_ERROR
            assert "stdio_server.py" in died.value.message and "tools/call" in died.value.message
            with pytest.raises(McpError) as after:  # and the next request is answered too, at once
                await client.call_tool(name="echo", arguments={"text": "anyone?"})
            assert after.value.code == INTERNAL_ERROR and "stdio_server.py" in after.value.message


async def test_a_remote_that_cannot_start_is_one_clear_error() -> None:
    proxy = App.proxy(["/nonexistent/mcp-server"], name="proxy")
    with anyio.fail_after(LIMIT), pytest.raises(ConnectionError) as failed:
        async with proxy.test_client():
            pass
    assert "/nonexistent/mcp-server" in str(failed.value) and "App.proxy" in str(failed.value)


@pytest.mark.parametrize("version", VERSIONS)
async def test_mounted_under_a_namespace(version: str) -> None:
    main = App("main")

    @main.tool
    def hello() -> str:
        return "hello"

    main.mount(old_remote(), namespace="old")
    with anyio.fail_after(LIMIT):
        async with main.test_client(version) as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            assert tools[0] == "hello" and "old_echo" in tools
            assert _text(await client.call_tool(name="old_echo", arguments={"text": "hi"})) == "hi"
            read = versions.dump(await client.read_resource(uri="test://old/r/2"))
            assert read["contents"][0]["text"] == "content of test://r/2"
            got = versions.dump(await client.get_prompt(name="old_p0", arguments={"topic": "owls"}))
            assert "owls" in json.dumps(got["messages"])
            assert "prompts" in client.session.peer_capabilities


async def test_a_streamable_http_remote_in_front_of_a_stdio_one() -> None:
    """Two proxies: one serves the stdio remote over Streamable HTTP, the other proxies that URL."""
    front = App.proxy(REMOTE, name="front")
    with serve_in_thread(front.asgi()) as base:
        proxy = App.proxy(f"{base}/mcp", name="back")
        with anyio.fail_after(LIMIT):
            async with proxy.test_client("2026-07-28") as client:
                assert _text(await client.call_tool(name="echo", arguments={"text": "twice"})) == "twice"
            async with connect_http(f"{base}/mcp", client_25.Client) as direct:
                assert direct.session.server_info["name"] == "front"


async def test_a_legacy_http_sse_remote() -> None:
    """A 2024-11-05 HTTP+SSE server (the front proxy's /sse) served to a 2026-07-28 client."""
    front = App.proxy(REMOTE, name="front")
    with serve_in_thread(front.asgi()) as base:
        proxy = App.proxy(f"{base}/sse", name="back", sse=True)
        with anyio.fail_after(LIMIT):
            async with proxy.test_client("2026-07-28") as client:
                assert proxy.remote is not None and proxy.remote.client.session.version == "2024-11-05"
                assert _text(await client.call_tool(name="echo", arguments={"text": "old"})) == "old"


def test_sse_needs_a_url() -> None:
    with pytest.raises(ValueError, match="sse=True is for a URL"):
        App.proxy(REMOTE, sse=True)
    with pytest.raises(ValueError, match=r"URL .* or the command"):
        App.proxy([])


@pytest.mark.parametrize("version", VERSIONS)
async def test_completions_are_the_remotes(version: str) -> None:
    # The remote (2024-11-05) completes from its colours; the proxy advertises completions and
    # answers each request with the remote's completion, total and hasMore as the remote gave them.
    proxy = old_remote()
    with anyio.fail_after(LIMIT):
        async with proxy.test_client(version) as client:
            assert "completions" in client.session.peer_capabilities
            result = await client.complete(
                ref={"type": "ref/prompt", "name": "p1"}, argument={"name": "topic", "value": "b"}
            )
            assert versions.dump(result)["completion"] == {
                "values": ["blue", "black", "brown"],
                "total": 3,
                "hasMore": False,
            }


async def test_a_remote_without_completions_is_not_advertised_as_having_them() -> None:
    remote = App("plain", protocol="2025-11-25")

    @remote.tool
    def echo(text: str) -> str:
        return text

    with serve_in_thread(remote.asgi()) as base:
        proxy = App.proxy(f"{base}/mcp", name="front")
        with anyio.fail_after(LIMIT):
            async with proxy.test_client("2025-11-25") as client:
                assert "completions" not in client.session.peer_capabilities
                assert [tool.name for tool in (await client.list_tools()).tools] == ["echo"]


# -- resource subscriptions ----------------------------------------------------------------------

SUBSCRIBING = [sys.executable, str(PEERS / "subscriptions_server.py")]  # offers resources.subscribe
# (the remote's version, the proxy's clients'): a 2024-11-05 remote (resources/subscribe) and a
# 2026-07-28 one (subscriptions/listen), each served to clients of both eras.
ERAS = [
    ("2024-11-05", "2026-07-28"),
    ("2024-11-05", "2025-11-25"),
    ("2026-07-28", "2024-11-05"),
    ("2026-07-28", "2025-11-25"),
    ("2026-07-28", "2026-07-28"),
]


@asynccontextmanager
async def _subscribed(client: Any, uri: str, *, let_go: bool = True) -> AsyncIterator[None]:
    """`uri` subscribed to for the block, as the client's era does it (the update reaches its
    handlers); `let_go=False`: a handshake client does not unsubscribe (its session ends later)."""
    if client.session.stateless:
        async with client.listen({"resourceSubscriptions": [uri]}) as stream:
            assert stream.agreed == {"resourceSubscriptions": [uri]}
            yield
    else:
        await client.subscribe_resource(uri=uri)
        yield
        if let_go:
            await client.unsubscribe_resource(uri=uri)


async def _remote_state(client: Any, until: Callable[[dict[str, Any]], bool], tool: str = "state") -> dict[str, Any]:
    """The remote's record (its `state` tool, through the proxy), once `until` holds (bounded)."""
    with anyio.fail_after(10):
        while True:
            state: dict[str, Any] = json.loads(_text(await client.call_tool(name=tool, arguments={})))
            if until(state):
                return state
            await anyio.sleep(0.05)


@pytest.mark.parametrize(("remote_version", "version"), ERAS)
async def test_subscriptions_are_held_at_the_remote_once_per_uri(remote_version: str, version: str) -> None:
    pinned: dict[str, Any] = {"protocol_version": remote_version} if remote_version != "2026-07-28" else {}
    proxy = App.proxy(SUBSCRIBING, name="proxy", **pinned)
    client_cls = importlib.import_module(f"{registry.load_version(version).__name__}.client").Client
    updates: dict[str, list[str]] = {"a": [], "b": []}

    def connect(name: str, url: str) -> Any:
        def seen(method: str, params: Any) -> None:
            if method == "notifications/resources/updated":
                updates[name].append(params["uri"])

        handlers = client_handlers(version, on_notification=seen)
        asked = "auto" if version == "2026-07-28" else version  # (probed: the capabilities are known)
        return connect_http(url, client_cls, protocol_version=asked, handlers=handlers)

    with serve_in_thread(proxy.asgi()) as base, anyio.fail_after(LIMIT):
        async with connect("a", f"{base}/mcp") as a:
            assert proxy.remote is not None and proxy.remote.client.session.version == remote_version
            assert a.session.version == version
            assert a.session.peer_capabilities["resources"] == {"listChanged": True, "subscribe": True}
            async with AsyncExitStack() as b_connection:
                b = await b_connection.enter_async_context(connect("b", f"{base}/mcp"))
                await b_connection.enter_async_context(_subscribed(b, "sub://a", let_go=False))
                async with _subscribed(a, "sub://a"):
                    await _remote_state(a, lambda state: state["holders"] == ["sub://a 1"])
                    assert json.loads(_text(await a.call_tool(name="touch", arguments={"uri": "sub://a"}))) == 1
                    assert json.loads(_text(await a.call_tool(name="touch", arguments={"uri": "sub://b"}))) == 0
                    with anyio.fail_after(5):
                        while updates["a"] == [] or updates["b"] == []:
                            await anyio.sleep(0.02)
                # a let go; b still holds it: the remote too
                await anyio.sleep(0.2)
                assert (await _remote_state(a, lambda state: True))["holders"] == ["sub://a 1"]
            # b's session ended (or its listen stream closed) without unsubscribing: the remote let go
            state = await _remote_state(a, lambda state: state["holders"][-1] == "sub://a 0")
    assert updates == {"a": ["sub://a"], "b": ["sub://a"]}
    assert state["holders"] == ["sub://a 1", "sub://a 0"]
    handshake = remote_version != "2026-07-28"  # (a stateless remote holds a listen stream instead)
    assert state["requests"] == (["subscribe sub://a", "unsubscribe sub://a"] if handshake else [])


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_remote_without_subscriptions_is_not_advertised_as_having_them(version: str) -> None:
    proxy = App.proxy(SUBSCRIBING, name="proxy", env={**os.environ, "MCP_TEST_NO_SUBSCRIBE": "1"})
    with anyio.fail_after(LIMIT):
        async with proxy.test_client(version) as client:
            assert client.session.peer_capabilities["resources"] == {"listChanged": True}
            if client.session.stateless:  # not agreed: the acknowledgement leaves it out
                async with client.listen({"resourceSubscriptions": ["sub://a"]}) as stream:
                    assert stream.agreed == {}
            else:
                with pytest.raises(McpError) as refused:
                    await client.subscribe_resource(uri="sub://a")
                assert refused.value.code == METHOD_NOT_FOUND
                assert "resources/subscribe" in refused.value.message and "resources.subscribe" in refused.value.message


@pytest.mark.parametrize(("remote_version", "version"), [("2024-11-05", "2025-11-25"), ("2026-07-28", "2026-07-28")])
async def test_a_mounted_proxy_holds_the_parents_subscriptions_at_the_remote(remote_version: str, version: str) -> None:
    pinned: dict[str, Any] = {"protocol_version": remote_version} if remote_version != "2026-07-28" else {}
    main = App("main")
    main.mount(App.proxy(SUBSCRIBING, name="up", **pinned), namespace="up")
    updates: list[str] = []

    def seen(method: str, params: Any) -> None:
        if method == "notifications/resources/updated":
            updates.append(params["uri"])

    with anyio.fail_after(LIMIT):
        async with main.test_client(version, on_notification=seen) as client:
            assert client.session.peer_capabilities["resources"]["subscribe"] is True
            touch = {"name": "up_touch", "arguments": {"uri": "sub://a"}}
            async with _subscribed(client, "sub://up/a"):  # the remote's sub://a, under the namespace
                state = await _remote_state(client, lambda state: state["holders"] == ["sub://a 1"], "up_state")
                assert json.loads(_text(await client.call_tool(**touch))) == 1
                with anyio.fail_after(5):
                    while not updates:
                        await anyio.sleep(0.02)
            state = await _remote_state(client, lambda state: state["holders"][-1] == "sub://a 0", "up_state")
    assert updates == ["sub://up/a"]
    handshake = remote_version != "2026-07-28"
    assert state["requests"] == (["subscribe sub://a", "unsubscribe sub://a"] if handshake else [])
