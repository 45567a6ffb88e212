"""The official SDK peers: the MCP Python SDK (mcp==2.3.0) in a venv of its own,
`.cache/official-sdk-venv`, created on first use (python -m venv + pip install) and reused after (the
`sdk_python` fixture of tests/conftest.py builds it, or skips saying why); its scripts are
`tests/peers/sdk_*.py`. And the TypeScript SDK that `scripts/conformance --setup-only` installs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from mcp_bindings.runtime.stdio.connect import connect_stdio
from tests.peers.harness import PEERS, Recorder, client_module, make_handlers
from tests.support import REPO_ROOT, cache_lock

SDK_REQUIREMENT = "mcp==2.3.0"
SDK_VENV = REPO_ROOT / ".cache" / "official-sdk-venv"
STAMP = SDK_VENV / ".mcp-bindgen-stamp"
# The TypeScript SDK that `scripts/conformance --setup-only` installs (its client drives our servers).
TS_SDK = REPO_ROOT / ".cache" / "conformance" / "node_modules" / "@modelcontextprotocol" / "sdk"


def node_with_ts_sdk() -> str:
    """The `node` that runs the TypeScript SDK's client scripts; skips the test, with the one reason
    and the one fix, where node or the SDK is missing."""
    node = shutil.which("node")
    if node is None or not (TS_SDK / "package.json").is_file():
        pytest.skip("node or the TypeScript SDK is missing: run scripts/conformance --setup-only (CI does)")
    return node


def _stamp_text() -> str:
    return json.dumps({"requirement": SDK_REQUIREMENT, "python": sys.version.split()[0]})


def create_sdk_venv() -> str | None:
    """Build the SDK venv if it is missing or stale (one process at a time: the others wait, then
    reuse it); returns why it could not be built, or None."""
    with cache_lock(SDK_VENV):
        return _build_sdk_venv()


def _build_sdk_venv() -> str | None:
    python = SDK_VENV / "bin" / "python"
    if python.exists() and STAMP.exists() and STAMP.read_text() == _stamp_text():
        return None
    shutil.rmtree(SDK_VENV, ignore_errors=True)
    SDK_VENV.parent.mkdir(parents=True, exist_ok=True)
    base = getattr(sys, "_base_executable", None) or sys.executable
    steps = [
        [base, "-m", "venv", str(SDK_VENV)],
        [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", SDK_REQUIREMENT],
    ]
    for argv in steps:
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{' '.join(argv[:4])}: {exc}"
        if done.returncode != 0:
            return f"{' '.join(argv[:4])} failed: {(done.stderr or done.stdout).strip()[-500:]}"
    STAMP.write_text(_stamp_text())
    return None


def step(report: dict[str, Any], name: str) -> Any:
    value = report.get(name)
    assert not (isinstance(value, dict) and "error" in value), f"step {name} failed: {value.get('traceback') or value}"
    return value


@asynccontextmanager
async def sdk_server(sdk_python: str, version: str, tmp_path: Path) -> AsyncIterator[tuple[Any, Recorder]]:
    recorder = Recorder()
    with open(tmp_path / "sdk-server.stderr", "wb") as stderr:
        async with connect_stdio(
            [sdk_python, str(PEERS / "sdk_server.py")],
            client_module(version).Client,
            handlers=make_handlers(version, recorder),
            request_timeout=20,
            cwd=str(REPO_ROOT),
            stderr=stderr,
        ) as client:
            yield client, recorder


def sdk_python_path() -> str:
    """The SDK venv's python, the venv built first if need be; skips the test, saying why, when it
    cannot be created (no access to PyPI). The `sdk_python` fixture (tests/conftest.py) calls it."""
    import pytest

    problem = create_sdk_venv()
    if problem is not None:
        pytest.skip(f"the official SDK venv ({SDK_REQUIREMENT}) could not be created: {problem}")
    return str(SDK_VENV / "bin" / "python")
