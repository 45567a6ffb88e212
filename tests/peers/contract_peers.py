"""Real third-party MCP servers for the contract tests (`mcp-bindgen client` / `lock` / `lint`),
installed once, pinned, into `.cache/contract-peers/` and reused after:

* PyPI `mcp-server-time` and `mcp-server-git` in one venv (`python -m venv` + pip);
* npm `@modelcontextprotocol/server-everything` (npm install into a prefix; run with
  `node dist/index.js stdio`, not through the npx shim).

Each helper returns the thing to run, or raises `Unavailable` saying why (no registry access), which
the tests turn into a skip.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support import REPO_ROOT, cache_lock

CACHE = REPO_ROOT / ".cache" / "contract-peers"
PY_REQUIREMENTS = ("mcp-server-time==2026.10.19", "mcp-server-git==2026.10.19")
# A server as still deployed on the oldest SDK: it dies on the `server/discover` probe of `auto`.
LEGACY_REQUIREMENTS = ("mcp-server-time==0.6.2", "mcp==1.1.3")
# The last handshake-only official SDK (its `FastMCP`): `tests/peers/sdk_legacy_server.py`, stdio or HTTP.
HANDSHAKE_SDK_REQUIREMENTS = ("mcp==1.30.0",)
# FastMCP as people install it (the comparison server of docs/authoring.md runs on it).
FASTMCP_REQUIREMENTS = ("fastmcp==4.2.3",)
NPM_PACKAGE = "@modelcontextprotocol/server-everything@2026.8.31"


class Unavailable(Exception):
    """A peer could not be installed (typically: no access to the registry)."""


def _run(argv: list[str], timeout: float = 900) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"{' '.join(argv[:4])}: {exc}") from exc
    if done.returncode != 0:
        raise Unavailable(f"{' '.join(argv[:4])} failed: {(done.stderr or done.stdout).strip()[-500:]}")


def python_peers() -> Path:
    """The venv holding mcp-server-time and mcp-server-git (its `bin/` has both commands)."""
    return _venv("venv", PY_REQUIREMENTS, "mcp-server-git")


def legacy_python_peers() -> Path:
    """The venv holding mcp-server-time 0.6.2 on mcp 1.1.3 (`bin/mcp-server-time`)."""
    return _venv("legacy-venv", LEGACY_REQUIREMENTS, "mcp-server-time")


def handshake_sdk() -> Path:
    """The venv holding the official SDK's last 1.x release (`bin/python`)."""
    return _venv("handshake-sdk-venv", HANDSHAKE_SDK_REQUIREMENTS, "python")


def fastmcp() -> Path:
    """The venv holding FastMCP 4.2.3 (`bin/python`)."""
    return _venv("fastmcp-venv", FASTMCP_REQUIREMENTS, "python")


def _venv(name: str, requirements: tuple[str, ...], command: str) -> Path:
    with cache_lock(CACHE / name):  # built once; parallel test processes wait and reuse it
        return _build_venv(name, requirements, command)


def _build_venv(name: str, requirements: tuple[str, ...], command: str) -> Path:
    venv = CACHE / name
    stamp = venv / ".mcp-bindgen-stamp"
    expected = json.dumps({"requirements": requirements, "python": sys.version.split()[0]})
    if stamp.exists() and stamp.read_text() == expected and (venv / "bin" / command).exists():
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    base = getattr(sys, "_base_executable", None) or sys.executable
    _run([base, "-m", "venv", str(venv)])
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q", *requirements])
    stamp.write_text(expected)
    return venv


def everything_server() -> list[str]:
    """The command of the npm `server-everything` over stdio."""
    node = shutil.which("node")
    npm = shutil.which("npm")
    if node is None or npm is None:
        raise Unavailable("node and npm are needed for @modelcontextprotocol/server-everything")
    prefix = CACHE / "npm"
    stamp = prefix / ".mcp-bindgen-stamp"
    entry = prefix / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    with cache_lock(prefix):
        if not (stamp.exists() and stamp.read_text() == NPM_PACKAGE and entry.exists()):
            prefix.mkdir(parents=True, exist_ok=True)
            _run([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", NPM_PACKAGE])
            stamp.write_text(NPM_PACKAGE)
    return [node, str(entry), "stdio"]
