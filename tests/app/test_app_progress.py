"""`progress=` on every typed client call (issue 32, item 6): the call carries a progress token and
the server's progress notifications for it reach the callback, at every protocol version, from an
app's `ctx.report_progress` in memory and from the official SDK's server over stdio (interop).
And the handler side: `ctx.progress(total)` counts a tool's steps and reports each, at every
version in memory, and to the official SDK client at 2025-11-25 and 2026-07-28 over stdio and
Streamable HTTP (interop, tests/peers/progress_app.py)."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.app import App, Context, Progress
from mcp_bindings.runtime.protocol import registry
from tests.peers.harness import PEERS
from tests.peers.progress_app import app as progress_app
from tests.support import REPO_ROOT
from tests.support.content import text_of
from tests.support.http import serve_in_thread
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


@pytest.mark.parametrize("version", list(registry.versions()))
async def test_ctx_progress_counts_the_steps(version: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    async with progress_app.test_client(version) as client:
        result = await client.call_tool(name="count", arguments={"steps": 3}, progress=progress)
        assert text_of(result.content[0]) == "counted to 3"
        await client.call_tool(name="count", arguments={"steps": 2})  # no token: nothing is sent
    with_message = version != "2024-11-05"
    assert seen == [(step, 3, f"step {step}" if with_message else None) for step in (1, 2, 3)]


async def test_progress_refuses_what_the_protocol_forbids() -> None:
    sent: list[tuple[float, float | None, str | None]] = []

    async def report(value: float, total: float | None, message: str | None) -> None:
        sent.append((value, total, message))

    with pytest.raises(ValueError, match=r"ctx.progress\(total=0\): the total must be a positive number"):
        Progress(report, total=0)
    progress = Progress(report, total=10)
    await progress.advance(2.5, "a quarter")
    await progress.update(5)
    with pytest.raises(ValueError, match=r"progress must increase: 5 after 5"):
        await progress.update(5)
    with pytest.raises(ValueError, match=r"progress must increase: 4 after 5"):
        await progress.advance(-1)
    assert sent == [(2.5, 10, "a quarter"), (5, 10, None)] and progress.value == 5


def sdk_steps(sdk_python: str, version: str, *where: str) -> dict[str, Any]:
    argv = [sdk_python, str(PEERS / "sdk_steps_client.py"), "--version", version, "--call", 'count={"steps": 3}']
    done = subprocess.run([*argv, *where], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert "fatal" not in report, report.get("traceback")
    return report


@pytest.mark.interop
@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_the_official_sdk_client_receives_ctx_progress(sdk_python: str, version: str, transport: str) -> None:
    if transport == "stdio":
        report = sdk_steps(sdk_python, version, "--", sys.executable, str(PEERS / "progress_app.py"))
    else:
        with serve_in_thread(progress_app.asgi()) as base:
            report = sdk_steps(sdk_python, version, "--url", f"{base}/mcp")
    assert report["calls"][0]["result"]["content"][0]["text"] == "counted to 3"
    assert report["progress"] == [[1, 3], [2, 3], [3, 3]]


@pytest.mark.parametrize("version", list(registry.versions()))
async def test_progress_for_a_token_of_ones_own_reaches_on_progress(version: str) -> None:
    """A `progressToken` put in `meta` by hand has no callback: its notifications reach the client
    handlers' `on_progress` (the generated `ClientHandlers` hook), at every version; a call's
    `progress=` callback still takes its own, which never reach `on_progress`."""
    seen: list[tuple[Any, float, float | None]] = []
    package = registry.load_version(version).__name__
    base: Any = importlib.import_module(f"{package}.client").ClientHandlers

    class Handlers(base):  # type: ignore[misc, valid-type]
        async def on_progress(self, params: Any, ctx: Any) -> None:
            seen.append((params.progress_token, params.progress, params.total))

    async with make_app().test_client(version, handlers=Handlers()) as client:
        if "meta" in inspect.signature(client.call_tool).parameters:
            await client.call_tool(name="count", arguments={"steps": 2}, meta={"progressToken": "mine"})
        else:  # a version whose schema gives tools/call params no `_meta`: the untyped request
            params = {"name": "count", "arguments": {"steps": 2}, "_meta": {"progressToken": "mine"}}
            await client.session.session.request("tools/call", params)
        with anyio.fail_after(5):  # delivered as notifications: they may follow the answer
            while len(seen) < 2:
                await anyio.sleep(0.01)
        assert seen == [("mine", 1, 2), ("mine", 2, 2)]
        called: list[float] = []

        async def progress(value: float, total: float | None, message: str | None) -> None:
            called.append(value)

        await client.call_tool(name="count", arguments={"steps": 1}, progress=progress)
        await anyio.sleep(0.05)
        assert called == [1] and len(seen) == 2
