"""`progress=` on every typed client call (issue 32, item 6): the call carries a progress token and
the server's progress notifications for it reach the callback, at every protocol version, from an
app's `ctx.report_progress` in memory and from the official SDK's server over stdio (interop)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcp_bindings.runtime.app import App, Context
from mcp_bindings.runtime.protocol import registry
from tests.support.sdk import sdk_server

pytestmark = pytest.mark.anyio


def make_app() -> App:
    app = App("progress")

    @app.tool
    async def count(steps: int, ctx: Context) -> str:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return "counted"

    return app


@pytest.mark.parametrize("version", list(registry.versions()))
async def test_progress_callback_at_every_version(version: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    async with make_app().test_client(version) as client:
        result = await client.call_tool(name="count", arguments={"steps": 3}, progress=progress)
        assert result.content[0].text == "counted"
        with_message = version != "2024-11-05"  # its progress notifications have no message
        assert seen == [(step, 3, f"step {step}" if with_message else None) for step in (1, 2, 3)]
        await client.call_tool(name="count", arguments={"steps": 2})  # no callback: nothing more arrives
        assert len(seen) == 3


@pytest.mark.interop
@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25"])
async def test_progress_callback_from_the_official_sdk_server(sdk_python: str, version: str, tmp_path: Path) -> None:
    seen: list[Any] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    async with sdk_server(sdk_python, version, tmp_path) as (client, _recorder):
        result = await client.call_tool(name="progress", arguments={"steps": 2}, progress=progress)
    assert result.content[0].text == "done"
    assert [(value, total) for value, total, _message in seen] == [(1, 2), (2, 2)]
    if version != "2024-11-05":  # (the SDK sends a message at 2024-11-05 too, which that version lacks)
        assert [message for _value, _total, message in seen] == ["step 1", "step 2"]
