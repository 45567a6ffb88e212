"""The HTTP server's per-request fast paths (#21) keep their behaviour.

`eager.when_suspended` (what guards a wait is set up only when the awaited coroutine waits), the
uvicorn settings `uvicorn_config` chooses (no access-log arguments, proxy-header walk or `server`
header unless access lines can be seen), and a JSON answer sent with its length instead of chunked.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.http.serving import uvicorn_config
from mcp_bindings.runtime.rpc.eager import when_suspended
from tests.support.http import META, STATELESS, load_example

pytestmark = pytest.mark.anyio


async def _done_at_once() -> str:
    return "done"


async def _waits(seconds: float = 0.0) -> str:
    await anyio.sleep(seconds)
    return "waited"


async def test_a_coroutine_that_never_waits_arms_nothing() -> None:
    armed: list[str] = []
    assert await when_suspended(_done_at_once(), lambda: armed.append("armed")) == "done"
    assert armed == []


async def test_a_coroutine_that_waits_arms_once_before_it_waits() -> None:
    armed: list[str] = []

    async def twice() -> str:
        await anyio.sleep(0)
        armed.append("first wait over")
        await anyio.sleep(0)
        return "waited"

    assert await when_suspended(twice(), lambda: armed.append("armed")) == "waited"
    assert armed == ["armed", "first wait over"]


async def test_cancellation_and_errors_pass_through() -> None:
    with anyio.move_on_after(0.05) as scope:
        await when_suspended(_waits(10), lambda: None)
    assert scope.cancelled_caught

    async def fails() -> None:
        await anyio.sleep(0)
        raise ValueError("from the coroutine")

    with pytest.raises(ValueError, match="from the coroutine"):
        await when_suspended(fails(), lambda: None)


def _app() -> Any:
    return create_app(load_example("echo_server").make_server(STATELESS))


@pytest.mark.parametrize(("level", "access"), [("warning", False), ("error", False), ("info", True), ("debug", True)])
def test_uvicorn_config_drops_access_log_work_only_when_its_lines_cannot_show(level: str, access: bool) -> None:
    config = uvicorn_config(_app(), log_level=level)
    assert config.access_log is access
    assert config.proxy_headers is False  # at every level: the app reads X-Forwarded-For (forwarded_allow_ips)
    assert config.server_header is False


async def test_a_json_answer_carries_its_length() -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}, "_meta": META},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": STATELESS,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "echo",
    }
    transport = httpx.ASGITransport(app=_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        reply = await client.post("/mcp", json=body, headers=headers)
    assert reply.status_code == 200
    assert reply.json()["result"]["content"][0]["text"] == "hi"
    assert reply.headers["content-length"] == str(len(reply.content))
    assert "transfer-encoding" not in reply.headers
