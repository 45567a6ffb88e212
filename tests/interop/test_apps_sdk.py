"""The official MCP Python SDK's client (mcp==2.3.0) as an MCP Apps host against
examples/app_ui_server.py (tests/peers/sdk_apps_client.py): with the extension declared it sees the
tools' `_meta.ui`, reads the view as `text/html;profile=mcp-app` with its CSP and calls the app-only
tool; without it, the app-only tool is neither listed nor callable."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.support import REPO_ROOT

pytestmark = pytest.mark.interop

PEERS = REPO_ROOT / "tests" / "peers"
SERVER = REPO_ROOT / "examples" / "app_ui_server.py"
UI = "io.modelcontextprotocol/ui"


def report(sdk_python: str, version: str, ui: bool) -> dict[str, Any]:
    argv = [sdk_python, str(PEERS / "sdk_apps_client.py"), "--version", version]
    argv += ["--ui"] if ui else []
    done = subprocess.run(
        [*argv, "--", sys.executable, str(SERVER)], capture_output=True, text=True, timeout=120, cwd=str(REPO_ROOT)
    )
    assert done.returncode == 0, f"the SDK client failed:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_the_sdk_client_as_an_apps_host(sdk_python: str, version: str) -> None:
    seen = report(sdk_python, version, ui=True)
    assert seen["initialize"]["capabilities"]["experimental"] == {UI: {}}
    metas = {t["name"]: t["_meta"]["ui"] for t in seen["tools"]["tools"]}
    assert metas == {
        "counter": {"resourceUri": "ui://counter/view"},
        "increment": {"resourceUri": "ui://counter/view", "visibility": ["app"]},
    }
    (view,) = seen["view"]["contents"]
    assert view["mimeType"] == "text/html;profile=mcp-app" and "<h1>Counter</h1>" in view["text"]
    assert view["_meta"]["ui"] == {"csp": {"connectDomains": []}, "prefersBorder": True}
    assert seen["increment"]["structuredContent"] == {"value": 42}


@pytest.mark.parametrize("version", ["2025-11-25"])
def test_the_sdk_client_without_the_extension_never_gets_the_app_only_tool(sdk_python: str, version: str) -> None:
    seen = report(sdk_python, version, ui=False)
    assert [t["name"] for t in seen["tools"]["tools"]] == ["counter"]
    refused = seen["increment"]["mcp_error"]
    assert refused["code"] == -32602 and "callable only by an MCP Apps view" in refused["message"]
