"""The proxy (issue 32, item 3) in front of real servers nobody here wrote, with the official SDK's
client (mcp==2.3.0, tests/peers/sdk_steps_client.py) on the other side at 2025-11-25 and 2026-07-28
over Streamable HTTP: `App.proxy(command).asgi()` on uvicorn at 127.0.0.1, the remote started over
stdio by the app's lifespan and reached in "auto" (whatever version it speaks).

* npm `@modelcontextprotocol/server-everything` (2025-11-25): tools, a resource, prompts;
* PyPI `mcp-server-time` (2026-07-28): its tools (it has no resources or prompts);
* FastMCP 4.2.3 (tests/peers/fastmcp_proxy_server.py): structured output, a tool error, a resource,
  a template, a prompt;
* and the runtime's stdio test server exiting mid-call: a JSON-RPC error naming it, then the next.

Each peer is installed and pinned by `tests/peers/contract_peers.py` (a test skips, saying why, where
one cannot be installed)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mcp_bindings.runtime.app import App
from tests.peers import contract_peers
from tests.peers.harness import PEERS
from tests.support import REPO_ROOT
from tests.support.http import serve_in_thread

pytestmark = pytest.mark.interop

VERSIONS = ["2025-11-25", "2026-07-28"]
EVERYTHING_DOC = "demo://resource/static/document/architecture.md"


def _installed(install: Callable[[], Any]) -> Any:
    try:
        return install()
    except contract_peers.Unavailable as exc:
        pytest.skip(f"a pinned peer server could not be installed: {exc}")


@pytest.fixture(scope="module")
def everything() -> Iterator[str]:
    with serve_in_thread(App.proxy(_installed(contract_peers.everything_server), name="everything").asgi()) as base:
        yield f"{base}/mcp"


@pytest.fixture(scope="module")
def time_server() -> Iterator[str]:
    command = [str(_installed(contract_peers.python_peers) / "bin" / "mcp-server-time"), "--local-timezone", "UTC"]
    with serve_in_thread(App.proxy(command, name="time").asgi()) as base:
        yield f"{base}/mcp"


@pytest.fixture(scope="module")
def fastmcp_server() -> Iterator[str]:
    command = [str(_installed(contract_peers.fastmcp) / "bin" / "python"), str(PEERS / "fastmcp_proxy_server.py")]
    with serve_in_thread(App.proxy(command, name="fastmcp").asgi()) as base:
        yield f"{base}/mcp"


def sdk(sdk_python: str, version: str, url: str, *steps: str) -> dict[str, Any]:
    argv = [sdk_python, str(PEERS / "sdk_steps_client.py"), "--version", version, "--url", url, *steps]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert "fatal" not in report, report.get("traceback")
    for entry in report["calls"] + report["reads"] + report["prompts"]:
        assert "error" not in entry, entry.get("traceback")
    return report


def _result(entry: dict[str, Any]) -> dict[str, Any]:
    assert "result" in entry, entry
    return entry["result"]


@pytest.mark.parametrize("version", VERSIONS)
def test_server_everything(version: str, everything: str, sdk_python: str) -> None:
    report = sdk(
        sdk_python,
        version,
        everything,
        *("--call", 'echo={"message": "through the proxy"}'),
        *("--call", 'get-sum={"a": 2, "b": 40}'),
        *("--read", EVERYTHING_DOC),
        *("--prompt", "simple-prompt={}"),
        *("--prompt", 'args-prompt={"city": "Oslo"}'),
    )
    assert {"echo", "get-sum", "trigger-sampling-request"} <= set(report["tools"])
    echo, total = (_result(call) for call in report["calls"])
    assert echo["content"] == [{"type": "text", "text": "Echo: through the proxy"}]
    assert "42" in total["content"][0]["text"]
    (read,) = report["reads"]
    assert _result(read)["contents"][0]["uri"] == EVERYTHING_DOC
    assert "Architecture" in _result(read)["contents"][0]["text"]
    simple, args = (_result(prompt) for prompt in report["prompts"])
    assert simple["messages"][0]["content"]["text"] == "This is a simple prompt without arguments."
    assert "Oslo" in json.dumps(args["messages"])


@pytest.mark.parametrize("version", VERSIONS)
def test_server_everything_subscriptions(version: str, everything: str, sdk_python: str) -> None:
    """server-everything offers subscriptions: two SDK clients subscribe to its document through the
    proxy, its `toggle-subscriber-updates` starts its updates (to its one client, the proxy), and
    both clients get them."""
    argv = [sdk_python, str(PEERS / "sdk_subscribe_client.py"), "--version", version, "--url", everything]
    argv += ["--uri", EVERYTHING_DOC, "--toggle", "toggle-subscriber-updates"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert "fatal" not in report, report.get("traceback")
    assert report["toggled"].startswith("Started simulated resource updated notifications")
    assert set(report["updates"]["a"]) == {EVERYTHING_DOC} and set(report["updates"]["b"]) == {EVERYTHING_DOC}


@pytest.mark.parametrize("version", VERSIONS)
def test_mcp_server_time(version: str, time_server: str, sdk_python: str) -> None:
    report = sdk(
        sdk_python,
        version,
        time_server,
        *("--call", 'get_current_time={"timezone": "Europe/Oslo"}'),
        *("--call", 'convert_time={"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}'),
        *("--call", 'get_current_time={"timezone": "Not/AZone"}'),
    )
    assert set(report["tools"]) == {"get_current_time", "convert_time"}
    now, converted, bad = report["calls"]
    assert json.loads(_result(now)["content"][0]["text"])["timezone"] == "Europe/Oslo"
    served_by = _result(now).get("_meta", {}).get("io.modelcontextprotocol/serverInfo", {"name": "time"})
    assert served_by["name"] == "time"  # the proxy's name, not the remote's (2026-07-28 names the server in _meta)
    assert json.loads(_result(converted)["content"][0]["text"])["target"]["datetime"].endswith("T21:00:00+09:00")
    assert _result(bad).get("isError") is True  # the remote's tool error, passed through as it came


@pytest.mark.parametrize("version", VERSIONS)
def test_fastmcp(version: str, fastmcp_server: str, sdk_python: str) -> None:
    report = sdk(
        sdk_python,
        version,
        fastmcp_server,
        *("--call", 'add={"a": 2, "b": 3}'),
        *("--call", 'refuse={"reason": "no"}'),
        *("--read", "proxied://config"),
        *("--read", "proxied://users/ada"),
        *("--prompt", 'greet={"name": "Ada"}'),
    )
    assert set(report["tools"]) == {"add", "refuse"}
    added, refused = (_result(call) for call in report["calls"])
    assert added["structuredContent"] == {"result": 5} and added.get("isError", False) is False
    assert refused["isError"] is True and "refused: no" in refused["content"][0]["text"]
    config, user = (_result(read) for read in report["reads"])
    assert config["contents"][0]["text"] == "debug=false"
    assert user["contents"][0] == {"uri": "proxied://users/ada", "mimeType": "text/plain", "text": "user ada"}
    (greet,) = report["prompts"]
    assert _result(greet)["messages"][0]["content"]["text"] == "Say hello to Ada."


@pytest.mark.parametrize("version", VERSIONS)
def test_a_remote_that_exits_mid_call(version: str, sdk_python: str) -> None:
    remote = [sys.executable, str(PEERS / "stdio_server.py")]
    with serve_in_thread(App.proxy(remote, name="fragile").asgi()) as base:
        report = sdk(
            sdk_python, version, f"{base}/mcp", *("--call", 'exit={"code": 3}'), *("--call", 'echo={"text": "hi"}')
        )
    died, after = report["calls"]
    assert died["mcp_error"]["code"] == -32603, died
    assert "stdio_server.py" in died["mcp_error"]["message"] and "is gone" in died["mcp_error"]["message"]
    assert after["mcp_error"]["code"] == -32603 and "stdio_server.py" in after["mcp_error"]["message"]


# (the remote's version, the SDK clients'): a 2024-11-05 remote (resources/subscribe) and a 2026-07-28
# one (a subscriptions/listen stream per URI), each served to SDK clients of both eras.
SUBSCRIPTION_ERAS = [
    ("2024-11-05", "2026-07-28"),
    ("2024-11-05", "2025-11-25"),
    ("2026-07-28", "2025-11-25"),
    ("2026-07-28", "2026-07-28"),
]


@pytest.mark.parametrize("mounted", [False, True], ids=["proxy", "mounted"])
@pytest.mark.parametrize(("remote_version", "version"), SUBSCRIPTION_ERAS)
def test_resource_subscriptions_through_the_proxy(
    remote_version: str, version: str, mounted: bool, sdk_python: str
) -> None:
    """Two SDK clients subscribe to one URI: the remote (tests/peers/subscriptions_server.py) is
    subscribed once, its update reaches both, and it is let go once both are gone (one unsubscribed,
    the other disconnected). `mounted`: the proxy mounted in another app (without a namespace, so the
    names and URIs are the remote's), whose clients' subscriptions it holds at the remote."""
    remote = [sys.executable, str(PEERS / "subscriptions_server.py")]
    pinned: dict[str, Any] = {"protocol_version": remote_version} if remote_version != "2026-07-28" else {}
    served = App.proxy(remote, name="subscribing", **pinned)
    if mounted:
        parent = App("parent")
        parent.mount(served)
        served = parent
    with serve_in_thread(served.asgi()) as base:
        argv = [sdk_python, str(PEERS / "sdk_subscribe_client.py"), "--version", version, "--url", f"{base}/mcp"]
        done = subprocess.run([*argv, "--uri", "sub://a"], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert "fatal" not in report, report.get("traceback")
    assert report["held"]["holders"] == ["sub://a 1"]  # one subscription at the remote for two clients
    assert report["touched"] == 1  # the remote's update went to its one client, the proxy...
    assert report["updates"] == {"a": ["sub://a"], "b": ["sub://a"]}  # ...which told both of its own
    assert report["state"]["holders"] == ["sub://a 1", "sub://a 0"]
    handshake = remote_version != "2026-07-28"
    assert report["state"]["requests"] == (["subscribe sub://a", "unsubscribe sub://a"] if handshake else [])
