"""`app.asgi()` as a user mounts it (issue 32, item 7): at a prefix of a Starlette and a FastAPI
application (`root_path` honoured, the legacy SSE endpoint named below the prefix), the ASGI
lifespan protocol run to its end by Starlette's `TestClient`, by uvicorn and by the parent
application's `lifespan=`, with the app's own lifespan inside it; `app.run("http")` saying where
it serves. Driven by our generated clients at 2025-11-25 and 2026-07-28 over real sockets (uvicorn
on 127.0.0.1); tests/interop/test_app_features_sdk.py drives the same with the official SDK."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from mcp_bindings.runtime.app import App, Context
from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.runtime.protocol import registry
from tests.support import REPO_ROOT
from tests.support.http import serve_in_thread

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette: "use httpx2"; the TestClient works as documented
    from starlette.testclient import TestClient

pytestmark = pytest.mark.anyio

VERSIONS = ["2025-11-25", "2026-07-28"]


def _client(version: str) -> Any:
    return importlib.import_module(f"{registry.load_version(version).__name__}.client").Client


def make_app(events: list[str]) -> App:
    @asynccontextmanager
    async def lifespan(app: App) -> AsyncIterator[dict[str, str]]:
        events.append("start")
        yield {"greeting": "hello"}
        events.append("stop")

    app = App("mounted", version="1.0", lifespan=lifespan)

    @app.tool
    def greet(name: str, ctx: Context[dict[str, str]]) -> str:
        return f"{ctx.lifespan['greeting']} {name}"

    return app


async def _greet(url: str, version: str) -> str:
    async with connect_http(url, _client(version), protocol_version=version) as client:
        result = await client.call_tool(name="greet", arguments={"name": "ada"})
        return result.content[0].text


@pytest.mark.parametrize("version", VERSIONS)
async def test_mounted_in_starlette_at_a_prefix(version: str) -> None:
    events: list[str] = []
    mcp = make_app(events).asgi()
    web = Starlette(
        routes=[Route("/", lambda request: PlainTextResponse("home")), Mount("/api", app=mcp)],
        lifespan=mcp.lifespan,
    )
    with serve_in_thread(web) as base:
        assert events == ["start"]
        assert await _greet(f"{base}/api/mcp", version) == "hello ada"
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"{base}/")).text == "home"
            assert (await http.post(f"{base}/mcp", json={})).status_code == 404  # not mounted there
    assert events == ["start", "stop"]


@pytest.mark.parametrize("version", VERSIONS)
async def test_mounted_in_fastapi_at_a_prefix(version: str) -> None:
    fastapi = pytest.importorskip("fastapi")
    events: list[str] = []
    mcp = make_app(events).asgi(path="/")  # served at the prefix itself
    api = fastapi.FastAPI(lifespan=mcp.lifespan)

    @api.get("/status")
    def status() -> dict[str, str]:
        return {"ok": "yes"}

    api.mount("/tools/mcp", mcp)
    with serve_in_thread(api) as base:
        assert await _greet(f"{base}/tools/mcp/", version) == "hello ada"
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"{base}/status")).json() == {"ok": "yes"}
    assert events == ["start", "stop"]


def test_legacy_sse_names_its_endpoint_below_the_prefix() -> None:
    mcp = make_app([]).asgi()
    web = Starlette(routes=[Mount("/api", app=mcp)], lifespan=mcp.lifespan)

    async def first_event(base: str) -> str:
        async with httpx.AsyncClient() as http, http.stream("GET", f"{base}/api/sse") as response:
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    return line

        raise AssertionError("no endpoint event")

    with serve_in_thread(web) as base:
        line = anyio.run(first_event, base)
    assert re.fullmatch(r"data: /api/messages\?session_id=[0-9a-f]+", line), line


def test_starlette_test_client_runs_the_lifespan_to_its_end() -> None:
    events: list[str] = []
    mcp = make_app(events).asgi()
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    headers = {"accept": "application/json, text/event-stream"}
    with TestClient(mcp, base_url="http://127.0.0.1") as client:  # exits without an error
        assert events == ["start"]
        assert client.post("/mcp", json=init, headers=headers).json()["result"]["serverInfo"]["name"] == "mounted"
    assert events == ["start", "stop"]
    web = Starlette(routes=[Mount("/api", app=mcp)], lifespan=mcp.lifespan)
    with TestClient(web, base_url="http://127.0.0.1") as client:
        assert client.post("/api/mcp", json=init, headers=headers).status_code == 200
    assert events == ["start", "stop", "start", "stop"]


async def _lifespan_messages(app: Any) -> list[dict[str, Any]]:
    inbox = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return inbox.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    with anyio.fail_after(5):
        await app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, receive, send)
    return sent


async def test_lifespan_protocol_is_answered_at_each_step() -> None:
    events: list[str] = []
    sent = await _lifespan_messages(make_app(events).asgi())
    assert [m["type"] for m in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert events == ["start", "stop"]


async def test_a_failing_lifespan_is_reported_as_startup_failed() -> None:
    @asynccontextmanager
    async def lifespan(app: App) -> AsyncIterator[None]:
        raise ConnectionError("database unreachable")
        yield

    app = App("broken", lifespan=lifespan)

    @app.tool
    def noop() -> str:
        return ""

    sent = await _lifespan_messages(app.asgi())
    assert sent == [{"type": "lifespan.startup.failed", "message": "ConnectionError: database unreachable"}]


RUN_HTTP = """
from mcp_bindings.runtime.app import App
app = App("announced")
@app.tool
def ping() -> str:
    return "pong"
app.run("http", port=0)
"""


async def test_run_http_prints_the_url_it_serves() -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", RUN_HTTP], cwd=REPO_ROOT, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    try:
        assert process.stderr is not None
        with anyio.fail_after(20):
            line = await anyio.to_thread.run_sync(process.stderr.readline)
        found = re.fullmatch(r"serving MCP \(Streamable HTTP\) at (http://127\.0\.0\.1:\d+/mcp)\n", line)
        assert found, line
        async with connect_http(found.group(1), _client("2025-11-25")) as client:  # the URL printed serves
            assert (await client.call_tool(name="ping", arguments={})).content[0].text == "pong"
    finally:
        process.terminate()
        process.wait(10)
