"""`mcp_bindings` is one namespace package over two source roots (generated/ and runtime/): the
editable install, a built wheel and pyright must each resolve both halves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO_ROOT
from tests.support.pipeline import PINNED_VERSIONS
from tests.support.wheel import built_wheel, fresh_venv, pip

PROBE = (
    "import json, mcp_bindings, mcp_bindings.runtime.stdio.serve, mcp_bindings.v2025_11_25.server as s\n"
    "from mcp_bindings.runtime import registry\n"
    "print(json.dumps({'path': [str(p) for p in mcp_bindings.__path__], 'versions': list(registry.versions()),"
    " 'stub': s.Server.protocol.version}))\n"
)


def _probe(python: str, cwd: Path) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([python, "-c", PROBE], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_editable_install_resolves_both_roots(tmp_path: Path) -> None:
    found = _probe(sys.executable, tmp_path)  # outside the checkout: only the install's .pth counts
    paths = {Path(str(p)) for p in found["path"]}  # type: ignore[union-attr]
    assert paths == {REPO_ROOT / "generated" / "mcp_bindings", REPO_ROOT / "runtime" / "mcp_bindings"}
    assert found["versions"] == PINNED_VERSIONS and found["stub"] == "2025-11-25"


@pytest.mark.slow
def test_wheel_holds_both_halves_and_imports(tmp_path: Path) -> None:
    python = fresh_venv(tmp_path / "venv")
    pip(python, "install", "-q", f"{built_wheel()}[runtime]")
    found = _probe(python, tmp_path)
    (root,) = {Path(str(p)) for p in found["path"]}  # type: ignore[union-attr]
    assert root.parent.name == "site-packages" and (root / "runtime" / "server" / "runtime.py").is_file()
    assert (root / "runtime" / "protocol" / "policy" / "retry.json").is_file()  # the runtime's policy data ships too
    assert (root / "v2026_07_28" / "crossing.py").is_file()  # and each version's crossing tables
    assert found["versions"] == PINNED_VERSIONS and found["stub"] == "2025-11-25"
    # The live-server tools ship on the runtime's side, their data with them, and the installed
    # command finds them through their entry point (`mcp_bindgen.commands`).
    assert (root / "live" / "contract" / "lint_rules.json").is_file()
    listed = subprocess.run(
        [str(Path(python).parent / "mcp-bindgen"), "--help"], capture_output=True, text=True, timeout=120
    )
    assert listed.returncode == 0, listed.stderr
    assert {"call", "record", "mock", "generate"} <= set(listed.stdout.split())


def test_pyright_resolves_both_roots_through_the_install(tmp_path: Path) -> None:
    """A user's module importing from both halves type-checks with no extra paths configured."""
    if subprocess.run([sys.executable, "-m", "pyright", "--version"], capture_output=True, timeout=300).returncode:
        pytest.skip("pyright cannot run here")
    user = tmp_path / "user_server.py"
    user.write_text(
        "from mcp_bindings.runtime.stdio.serve import serve_stdio\n"
        "from mcp_bindings.runtime.protocol.spec import ProtocolTables\n"
        "from mcp_bindings.v2025_11_25 import models as m\n"
        "from mcp_bindings.v2025_11_25.server import Server\n"
        "from mcp_bindings.runtime.protocol.context import RequestContext\n\n\n"
        "class Echo(Server):\n"
        "    async def list_tools(self, params: m.PaginatedRequestParams | None, ctx: RequestContext)"
        " -> m.ListToolsResult:\n"
        "        return m.ListToolsResult(tools=[])\n\n\n"
        "tables: ProtocolTables = Echo.protocol\n"
        "serve_stdio(Echo())\n",
        encoding="utf-8",
    )
    (tmp_path / "pyrightconfig.json").write_text(json.dumps({"typeCheckingMode": "standard"}), encoding="utf-8")
    env = {**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable, str(user)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = json.loads(result.stdout)
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert errors == [], errors


def test_discovering_versions_loads_no_models() -> None:
    """The registry reads each version's small `about` module only; the package (whose `__init__`
    loads every model) is imported when the version is used, and then keeps that same module."""
    code = (
        "import sys\n"
        "from mcp_bindings.runtime import registry\n"
        "found = list(registry.versions())\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('mcp_bindings.v') and not m.endswith('.about'))\n"
        "import mcp_bindings.v2025_11_25 as v\n"
        "print(found, loaded, v.INFO is registry.info('2025-11-25'))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{PINNED_VERSIONS} [] True"
