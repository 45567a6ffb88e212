"""The comparison server of docs/authoring.md written on FastMCP 4.2.3 runs as written, in FastMCP's own
venv, against our typed client (issue 34: it used to crash when the user declined, and the docs said
it could not be run here). The answers match examples/app_server.py's, decline included."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.app.testing import client_handlers
from mcp_bindings.runtime.stdio.connect import connect_stdio
from mcp_bindings.v2025_11_25.client import Client
from mcp_bindings.v2025_11_25.models import TextContent
from tests.peers import contract_peers
from tests.support import REPO_ROOT

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

SERVERS = {
    "fastmcp": "docs/comparison/fastmcp_server.py",
    "ours": "examples/app_server.py",
}


def _python(which: str) -> str:
    if which == "ours":
        return sys.executable
    try:
        return str(contract_peers.fastmcp() / "bin" / "python")
    except contract_peers.Unavailable as exc:
        pytest.skip(f"FastMCP could not be installed: {exc}")


async def _delete(which: str, accept: bool) -> tuple[list[str], Any, str]:
    handlers = client_handlers("2025-11-25", elicit=lambda message, schema: accept)
    command = [_python(which), str(REPO_ROOT / SERVERS[which])]
    with anyio.fail_after(60):
        async with connect_stdio(command, Client, handlers=handlers, protocol_version="2025-11-25") as client:
            tools = sorted(t.name for t in (await client.list_tools()).tools)
            weather = await client.call_tool(name="weather", arguments={"city": "Oslo"})
            result = await client.call_tool(name="delete", arguments={"path": "notes.txt"})
    first = result.content[0]
    return tools, weather.structured_content, first.text if isinstance(first, TextContent) else repr(first)


@pytest.mark.parametrize("which", sorted(SERVERS))
async def test_the_comparison_servers_answer_alike(which: str) -> None:
    tools, weather, declined = await _delete(which, accept=False)
    assert {"weather", "delete"} <= set(tools)
    assert weather == {"city": "Oslo", "celsius": 21.5}
    assert declined == "kept"  # FastMCP's file used to fail here: 'DeclinedElicitation' has no 'data'
    _, _, accepted = await _delete(which, accept=True)
    assert accepted == "deleted notes.txt"
