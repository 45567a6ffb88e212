"""stdio `auto` against servers that fail the `server/discover` probe (issue 30): one that leaves it
unanswered (as mcp 1.1.x does, wedged by the method it cannot parse) is started again for the
handshake; one that answers it with an error keeps its process. The real mcp-server-time 0.6.2 is in
tests/interop/test_client_eras.py; here a hand-written server of each kind
(`tests/peers/fragile_stdio_server.py`) counts its starts."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio
import pytest

from mcp_bindings.runtime.client.legacy import LegacyServerError
from mcp_bindings.runtime.stdio import connect_stdio
from mcp_bindings.v2025_11_25.client import Client as Client25
from mcp_bindings.v2026_07_28.client import Client as Client26
from tests.peers.harness import PEERS

pytestmark = pytest.mark.anyio
SERVER = PEERS / "fragile_stdio_server.py"
PROBE = 0.5
LIMIT = 20


def command(mode: str, starts: Path) -> list[str]:
    return [sys.executable, str(SERVER), mode, str(starts)]


@pytest.mark.parametrize("client", [Client25, Client26])
async def test_a_server_silent_on_the_probe_is_started_again_for_the_handshake(
    client: type[Client25] | type[Client26], tmp_path: Path
) -> None:
    starts = tmp_path / "starts"
    began = time.monotonic()
    with anyio.fail_after(LIMIT):
        async with connect_stdio(command("silent", starts), client, protocol_version="auto", probe_timeout=PROBE) as c:
            assert c.session.version == "2024-11-05"
            listed = await c.list_tools()
            await c.ping()
    assert [tool.name for tool in listed.tools] == ["echo"]
    assert starts.read_text().splitlines() == ["start", "start"]
    assert time.monotonic() - began >= PROBE  # it waited for the probe, once


async def test_a_server_that_answers_the_probe_keeps_its_process(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    with anyio.fail_after(LIMIT):
        async with connect_stdio(command("answers", starts), Client26, protocol_version="auto") as c:
            assert c.session.version == "2024-11-05"
            await c.ping()  # 2026-07-28's stub, a handshake session: ping is there
    assert starts.read_text().splitlines() == ["start"]


async def test_a_pinned_stateless_client_is_not_restarted_but_told(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    with anyio.fail_after(LIMIT), pytest.raises(LegacyServerError, match="does not speak MCP 2026-07-28"):
        async with connect_stdio(command("silent", starts), Client26, probe_timeout=PROBE):
            pass
    assert starts.read_text().splitlines() == ["start"]
