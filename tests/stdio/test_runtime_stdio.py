"""Our stdio client (`connect_stdio`) against our stdio server (`serve_stdio`) as real processes,
for each handshake version: correlation, concurrency, timeouts, cancellation, progress, ping,
logging, list changes, subscriptions, pagination and server->client requests."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.rpc.calls import REQUEST_TIMEOUT
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_PARAMS, ConnectionClosed, McpError
from mcp_bindings.runtime.server.runtime import LOG_LEVELS
from mcp_bindings.runtime.stdio.connect import connect_stdio
from tests.peers.harness import (
    HANDSHAKE_VERSIONS,
    Recorder,
    client_module,
    make_handlers,
    raw_server,
    server_command,
    server_env,
    tool_json,
    tool_text,
)
from tests.support import REPO_ROOT

pytestmark = pytest.mark.anyio
LIMIT = 30  # seconds any one test may take


@asynccontextmanager
async def connected(
    version: str, tmp_path: Path, *, protocol_version: str | None = None, request_timeout: float = 10, **env: str
) -> AsyncIterator[tuple[Any, Recorder]]:
    """Spawn the test server and connect the `version` client stub to it (with recording handlers)."""
    recorder = Recorder()
    with open(tmp_path / "server.stderr", "wb") as stderr:
        async with connect_stdio(
            server_command(),
            client_module(version).Client,
            handlers=make_handlers(version, recorder),
            protocol_version=protocol_version,
            request_timeout=request_timeout,
            env=server_env(**env),
            cwd=str(REPO_ROOT),
            stderr=stderr,
        ) as client:
            yield client, recorder


async def server_state(client: Any) -> dict[str, Any]:
    return tool_json(await client.call_tool(name="state", arguments={}))


async def wait_for_state(client: Any, predicate: Any, timeout: float = 5.0) -> dict[str, Any]:
    with anyio.fail_after(timeout):
        while True:
            state = await server_state(client)
            if predicate(state):
                return state
            await anyio.sleep(0.05)


async def ping(client: Any) -> Any:
    return await client.session.session.request("ping", None)


versions = pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)


# -- handshake, correlation, concurrency ------------------------------------------------------


@pytest.mark.parametrize(
    ("stub", "pinned"),
    [(v, None) for v in HANDSHAKE_VERSIONS] + [("2025-11-25", "2024-11-05"), ("2024-11-05", "2025-11-25")],
)
async def test_handshake_and_correlation(stub: str, pinned: str | None, tmp_path: Path) -> None:
    expected = pinned or stub
    with anyio.fail_after(LIMIT):
        async with connected(stub, tmp_path, protocol_version=pinned) as (client, _):
            runtime = client.session
            assert runtime.version == expected
            assert runtime.server_info == {"name": "runtime-test-server", "version": "1.0.0"}
            assert runtime.instructions == "a server for the runtime's process tests"
            caps = client.server_capabilities
            assert caps["tools"] == {"listChanged": True}
            assert caps["resources"] == {"subscribe": True, "listChanged": True}
            assert "logging" in caps
            assert ("completions" in caps) == (expected != "2024-11-05")  # 2024-11-05 has no completions capability

            tools = await client.list_tools()
            assert "echo" in [tool.name for tool in tools.tools]
            for i in range(50):  # strictly sequential: each answer is the one to its own request
                text = f"message {i} ✓ \U0001f600"
                assert tool_text(await client.call_tool(name="echo", arguments={"text": text})) == text

            read = await client.read_resource(uri="test://r/3")
            assert read.contents[0].text == "content of test://r/3"
            prompt = await client.get_prompt(name="p1", arguments={"topic": "cats"})
            assert prompt.messages[0].content.text == "talk about cats"
            if expected != "2024-11-05":
                done = await client.complete(
                    ref={"type": "ref/prompt", "name": "p1"}, argument={"name": "topic", "value": "b"}
                )
                assert done.completion.values == ["blue", "black", "brown"]


@versions
async def test_concurrent_requests_are_correlated(version: str, tmp_path: Path) -> None:
    results: dict[str, str] = {}
    with anyio.fail_after(LIMIT):
        async with connected(version, tmp_path) as (client, _):

            async def slow(i: int) -> None:
                # later requests finish first: answers come back in the reverse order
                result = await client.call_tool(name="sleep", arguments={"seconds": 0.05 * (10 - i), "tag": f"s{i}"})
                results[f"s{i}"] = tool_text(result)

            async def fast(i: int) -> None:
                result = await client.call_tool(name="echo", arguments={"text": f"e{i}"})
                results[f"e{i}"] = tool_text(result)

            started = time.perf_counter()
            async with anyio.create_task_group() as group:
                for i in range(10):
                    group.start_soon(slow, i)
                    group.start_soon(fast, i)
            elapsed = time.perf_counter() - started
    assert results == {key: key for key in results} and len(results) == 20
    assert elapsed < 2.5, f"10 sleeps of up to 0.5 s took {elapsed:.2f} s: requests were not concurrent"


# -- timeouts and cancellation ------------------------------------------------------------------


@versions
async def test_request_timeout_cancels_the_server_handler(
    version: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp_bindings")
    with anyio.fail_after(LIMIT):
        async with connected(version, tmp_path) as (client, _):
            # `request_timeout` also bounds `initialize`, which waits for the server process to start:
            # set the short per-request limit once connected.
            client.session.request_timeout = 0.5
            started = time.perf_counter()
            with pytest.raises(McpError) as caught:
                await client.call_tool(name="sleep", arguments={"seconds": 10, "tag": "slow"})
            assert caught.value.code == REQUEST_TIMEOUT
            assert time.perf_counter() - started < 2
            state = await wait_for_state(client, lambda s: "cancelled:slow" in s["events"])
            assert "finished:slow" not in state["events"]
            assert tool_text(await client.call_tool(name="echo", arguments={"text": "still here"})) == "still here"
    assert not [r for r in caplog.records if "unknown id" in r.getMessage()], "the server answered a cancelled request"


@versions
async def test_cancelling_mid_handler(version: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp_bindings")
    with anyio.fail_after(LIMIT):
        async with connected(version, tmp_path) as (client, _):
            with anyio.move_on_after(0.5) as scope:
                await client.call_tool(name="sleep", arguments={"seconds": 10, "tag": "c1"})
            assert scope.cancelled_caught
            state = await wait_for_state(client, lambda s: "cancelled:c1" in s["events"])
            assert state["events"].count("started:c1") == 1 and "finished:c1" not in state["events"]

            # cancelling one of several in-flight requests leaves the others alone
            results: list[str] = []
            async with anyio.create_task_group() as group:

                async def keep(tag: str) -> None:
                    results.append(
                        tool_text(await client.call_tool(name="sleep", arguments={"seconds": 0.6, "tag": tag}))
                    )

                async def abandon() -> None:
                    with anyio.move_on_after(0.2):
                        await client.call_tool(name="sleep", arguments={"seconds": 10, "tag": "c2"})

                group.start_soon(keep, "k1")
                group.start_soon(abandon)
                group.start_soon(keep, "k2")
            assert sorted(results) == ["k1", "k2"]
            state = await wait_for_state(client, lambda s: "cancelled:c2" in s["events"])
            assert "finished:c2" not in state["events"]

            # late and unknown cancels are ignored, and so are malformed ones
            session = client.session.session
            for params in ({"requestId": 1}, {"requestId": 987654}, {"requestId": "nope"}, {"reason": "x"}, None):
                await session.notify("notifications/cancelled", params)
            assert await ping(client) == {}
            assert tool_text(await client.call_tool(name="echo", arguments={"text": "after"})) == "after"
            state = await server_state(client)
            assert [e for e in state["events"] if e.startswith("cancelled")] == ["cancelled:c1", "cancelled:c2"]
    # a response to a cancelled request would reach the client as one with an unknown id
    assert not [r for r in caplog.records if "unknown id" in r.getMessage()], "the server answered a cancelled request"


# -- progress, ping, logging --------------------------------------------------------------------


@versions
async def test_progress_notifications(version: str, tmp_path: Path) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with anyio.fail_after(LIMIT):
        async with connected(version, tmp_path) as (client, _):
            with client.session.progress(on_progress):
                result = await client.call_tool(name="progress", arguments={"steps": 5, "delay": 0.01})
            assert tool_text(result) == "done"
            with anyio.fail_after(5):
                while len(seen) < 5:  # notifications are handled concurrently with the response
                    await anyio.sleep(0.01)
            progress = [p for p, _, _ in seen]
            assert progress == [1, 2, 3, 4, 5]  # delivered in wire order
            assert all(total == 5 for _, total, _ in seen)
            if version != "2024-11-05":  # `message` arrived in 2025-03-26
                assert {message for _, _, message in seen} == {f"step {i}" for i in range(1, 6)}

            # without the block no token is sent, and the handler's reports go nowhere
            seen.clear()
            await client.call_tool(name="progress", arguments={"steps": 3})
            await anyio.sleep(0.2)
            assert seen == []


@versions
async def test_ping_both_ways(version: str, tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        async with connected(version, tmp_path) as (client, _):
            assert await ping(client) == {}
            assert tool_text(await client.call_tool(name="ping_client", arguments={})) == "pong"


@versions
async def test_logging_set_level_filters_messages(version: str, tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        async with connected(version, tmp_path) as (client, recorder):
            session = client.session.session

            async def logged_levels(expected: int) -> list[str]:
                recorder.calls.clear()
                assert tool_text(await client.call_tool(name="log_all", arguments={})) == "logged"
                await recorder.wait_for(lambda r: len(r.of("log")) >= expected)
                await anyio.sleep(0.2)  # nothing more arrives
                return [entry["level"] for entry in recorder.of("log")]

            assert sorted(await logged_levels(8), key=LOG_LEVELS.index) == list(LOG_LEVELS)
            assert await session.request("logging/setLevel", {"level": "warning"}) == {}
            assert sorted(await logged_levels(5), key=LOG_LEVELS.index) == list(LOG_LEVELS[3:])
            assert await session.request("logging/setLevel", {"level": "emergency"}) == {}
            assert await logged_levels(1) == ["emergency"]
            entry = recorder.of("log")[0]
            assert entry == {"level": "emergency", "data": {"level": "emergency"}, "logger": "test"}
            with pytest.raises(McpError) as caught:
                await session.request("logging/setLevel", {"level": "loud"})
            assert caught.value.code == INVALID_PARAMS


# -- notifications: list changes, subscriptions --------------------------------------------------


@versions
async def test_list_changed_notifications(version: str, tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        async with connected(version, tmp_path) as (client, recorder):
            assert tool_text(await client.call_tool(name="change_lists", arguments={})) == "changed"
            wanted = {"tools_changed", "prompts_changed", "resources_changed"}
            await recorder.wait_for(lambda r: wanted <= {kind for kind, _ in r.calls})


@pytest.mark.parametrize(
    "version",
    HANDSHAKE_VERSIONS,
)
async def test_resource_subscriptions(version: str, tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        async with connected(version, tmp_path) as (client, recorder):
            await client.subscribe_resource(uri="test://r/3")
            assert tool_json(await client.call_tool(name="touch", arguments={"uri": "test://r/3"})) == {
                "subscribed": True
            }
            await recorder.wait_for(lambda r: r.of("updated") == ["test://r/3"])

            assert tool_json(await client.call_tool(name="touch", arguments={"uri": "test://r/4"})) == {
                "subscribed": False
            }
            await client.unsubscribe_resource(uri="test://r/3")
            assert (await server_state(client))["subscriptions"] == []
            assert tool_json(await client.call_tool(name="touch", arguments={"uri": "test://r/3"})) == {
                "subscribed": False
            }
            await anyio.sleep(0.2)
            assert recorder.of("updated") == ["test://r/3"]


# -- pagination -------------------------------------------------------------------------------


@versions
async def test_pagination(version: str, tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        async with connected(version, tmp_path, MCP_TEST_PAGE_SIZE="10", MCP_TEST_RESOURCES="25") as (client, _):
            uris: list[str] = []
            cursors: list[str | None] = []
            cursor: str | None = None
            while True:
                page = await client.list_resources(cursor=cursor)
                uris += [str(resource.uri) for resource in page.resources]
                cursor = page.next_cursor
                cursors.append(cursor)
                if cursor is None:
                    break
            assert uris == [f"test://r/{i}" for i in range(25)]
            assert len(cursors) == 3 and cursors[-1] is None and len(set(cursors)) == 3

            prompts = await client.list_prompts()
            assert len(prompts.prompts) == 7 and prompts.next_cursor is None

            first = await client.list_resources()
            for bad in ("garbage", "", "!!!", first.next_cursor + "x"):
                with pytest.raises(McpError) as caught:
                    await client.list_resources(cursor=bad)
                assert caught.value.code == INVALID_PARAMS
                assert caught.value.data["errors"][0]["path"] == "params.cursor"
            # a cursor issued for one list is refused by another
            with pytest.raises(McpError) as caught:
                await client.list_prompts(cursor=first.next_cursor)
            assert caught.value.code == INVALID_PARAMS


# -- server -> client requests ------------------------------------------------------------------


@versions
async def test_server_to_client_requests(version: str, tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        async with connected(version, tmp_path) as (client, recorder):
            sampled = tool_json(await client.call_tool(name="ask_sampling", arguments={"prompt": "hello"}))
            assert sampled["content"] == {"type": "text", "text": "sampled: hello"}
            assert sampled["model"] == "test-model" and sampled["role"] == "assistant"
            assert recorder.of("sampling")[0]["maxTokens"] == 10

            roots = tool_json(await client.call_tool(name="ask_roots", arguments={}))
            assert roots == {"roots": [{"uri": "file:///tmp/project", "name": "project"}]}

            if version >= "2025-06-18":
                elicited = tool_json(await client.call_tool(name="ask_elicitation", arguments={}))
                assert elicited == {"action": "accept", "content": {"name": "Ada"}}
                assert recorder.of("elicitation")[0]["message"] == "your name?"
            else:  # elicitation does not exist in this version: the server cannot ask, and says why
                with pytest.raises(McpError) as caught:
                    await client.call_tool(name="ask_elicitation", arguments={})
                assert caught.value.code == INTERNAL_ERROR
                assert f"the client speaks MCP {version}, which has no elicitation/create" in caught.value.message

            await client.notify_roots_list_changed()
            await client.notify_roots_list_changed()
            await wait_for_state(client, lambda s: s["roots_changed"] == 2)


# -- errors and robustness ----------------------------------------------------------------------


@versions
async def test_handler_errors_and_stray_stdout(version: str, tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        async with connected(version, tmp_path) as (client, _):
            with pytest.raises(McpError) as caught:
                await client.call_tool(name="boom", arguments={})
            assert caught.value.code == INTERNAL_ERROR
            assert "kaboom" not in caught.value.message and "Traceback" not in caught.value.message
            with pytest.raises(McpError) as caught:
                await client.call_tool(name="fail", arguments={"code": -32002, "message": "nope", "data": {"k": 1}})
            assert (caught.value.code, caught.value.message, caught.value.data) == (-32002, "nope", {"k": 1})
            with pytest.raises(McpError) as caught:
                await client.read_resource(uri="other://x")
            assert caught.value.code == -32002
            # print() in a handler goes to stderr, never into the protocol stream
            assert tool_text(await client.call_tool(name="print_stdout", arguments={})) == "printed"
            assert tool_text(await client.call_tool(name="echo", arguments={"text": "ok"})) == "ok"
    assert "this is not JSON-RPC" in (tmp_path / "server.stderr").read_text()


@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25"])
async def test_cancelling_a_request_cancels_what_the_server_asked_the_client(version: str, tmp_path: Path) -> None:
    """Our client cancels tools/call while its handler waits on sampling/createMessage: the server's
    handler is cancelled, which cancels its request to the client, whose handler is cancelled too."""
    with anyio.fail_after(LIMIT):
        async with connected(version, tmp_path) as (client, recorder):
            with anyio.move_on_after(5):
                async with anyio.create_task_group() as group:

                    async def ask() -> None:
                        await client.call_tool(name="ask_sampling", arguments={"prompt": "slow"})

                    group.start_soon(ask)
                    await recorder.wait_for(lambda r: bool(r.of("sampling")))
                    group.cancel_scope.cancel()
            await recorder.wait_for(lambda r: ("sampling_cancelled", None) in r.calls)
            assert tool_text(await client.call_tool(name="echo", arguments={"text": "ok"})) == "ok"


@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25"])
async def test_server_process_dying_mid_request(version: str, tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        async with connected(version, tmp_path) as (client, _):
            with pytest.raises(ConnectionClosed):
                await client.call_tool(name="exit", arguments={"code": 3})
            with pytest.raises(ConnectionClosed):
                await client.call_tool(name="echo", arguments={"text": "anyone?"})


async def test_server_restricted_to_one_version(tmp_path: Path) -> None:
    """`serve_stdio(..., supported_versions=[...])`: a newer client is answered with the one version."""
    with anyio.fail_after(LIMIT):
        async with connected("2025-11-25", tmp_path, MCP_TEST_VERSIONS="2024-11-05") as (client, _):
            assert client.session.version == "2024-11-05"
            assert tool_text(await client.call_tool(name="echo", arguments={"text": "old"})) == "old"


@versions
async def test_progress_on_the_wire(version: str, tmp_path: Path) -> None:
    """Raw: every notifications/progress carries the request's token, progress strictly increases,
    and all of them precede the response."""
    with anyio.fail_after(LIMIT):
        async with raw_server(tmp_path / "server.stderr") as peer:
            await peer.initialize(version)
            await peer.send_json(
                {
                    "jsonrpc": "2.0",
                    "id": "p",
                    "method": "tools/call",
                    "params": {"name": "progress", "arguments": {"steps": 6}, "_meta": {"progressToken": "tok-✓"}},
                }
            )
            values: list[float] = []
            while True:
                message = await peer.recv()
                if message.get("method") == "notifications/progress":
                    assert message["params"]["progressToken"] == "tok-✓"
                    assert message["params"]["total"] == 6
                    values.append(message["params"]["progress"])
                    continue
                assert message["id"] == "p" and message["result"]["content"][0]["text"] == "done"
                break
            assert values == [1, 2, 3, 4, 5, 6]
            await peer.assert_alive()


async def test_sigterm_stops_the_server_promptly(tmp_path: Path) -> None:
    """The spec's last shutdown step before SIGKILL: SIGTERM ends the server even mid-request."""
    with anyio.fail_after(LIMIT):
        async with raw_server(tmp_path / "server.stderr") as peer:
            await peer.initialize("2025-11-25")
            await peer.send_json(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": "sleep", "arguments": {"seconds": 30}},
                }
            )
            await anyio.sleep(0.2)
            peer.process.terminate()
            with anyio.fail_after(3):
                assert await peer.process.wait() == 0
