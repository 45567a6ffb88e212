"""A server that does not answer in time (issue 45, item 6): the message gives the limit that
applied (`--timeout`, every live command's option, else the handshake's 60 s), never a fixed
"60 s" after 77 s or with `--timeout 5`, and a request that timed out on our side is not "the
server answered an error"."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.cli import bindgen

SLOW = """
import anyio
from mcp_bindings.runtime.app import App

app = App("slow")


@app.tool
async def wait(seconds: float) -> str:
    await anyio.sleep(seconds)
    return "done"
"""


def test_a_call_past_its_timeout_names_the_timeout(tmp_path: Path) -> None:
    server = tmp_path / "slow.py"
    server.write_text(SLOW, encoding="utf-8")
    done = bindgen("call", server, "wait", "seconds=30", "--timeout", "1.5")
    assert done.returncode == 4, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"mcp-bindgen: error: the server `{server}` did not answer tools/call within 1.5 s: "
        "--timeout SECONDS sets the limit"
    )


@pytest.mark.slow
def test_a_silent_server_names_the_timeout_given(tmp_path: Path) -> None:
    silent = [sys.executable, "-c", "import time; time.sleep(120)"]
    for command in (["call", "--timeout", "2", "any_tool"], ["list", "tools", "--timeout", "2"]):
        done = bindgen(*command, "--", *silent)
        assert done.returncode == 4, done.stderr
        assert "did not answer within 2 s" in done.stderr and "60 s" not in done.stderr
