"""mcp-bindgen's wheel, built once per source tree and shared by the tests that install it.

`built_wheel()` builds it as the README's install section does (`pip wheel --no-deps`) into
`.cache/wheel/<hash of what goes into the wheel>/`, under `cache_lock`: test processes running in
parallel build it once, and a later run on an unchanged tree reuses it. `MCP_BINDGEN_WHEEL` names a
wheel to use instead: `scripts/release` runs the packaging tests on the very wheel it built.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

from tests.support import REPO_ROOT, cache_lock

# What hatchling puts into the wheel ([tool.hatch.build.targets.wheel] of pyproject.toml), read from.
SOURCES = ("pyproject.toml", "README.md", "generator", "generated", "runtime", "templates", "schema")
CACHE = REPO_ROOT / ".cache" / "wheel"


def source_hash() -> str:
    """sha256 over the paths and bytes of every file the wheel is built from (caches left out)."""
    digest = hashlib.sha256()
    for name in SOURCES:
        top = REPO_ROOT / name
        files = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file())
        for path in files:
            if "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            digest.update(path.relative_to(REPO_ROOT).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def built_wheel() -> Path:
    """The wheel of this source tree (or the one `MCP_BINDGEN_WHEEL` names)."""
    given = os.environ.get("MCP_BINDGEN_WHEEL")
    if given:
        return Path(given).resolve()
    entry = CACHE / source_hash()
    with cache_lock(entry):
        found = sorted(entry.glob("mcp_bindgen-*.whl"))
        if found:
            return found[0]
        build = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "--wheel-dir", str(entry), str(REPO_ROOT)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert build.returncode == 0, build.stderr[-3000:]
        (wheel,) = entry.glob("mcp_bindgen-*.whl")
    for stale in CACHE.iterdir():  # the wheels of trees before this one
        if stale.is_dir() and stale != entry:
            shutil.rmtree(stale, ignore_errors=True)
    return wheel


def fresh_venv(target: Path) -> str:
    """A virtual environment at `target` with pip and nothing else (no system site-packages); its python."""
    venv.create(target, with_pip=True, system_site_packages=False)
    return str(target / "bin" / "python")


def pip(python: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m pip ARGS`, asserted to succeed (the end of its stderr shown where it did not)."""
    run = subprocess.run(
        [python, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=cwd,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run
