"""The typed client across eras against real servers nobody here wrote (issue 30): in `auto`, with
either stub, a call follows the version the session negotiated, not the stub's.

The servers, all installed and pinned by the suite (`tests/peers/contract_peers.py`, the SDK venv of
`tests/support/sdk.py`; a test skips, saying why, when one cannot be installed):

* the official SDK's `MCPServer` (mcp 2.3.0): `auto` lands on 2026-07-28;
* the official SDK's last handshake-only release (mcp 1.30.0, its `FastMCP`): 2025-11-25, over
  stdio and Streamable HTTP (`tests/peers/sdk_eras_server.py` is both servers);
* npm `@modelcontextprotocol/server-everything`: 2025-11-25, with logging, subscriptions and tasks;
* FastMCP 4.2.3 from PyPI (`tests/peers/fastmcp_eras_server.py`);
* PyPI `mcp-server-time`, current (2026-07-28) and 0.6.2 on mcp 1.1.3, which stops reading on the
  `server/discover` probe: `connect_stdio` starts it again for the handshake.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcp_bindings.runtime.app.testing import client_handlers
from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.runtime.client.legacy import LegacyServerError
from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.rpc.errors import CapabilityError, NotExpressible
from mcp_bindings.runtime.stdio import connect_stdio
from mcp_bindings.v2025_11_25 import client as client_25
from mcp_bindings.v2025_11_25 import models as m25
from mcp_bindings.v2026_07_28 import client as client_26
from mcp_bindings.v2026_07_28 import models as m26
from tests.peers import contract_peers
from tests.peers.harness import PEERS
from tests.support import bound_socket

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

HANDSHAKE, STATELESS = "2025-11-25", "2026-07-28"
STUBS: dict[str, Any] = {HANDSHAKE: client_25.Client, STATELESS: client_26.Client}
MODELS: dict[str, Any] = {HANDSHAKE: m25, STATELESS: m26}
SERVER = PEERS / "sdk_eras_server.py"
LIMIT = 60  # seconds for one scenario (a server start on a cold cache included)
# Seconds the probe of `auto` may go unanswered (mcp-server-time 0.6.2 never answers). It includes the
# server's start (mcp 2.3 imports for seconds): 3 s fell back to `initialize` on a loaded 2-core machine
# running the suite on 4 workers. The runtime's default.
PROBE = 10.0
EVERYTHING_DOC = "demo://resource/static/document/architecture.md"


def _installed(install: Callable[[], Any]) -> Any:
    try:
        return install()
    except contract_peers.Unavailable as exc:
        pytest.skip(f"a pinned peer server could not be installed: {exc}")


@pytest.fixture(scope="module")
def handshake_sdk() -> Path:
    return _installed(contract_peers.handshake_sdk) / "bin" / "python"


@pytest.fixture(scope="module")
def everything() -> list[str]:
    return _installed(contract_peers.everything_server)


def connect(command: list[str], stub: str, **hooks: Any) -> Any:
    """`auto`, the client on `stub`'s types, its handlers answering with `hooks`."""
    handlers = client_handlers(stub, **hooks) if hooks else None
    return connect_stdio(
        command,
        STUBS[stub],
        handlers=handlers,
        protocol_version="auto",
        request_timeout=20,
        probe_timeout=PROBE,
        stderr=subprocess.DEVNULL,
    )


def _text(result: Any) -> str:
    return versions.dump(result)["content"][0]["text"]


async def _until(check: Callable[[], bool], seconds: float = 15) -> None:
    with anyio.fail_after(seconds):
        while not check():
            await anyio.sleep(0.05)


# -- logs arrive after set_logging_level, either stub --------------------------------------------


@pytest.mark.parametrize("stub", [HANDSHAKE, STATELESS])
async def test_logs_arrive_after_set_logging_level_from_the_official_mcpserver(stub: str, sdk_python: str) -> None:
    logs: list[dict[str, Any]] = []
    with anyio.fail_after(LIMIT):
        async with connect([sdk_python, str(SERVER)], stub, on_log=lambda p: logs.append(versions.dump(p))) as client:
            assert client.session.version == STATELESS
            await client.set_logging_level("info")  # debug is below it: not sent
            result = await client.call_tool(name="weather", arguments={"city": "Oslo"})
            assert type(result) is MODELS[stub].CallToolResult
            await _until(lambda: len(logs) >= 2)
            await client.call_tool(name="weather", arguments={"city": "Bergen"})  # the debug line would come first
            await _until(lambda: len(logs) >= 4)
    data = [entry["data"] for entry in logs]
    assert data == ["looking up Oslo", "Oslo is windy", "looking up Bergen", "Bergen is windy"]


@pytest.mark.parametrize("stub", [HANDSHAKE, STATELESS])
async def test_logs_arrive_after_set_logging_level_from_fastmcp(stub: str) -> None:
    """FastMCP 4.2.3, in `auto` with either stub: the level set is the level that filters (the
    debug line never arrives), whichever era the session landed on; a resource reads as the stub's
    type."""
    fastmcp = _installed(contract_peers.fastmcp) / "bin" / "python"
    logs: list[dict[str, Any]] = []
    with anyio.fail_after(LIMIT):
        async with connect(
            [str(fastmcp), str(PEERS / "fastmcp_eras_server.py")], stub, on_log=lambda p: logs.append(versions.dump(p))
        ) as client:
            await client.set_logging_level("info")
            result = await client.call_tool(name="weather", arguments={"city": "Oslo"})
            assert type(result) is MODELS[stub].CallToolResult
            await _until(lambda: len(logs) >= 2)
            await client.call_tool(name="weather", arguments={"city": "Bergen"})
            await _until(lambda: len(logs) >= 4)
            read = await client.read_resource(uri="eras://config")
            assert type(read) is MODELS[stub].ReadResourceResult
    said = [entry["data"]["msg"] for entry in logs]  # FastMCP logs {"msg": ..., "extra": ...}
    assert said == ["looking up Oslo", "Oslo is windy", "looking up Bergen", "Bergen is windy"]


@pytest.mark.parametrize("stub", [HANDSHAKE, STATELESS])
async def test_a_handshake_fastmcp_without_logging_refuses_the_level_and_logs_anyway(
    stub: str, handshake_sdk: Path
) -> None:
    # mcp 1.30.0's FastMCP sends log messages but registers no logging/setLevel handler, so it does
    # not advertise `logging`: the request is refused before it is sent, from either stub.
    logs: list[dict[str, Any]] = []
    with anyio.fail_after(LIMIT):
        async with connect(
            [str(handshake_sdk), str(SERVER)], stub, on_log=lambda p: logs.append(versions.dump(p))
        ) as c:
            assert c.session.version == HANDSHAKE
            with pytest.raises(CapabilityError, match="logging/setLevel needs the server capability `logging`"):
                await c.set_logging_level("info")
            await c.call_tool(name="weather", arguments={"city": "Oslo"})
            await _until(lambda: len(logs) >= 3)
    assert [entry["data"] for entry in logs] == ["cache miss for Oslo", "looking up Oslo", "Oslo is windy"]


@pytest.mark.parametrize("stub", [HANDSHAKE, STATELESS])
async def test_logs_arrive_after_set_logging_level_from_server_everything(stub: str, everything: list[str]) -> None:
    logs: list[dict[str, Any]] = []
    with anyio.fail_after(LIMIT):
        async with connect(everything, stub, on_log=lambda p: logs.append(versions.dump(p))) as client:
            assert client.session.version == HANDSHAKE
            await client.set_logging_level("debug")  # every simulated level passes
            await client.call_tool(name="toggle-simulated-logging")  # sends one at once, then one per 5 s
            await _until(lambda: bool(logs))
            await client.call_tool(name="toggle-simulated-logging")  # stop it
    assert logs[0]["level"] in ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
    assert "message" in logs[0]["data"]


# -- listen / subscribe_resource / ping / tasks where the session's era has them ------------------


@pytest.mark.parametrize("stub", [HANDSHAKE, STATELESS])
async def test_listen_on_the_official_mcpserver_from_either_stub(stub: str, sdk_python: str) -> None:
    with anyio.fail_after(LIMIT):
        async with connect([sdk_python, str(SERVER)], stub) as client:
            assert client.session.version == STATELESS
            async with client.listen({"resourceSubscriptions": ["eras://config"]}) as stream:
                assert stream.agreed == {"resourceSubscriptions": ["eras://config"]}
                await client.call_tool(name="touch", arguments={"uri": "eras://config"})
                notification = await anext(aiter(stream))
            for call in (client.ping(), client.subscribe_resource(uri="eras://config")):
                with pytest.raises(NotExpressible, match=f"does not exist in MCP {STATELESS}"):
                    await call
    assert type(notification) is MODELS[stub].ResourceUpdatedNotification
    assert notification.params.uri == "eras://config"


@pytest.mark.parametrize("stub", [HANDSHAKE, STATELESS])
async def test_subscribe_ping_and_tasks_on_server_everything_from_either_stub(stub: str, everything: list[str]) -> None:
    updates: list[tuple[str, Any]] = []
    with anyio.fail_after(LIMIT):
        async with connect(everything, stub, on_notification=lambda method, p: updates.append((method, p))) as client:
            assert client.session.version == HANDSHAKE
            await client.ping()
            await client.subscribe_resource(uri=EVERYTHING_DOC)
            await client.call_tool(name="toggle-subscriber-updates")  # one update at once, then one per 5 s
            await _until(lambda: any(method == "notifications/resources/updated" for method, _ in updates))
            await client.call_tool(name="toggle-subscriber-updates")
            await client.unsubscribe_resource(uri=EVERYTHING_DOC)
            tasks = await client.list_tasks()  # a 2025-11-25 method: the stub's type, else the JSON object
            with pytest.raises(NotExpressible, match=f"subscriptions/listen does not exist in MCP {HANDSHAKE}"):
                async with client.listen({"toolsListChanged": True}):
                    pass
    updated = [versions.dump(p) for method, p in updates if method == "notifications/resources/updated"]
    assert updated[0]["uri"] == EVERYTHING_DOC
    if stub == HANDSHAKE:
        assert isinstance(tasks, m25.ListTasksResult)
    else:
        assert isinstance(tasks, dict) and isinstance(tasks["tasks"], list)


# -- mcp-server-time, current and 0.6.2 (dies on the probe) --------------------------------------


@pytest.mark.parametrize("stub", [HANDSHAKE, STATELESS])
@pytest.mark.parametrize("release", ["current", "0.6.2"])
async def test_mcp_server_time_in_auto_from_either_stub(stub: str, release: str) -> None:
    venv = _installed(contract_peers.python_peers if release == "current" else contract_peers.legacy_python_peers)
    expected = STATELESS if release == "current" else "2024-11-05"
    with anyio.fail_after(LIMIT):
        async with connect([str(venv / "bin" / "mcp-server-time")], stub) as client:
            assert client.session.version == expected
            listed = await client.list_tools()
            result = await client.call_tool(name="get_current_time", arguments={"timezone": "Europe/Oslo"})
            if expected == STATELESS:
                await client.set_logging_level("info")  # the level each request carries: nothing to refuse
                with pytest.raises(NotExpressible, match=f"ping does not exist in MCP {STATELESS}"):
                    await client.ping()
            else:
                with pytest.raises(CapabilityError, match="logging"):  # a request it did not advertise
                    await client.set_logging_level("info")
                await client.ping()
    assert {tool.name for tool in listed.tools} == {"get_current_time", "convert_time"}
    assert type(result) is MODELS[stub].CallToolResult and "Europe/Oslo" in _text(result)


# -- a pinned 2026-07-28 client over Streamable HTTP meets a legacy server ------------------------


@pytest.fixture
def legacy_http(handshake_sdk: Path, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The mcp 1.30.0 server over Streamable HTTP on 127.0.0.1; its access log (stdout) in a file."""
    log = tmp_path / "server.log"
    with log.open("wb") as sink, bound_socket() as sock:  # bound here, listened on by the server
        sock.listen()
        process = subprocess.Popen(
            [str(handshake_sdk), str(SERVER), "--fd", str(sock.fileno())],
            stdout=sink,
            stderr=subprocess.STDOUT,
            pass_fds=(sock.fileno(),),
        )
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    try:
        for _ in range(300):
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                if process.poll() is not None:
                    pytest.fail(f"the legacy HTTP server exited: {log.read_text()[-500:]}")
                time.sleep(0.1)
        yield url, log
    finally:
        process.terminate()
        process.wait(10)


async def test_a_pinned_http_client_says_legacy_server_once(legacy_http: tuple[str, Path]) -> None:
    url, log = legacy_http
    errors: list[LegacyServerError] = []
    with anyio.fail_after(LIMIT):
        async with connect_http(url, client_26.Client, protocol_version=STATELESS, request_timeout=20) as client:
            for _ in range(3):
                with pytest.raises(LegacyServerError) as raised:
                    await client.list_tools()
                errors.append(raised.value)
        posts_when_pinned = log.read_text().count('"POST /mcp')
        async with connect_http(url, client_26.Client, protocol_version="auto", request_timeout=20) as client:
            assert client.session.version == HANDSHAKE  # what the message advises works
            result = await client.call_tool(name="weather", arguments={"city": "Oslo"})
    assert all(error is errors[0] for error in errors)  # recognised once, then the same answer
    assert f"does not speak MCP {STATELESS}" in errors[0].message and "Missing session ID" in errors[0].message
    assert posts_when_pinned == 2  # the first request and one server/discover; nothing after
    assert type(result) is m26.CallToolResult and _text(result) == "Oslo: 21.5"
