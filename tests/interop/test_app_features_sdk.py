"""The official MCP Python SDK client (mcp==2.3.0, tests/peers/sdk_steps_client.py) drives the
authoring layer's issue-32 features at 2025-11-25 and 2026-07-28: an app with a lifespan, a
per-request dependency on it, an app-scoped one, middleware that denies a call (`raise ToolError`), a
tool disabled by its tag and a mounted app (tests/peers/app_features_server.py), over stdio
(`app.run()`: the lifespan starts and stops with the process) and over Streamable HTTP mounted at a
prefix of a Starlette and a FastAPI application (root_path honoured, the lifespan handed on with
`lifespan=mcp.lifespan`), on uvicorn at 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from tests.peers.app_features_server import build
from tests.peers.harness import PEERS
from tests.support import REPO_ROOT
from tests.support.http import serve_in_thread

pytestmark = pytest.mark.interop

VERSIONS = ["2025-11-25", "2026-07-28"]
CALLS = [
    *("--call", 'lookup={"name": "ada"}'),
    *("--call", 'lookup={"name": "root"}'),
    *("--call", 'lookup={"name": "alan"}'),
    *("--call", 'weather_forecast={"city": "Oslo"}'),  # the mounted app's
    *("--call", "reset={}"),  # disabled by its tag
]
EXPECTED = [
    "hello Ada Lovelace (connections out: 1, opened: 1)",  # one connection per request, given back after it
    "refused by policy",  # the middleware denied it (ToolError): no connection was opened
    "hello Alan Turing (connections out: 1, opened: 2)",
    "sunny in Oslo",
]


def sdk_report(argv: list[str]) -> dict[str, Any]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert "fatal" not in report, report.get("traceback")
    return report


def check(report: dict[str, Any], version: str) -> None:
    assert report["tools"] == ["lookup", "weather_forecast"]  # not `reset`: disabled
    *calls, reset = report["calls"]
    for call in calls:
        assert "result" in call, call
    assert [call["result"]["content"][0]["text"] for call in calls] == EXPECTED
    assert [call["result"].get("isError", False) for call in calls] == [False, True, False, False]
    assert reset["mcp_error"] == {"code": -32602, "message": "Unknown tool: reset"}
    if version != "2026-07-28":
        assert report["negotiated"] == version


@pytest.mark.parametrize("version", VERSIONS)
def test_over_stdio(version: str, sdk_python: str, tmp_path: Path) -> None:
    log = tmp_path / "lifespan.log"
    server = [sys.executable, str(PEERS / "app_features_server.py"), str(log)]
    report = sdk_report([sdk_python, str(PEERS / "sdk_steps_client.py"), "--version", version, *CALLS, "--", *server])
    check(report, version)
    assert log.read_text().splitlines() == ["start", "stop"]


@pytest.mark.parametrize("version", VERSIONS)
def test_mounted_in_starlette(version: str, sdk_python: str, tmp_path: Path) -> None:
    log = tmp_path / "lifespan.log"
    mcp = build(log).asgi()
    web = Starlette(routes=[Mount("/api", app=mcp)], lifespan=mcp.lifespan)
    with serve_in_thread(web) as base:
        url = f"{base}/api/mcp"
        report = sdk_report(
            [sdk_python, str(PEERS / "sdk_steps_client.py"), "--version", version, "--url", url, *CALLS]
        )
    check(report, version)
    assert log.read_text().splitlines() == ["start", "stop"]


@pytest.mark.parametrize("version", VERSIONS)
def test_mounted_in_fastapi(version: str, sdk_python: str, tmp_path: Path) -> None:
    fastapi = pytest.importorskip("fastapi")
    log = tmp_path / "lifespan.log"
    mcp = build(log).asgi(path="/")
    api = fastapi.FastAPI(lifespan=mcp.lifespan)
    api.mount("/tools/mcp", mcp)
    with serve_in_thread(api) as base:
        url = f"{base}/tools/mcp/"
        report = sdk_report(
            [sdk_python, str(PEERS / "sdk_steps_client.py"), "--version", version, "--url", url, *CALLS]
        )
    check(report, version)
    assert log.read_text().splitlines() == ["start", "stop"]
