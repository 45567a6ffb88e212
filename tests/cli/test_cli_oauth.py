"""`--oauth`: a URL server behind the project's resource server (`require_bearer`) and an OAuth
authorization server (tests/peers/auth_server.py, which approves at once): the first command runs
the flow through the "browser" (BROWSER: a script that follows the redirects, as a user approving
does) and a loopback redirect; the next one reuses the stored tokens without a browser."""

from __future__ import annotations

import json
import stat
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio

from tests.peers.auth_harness import Stack, oauth_stack
from tests.support.cli import bindgen


@contextmanager
def _stack_in_thread() -> Iterator[Stack]:
    ready, stop = threading.Event(), threading.Event()
    box: dict[str, Any] = {}

    async def serve() -> None:
        async with oauth_stack() as stack:
            box["stack"] = stack
            ready.set()
            while not stop.is_set():
                await anyio.sleep(0.05)

    thread = threading.Thread(target=anyio.run, args=(serve,), daemon=True)
    thread.start()
    assert ready.wait(30), "the OAuth stack did not start"
    try:
        yield box["stack"]
    finally:
        stop.set()
        thread.join(10)


def test_oauth_flow_then_stored_tokens(tmp_path: Path) -> None:
    browser = tmp_path / "browser.py"
    browser.write_text("import sys, httpx\nhttpx.get(sys.argv[1], follow_redirects=True, timeout=30)\n")
    cache = tmp_path / "cache"
    # The redirect on a port the CLI's handler binds once (0), not the fixed 33418 that another run of
    # the suite, or any program, may hold.
    environ = {
        "XDG_CACHE_HOME": str(cache),
        "BROWSER": f"{sys.executable} {browser} %s",
        "MCP_BINDGEN_OAUTH_PORT": "0",
    }
    with _stack_in_thread() as stack:
        refused = bindgen("call", stack.mcp_url, "echo", "text=hi", environ=environ)
        assert refused.returncode == 5, refused.stderr
        assert "pass --oauth" in refused.stderr
        first = bindgen("call", stack.mcp_url, "echo", "text=hi", "--oauth", environ=environ)
        assert first.returncode == 0, first.stderr
        assert first.stdout == "hi\n"
        assert "mcp-bindgen: authorize in your browser: " in first.stderr
        again = bindgen("call", stack.mcp_url, "echo", "text=again", "--oauth", environ={**environ, "BROWSER": "false"})
        assert again.returncode == 0, again.stderr
        assert again.stdout == "again\n" and "authorize in your browser" not in again.stderr
    store = cache / "mcp-bindgen" / "oauth.json"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert list(json.loads(store.read_text())["tokens"]) == [stack.mcp_url]
