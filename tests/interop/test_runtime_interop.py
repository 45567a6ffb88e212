"""Interop with the official MCP Python SDK (mcp==2.3.0) as a real peer over stdio, both ways:
its `ClientSession` drives our test server, and our client drives a server built on its low-level
`Server`, at every handshake version (2024-11-05 .. 2025-11-25).

The SDK lives in its own venv, `.cache/official-sdk-venv`, created here on first use (python -m
venv + pip install mcp==2.3.0) and reused after; its scripts are `tests/peers/sdk_*.py`. The tests
skip, saying why, only when that venv cannot be created (no access to PyPI)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.rpc.calls import REQUEST_TIMEOUT
from mcp_bindings.runtime.rpc.errors import McpError
from tests.peers.harness import HANDSHAKE_VERSIONS, PEERS, TEST_SERVER, tool_json, tool_text
from tests.support import REPO_ROOT
from tests.support.sdk import sdk_server, step

pytestmark = pytest.mark.interop

LIMIT = 60

versions = pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)


# -- the SDK's client drives our server ------------------------------------------------------------

_reports: dict[str, dict[str, Any]] = {}


def sdk_client_report(sdk_python: str, version: str) -> dict[str, Any]:
    """Run the SDK client scenario against our test server once per version; its observations."""
    if version not in _reports:
        argv = [sdk_python, str(PEERS / "sdk_client.py"), "--version", version, "--", sys.executable, str(TEST_SERVER)]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=180, cwd=str(REPO_ROOT))
        assert done.returncode == 0, f"the SDK client failed:\n{done.stderr[-3000:]}"
        _reports[version] = json.loads(done.stdout.strip().splitlines()[-1])
    return _reports[version]


@versions
def test_sdk_client_initialize_and_discovery(sdk_python: str, version: str) -> None:
    report = sdk_client_report(sdk_python, version)
    init = step(report, "initialize")
    assert init["protocolVersion"] == version
    assert init["serverInfo"] == {"name": "runtime-test-server", "version": "1.0.0"}
    assert init["capabilities"]["tools"] == {"listChanged": True}
    assert init["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}
    assert "logging" in init["capabilities"]
    assert ("completions" in init["capabilities"]) == (version != "2024-11-05")
    assert "echo" in step(report, "tools") and "ask_sampling" in step(report, "tools")
    assert step(report, "echo") == "héllo ✓ \U0001f600"
    assert step(report, "ping") == {}
    assert step(report, "ping_client") == "pong"
    concurrent = step(report, "concurrent")
    assert concurrent == {str(i): f"cc{i}" for i in range(10)}


@versions
def test_sdk_client_resources_prompts_completion(sdk_python: str, version: str) -> None:
    report = sdk_client_report(sdk_python, version)
    uris, cursors = step(report, "resource_pages")
    assert uris == [f"test://r/{i}" for i in range(25)] and len(cursors) == 3 and cursors[-1] is None
    bad = step(report, "bad_cursor")["mcp_error"]
    assert bad["code"] == -32602 and bad["data"]["errors"][0]["path"] == "params.cursor"
    assert step(report, "read")["contents"][0]["text"] == "content of test://r/3"
    assert [p["name"] for p in step(report, "prompts")["prompts"]] == [f"p{i}" for i in range(7)]
    assert step(report, "prompt")["messages"][0]["content"]["text"] == "talk about sdk"
    if version != "2024-11-05":
        assert step(report, "complete")["completion"]["values"] == ["blue", "black", "brown"]


@versions
def test_sdk_client_logging_and_progress(sdk_python: str, version: str) -> None:
    report = sdk_client_report(sdk_python, version)
    assert sorted(step(report, "log_levels")) == sorted(["error", "critical", "alert", "emergency"])
    text, seen = step(report, "progress")
    assert text == "done"
    assert sorted(p for p, _, _ in seen) == [1, 2, 3, 4] and all(total == 4 for _, total, _ in seen)
    if version != "2024-11-05":
        assert {m for _, _, m in seen} == {f"step {i}" for i in range(1, 5)}


@versions
def test_sdk_client_answers_sampling_elicitation_roots(sdk_python: str, version: str) -> None:
    report = sdk_client_report(sdk_python, version)
    sampled = json.loads(step(report, "sampling"))
    assert (
        sampled["content"] == {"type": "text", "text": "sdk sampled: from our server"}
        and sampled["model"] == "sdk-model"
    )
    assert report["asked"]["sampling"]["maxTokens"] == 10
    assert json.loads(step(report, "roots")) == {"roots": [{"uri": "file:///sdk/root", "name": "sdk-root"}]}
    if version >= "2025-06-18":
        assert json.loads(step(report, "elicitation")) == {"action": "accept", "content": {"name": "Grace"}}
        assert report["asked"]["elicitation"]["message"] == "your name?"
    assert step(report, "roots_changed") == 1


@versions
def test_sdk_client_notifications_errors_and_timeout(sdk_python: str, version: str) -> None:
    report = sdk_client_report(sdk_python, version)
    assert step(report, "list_changed") == [
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/tools/list_changed",
    ]
    boom = step(report, "boom")["mcp_error"]
    assert boom["code"] == -32603 and "kaboom" not in boom["message"]
    outcome, events = step(report, "timeout")
    assert outcome["code"] == REQUEST_TIMEOUT  # the SDK's own timeout code happens to be ours
    assert "cancelled:sdk-timeout" in events and "finished:sdk-timeout" not in events  # it sent notifications/cancelled


@pytest.mark.parametrize(
    "version",
    HANDSHAKE_VERSIONS,
)
def test_sdk_client_resource_subscriptions(sdk_python: str, version: str) -> None:
    report = sdk_client_report(sdk_python, version)
    first, second, updates = step(report, "subscriptions")
    assert json.loads(first) == {"subscribed": True} and json.loads(second) == {"subscribed": False}
    assert updates == 1


# -- our client drives the SDK's server --------------------------------------------------------------


@versions
@pytest.mark.anyio
async def test_our_client_against_sdk_server(sdk_python: str, version: str, tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        async with sdk_server(sdk_python, version, tmp_path) as (client, recorder):
            runtime = client.session
            assert runtime.version == version
            assert runtime.server_info == {"name": "sdk-test-server", "version": "2.3.0-test"}
            assert runtime.instructions == "official SDK peer"
            assert client.server_capabilities["resources"] == {"subscribe": True, "listChanged": True}

            assert "echo" in [tool.name for tool in (await client.list_tools()).tools]
            assert tool_text(await client.call_tool(name="echo", arguments={"text": "héllo ✓"})) == "héllo ✓"

            # pagination, resources, prompts, completion
            uris: list[str] = []
            cursor = None
            while True:
                page = await client.list_resources(cursor=cursor)
                uris += [str(r.uri) for r in page.resources]
                cursor = page.next_cursor
                if cursor is None:
                    break
            assert uris == [f"sdk://r/{i}" for i in range(25)]
            assert (await client.read_resource(uri="sdk://r/1")).contents[0].text == "sdk content of sdk://r/1"
            assert [p.name for p in (await client.list_prompts()).prompts] == ["p0", "p1", "p2"]
            prompt = await client.get_prompt(name="p1", arguments={"topic": "ours"})
            assert prompt.messages[0].content.text == "sdk talks about ours"
            if version != "2024-11-05":
                done = await client.complete(
                    ref={"type": "ref/prompt", "name": "p1"}, argument={"name": "topic", "value": "gr"}
                )
                assert done.completion.values == ["green"]

            # ping both ways
            assert await runtime.session.request("ping", None) == {}
            assert tool_text(await client.call_tool(name="ping_client", arguments={})) == "pong"

            # logging/setLevel, then the server's filtered notifications/message
            assert await runtime.session.request("logging/setLevel", {"level": "critical"}) == {}
            assert tool_text(await client.call_tool(name="log_all", arguments={})) == "logged"
            await recorder.wait_for(lambda r: len(r.of("log")) >= 3)
            await anyio.sleep(0.2)
            assert sorted(e["level"] for e in recorder.of("log")) == ["alert", "critical", "emergency"]
            assert recorder.of("log")[0]["logger"] == "sdk"

            # progress
            seen: list[Any] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append((progress, total, message))

            with runtime.progress(on_progress):
                assert tool_text(await client.call_tool(name="progress", arguments={"steps": 3})) == "done"
            with anyio.fail_after(5):
                while len(seen) < 3:
                    await anyio.sleep(0.01)
            assert sorted(p for p, _, _ in seen) == [1, 2, 3]

            # the server asks us
            sampled = tool_json(await client.call_tool(name="ask_sampling", arguments={"prompt": "from the sdk"}))
            assert sampled["content"] == {"type": "text", "text": "sampled: from the sdk"}
            assert tool_json(await client.call_tool(name="ask_roots", arguments={})) == {
                "roots": [{"uri": "file:///tmp/project", "name": "project"}]
            }
            if version >= "2025-06-18":
                assert tool_json(await client.call_tool(name="ask_elicitation", arguments={})) == {
                    "action": "accept",
                    "content": {"name": "Ada"},
                }

            # notifications: list changes, subscriptions, roots changed
            await client.call_tool(name="change_lists", arguments={})
            await recorder.wait_for(
                lambda r: {"tools_changed", "prompts_changed", "resources_changed"} <= {k for k, _ in r.calls}
            )
            await client.subscribe_resource(uri="sdk://r/5")
            assert tool_json(await client.call_tool(name="touch", arguments={"uri": "sdk://r/5"})) == {
                "subscribed": True
            }
            await recorder.wait_for(lambda r: r.of("updated") == ["sdk://r/5"])
            await client.unsubscribe_resource(uri="sdk://r/5")
            assert tool_json(await client.call_tool(name="touch", arguments={"uri": "sdk://r/5"})) == {
                "subscribed": False
            }
            await client.notify_roots_list_changed()
            with anyio.fail_after(5):
                while tool_json(await client.call_tool(name="state", arguments={}))["roots_changed"] != 1:
                    await anyio.sleep(0.05)

            # cancellation and our per-request timeout reach the SDK's handler
            with anyio.move_on_after(0.5):
                await client.call_tool(name="sleep", arguments={"seconds": 10})
            runtime.request_timeout = 0.5
            with pytest.raises(McpError) as caught:
                await client.call_tool(name="sleep", arguments={"seconds": 10})
            assert caught.value.code == REQUEST_TIMEOUT
            runtime.request_timeout = 20
            with anyio.fail_after(5):
                while (
                    tool_json(await client.call_tool(name="state", arguments={}))["events"]
                    != ["started", "cancelled"] * 2
                ):
                    await anyio.sleep(0.05)

            # errors keep their codes
            with pytest.raises(McpError) as caught:
                await client.list_resources(cursor="zz")
            assert caught.value.code == -32602
            assert tool_text(await client.call_tool(name="echo", arguments={"text": "still fine"})) == "still fine"
