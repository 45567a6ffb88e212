"""The runnable snippets of docs/authoring.md run as written and print what their comments say, and
pass pyright strict (issue 32: each feature of the authoring layer has one). Each is claimed by a
line only it has; a claimed snippet that disappears fails here."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.runtime.protocol import registry
from tests.support import REPO_ROOT
from tests.support.http import serve_in_thread
from tests.support.pyright_snippet import strict_errors

DOC = (REPO_ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)^ *```", DOC, re.S | re.M)

# marker -> what the snippet prints, line by line
SNIPPETS = {
    'app = App("people", version="1.0", lifespan=lifespan)': ["['name']", "Ada Lovelace"],
    'raise ToolError("not for you")': ["looked up ada", "looked up ada", "not for you"],
    'app.disable(tags={"admin"})  # hidden': ["['status']", "['reset', 'status']"],
    'app.mount(weather, namespace="weather")': ["['weather_forecast']", "Oslo: 21C"],
    "middleware=[Tracing(tracer_provider=provider)]": ["['tools/call lookup']"],
    'proxy = App.proxy([sys.executable, "examples/app_server.py"]': [
        "['weather', 'delete']",
        '{"city":"Oslo","celsius":21.5}',
        "profile of ada",
    ],
    "progress = ctx.progress(total=len(rows))": ["1 2 imported a", "2 2 imported b"],
}
# Snippets that serve until interrupted under `__main__`: loaded as a module, then driven.
MOUNTED = 'web = Starlette(routes=[Route("/", home), Mount("/api", app=mcp)], lifespan=mcp.lifespan)'
AUTH = '@app.tool(scopes=["accounts:admin"])'
STRICT = [*SNIPPETS, MOUNTED, AUTH]


def block(marker: str) -> str:
    found = [b for b in BLOCKS if marker in b]
    assert len(found) == 1, f"{len(found)} docs/authoring.md blocks hold {marker!r}"
    return textwrap.dedent(found[0])  # a block inside a list item is indented


@pytest.mark.parametrize("marker", list(SNIPPETS))
def test_snippet_runs_as_written(marker: str) -> None:
    run = subprocess.run(
        [sys.executable, "-c", block(marker)], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == SNIPPETS[marker]


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_mounted_snippet_serves_below_its_prefix(version: str) -> None:
    namespace: dict[str, Any] = {"__name__": "authoring_mounted_snippet"}
    exec(compile(block(MOUNTED), "docs/authoring.md", "exec"), namespace)
    client_cls = importlib.import_module(f"{registry.load_version(version).__name__}.client").Client
    with serve_in_thread(namespace["web"]) as base:
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"{base}/")).text == "home"
        async with connect_http(f"{base}/api/mcp", client_cls, protocol_version=version) as client:
            result = await client.call_tool(name="lookup", arguments={"name": "ada"})
    assert result.content[0].text == "Ada Lovelace"


@pytest.mark.anyio
async def test_auth_snippet_serves_metadata_and_challenges() -> None:
    namespace: dict[str, Any] = {"__name__": "authoring_auth_snippet"}
    exec(compile(block(AUTH), "docs/authoring.md", "exec"), namespace)
    with serve_in_thread(namespace["app"].asgi()) as base:
        async with httpx.AsyncClient() as http:
            metadata = (await http.get(f"{base}/.well-known/oauth-protected-resource/mcp")).json()
            refused = await http.post(f"{base}/mcp", json={}, headers={"Accept": "application/json"})
    assert metadata["resource"] == "https://mcp.example.com/mcp"
    assert metadata["authorization_servers"] == ["https://auth.example.com"]
    assert metadata["scopes_supported"] == ["accounts:read", "accounts:admin"]
    assert refused.status_code == 401 and "resource_metadata=" in refused.headers["www-authenticate"]


@pytest.mark.parametrize("marker", STRICT)
def test_snippet_is_strict_clean(marker: str, tmp_path: Path) -> None:
    assert strict_errors(tmp_path, block(marker)) == []
