"""Models are built on first use; a server builds those of the methods it implements after a peer
negotiates a version, one method after each answer (runtime/server/peer.py `Lifecycle.prepare`),
and nothing else. Checked in a fresh interpreter, since the rest of the suite builds models freely."""

from __future__ import annotations

import subprocess
import sys

from tests.support import REPO_ROOT

PROBE = """
import anyio, importlib.util, sys
spec = importlib.util.spec_from_file_location("echo_server", sys.argv[1])
echo = importlib.util.module_from_spec(spec); spec.loader.exec_module(echo)
from mcp_bindings.runtime.memory import connect_in_memory
import mcp_bindings.v2025_11_25 as v
from mcp_bindings.v2025_11_25.client import Client

def built(*models):
    return [m.__pydantic_complete__ for m in models]

async def main():
    before = built(v.CallToolRequestParams, v.CallToolResult)
    async with connect_in_memory(echo.make_server("2025-11-25"), Client, protocol_version="2025-11-25") as client:
        for _ in range(3):  # one more method's models after each answer
            await client.ping()
        after = built(v.CallToolRequestParams, v.CallToolResult, v.ListToolsResult)
        unserved = built(v.CompleteRequestParams, v.GetPromptResult, v.ReadResourceResult)
    print(before, after, unserved)

anyio.run(main)
"""


def test_negotiation_builds_the_served_methods_only() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(REPO_ROOT / "examples" / "echo_server.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("] [") == ["[False, False", "True, True, True", "False, False, False]\n"]
