"""Every code block of the README and of the documentation site (docs/**/*.md) keeps three promises
(issue 34, a test per class of stumble):

- each Python block is run as written by some test (the tests of tests/docs claim a block by a line
  only it has; a block no test names is a snippet nobody runs);
- no block spawns a bare `python`, which is not the project's interpreter unless a venv is active
  (`[sys.executable, ...]` in Python, `.venv/bin/python` in shell);
- every Python block passes pyright strict, as the user's editor would check it.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO_ROOT
from tests.support.docs import blocks

BARE_PYTHON = re.compile(r"""\[\s*["']python3?["']|--from python3? |^\s*python3? """, re.M)


def _where(path: Path, code: str) -> str:
    return f"{path.relative_to(REPO_ROOT)}: {code.strip().splitlines()[0][:70]!r}"


def _markers() -> set[str]:
    """The string literals of the tests long enough to pick out one snippet (how they claim one)."""
    here = Path(__file__).resolve()
    found: set[str] = set()
    for source in sorted((REPO_ROOT / "tests").rglob("*.py")):
        if source.resolve() == here:
            continue
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) >= 14:
                found.add(node.value)
    return found


def test_every_python_block_is_run_by_a_test() -> None:
    markers = _markers()
    unclaimed = [_where(path, code) for path, code in blocks("python") if not any(m in code for m in markers)]
    assert not unclaimed, f"python blocks no test runs: {unclaimed}"


def test_no_block_spawns_a_bare_python() -> None:
    bare = [_where(path, code) for path, code in blocks("") if BARE_PYTHON.search(code)]
    assert not bare, f"blocks that spawn a bare `python` (use sys.executable or .venv/bin/python): {bare}"


def test_a_bare_python_is_caught() -> None:
    assert BARE_PYTHON.search('async with connect_stdio(["python", "server.py"], Client):')
    assert BARE_PYTHON.search("mcp-bindgen lock --from python server.py")
    assert not BARE_PYTHON.search('names = ("python", "rust")')
    assert not BARE_PYTHON.search("mcp-bindgen lock --from .venv/bin/python server.py")


def test_every_python_block_passes_pyright_strict(tmp_path: Path) -> None:
    if importlib.util.find_spec("pyright") is None:
        pytest.fail("pyright is not installed: it is in the `test` extra (pip install -e '.[test]')")
    index: dict[str, str] = {}
    for number, (path, code) in enumerate(blocks("python")):
        name = f"snippet_{number:03d}.py"
        (tmp_path / name).write_text(code, encoding="utf-8")
        index[name] = _where(path, code)
    # The contract tools' snippet imports what `mcp-bindgen client` writes: write it here too.
    client = subprocess.run(
        [
            str(Path(sys.executable).parent / "mcp-bindgen"),
            "client",
            "-o",
            str(tmp_path / "demo_client.py"),
            "--from",
            sys.executable,
            str(REPO_ROOT / "examples" / "app_server.py"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
    )
    assert client.returncode == 0, client.stderr
    config = {
        "include": [n for n in index],
        "extraPaths": [str(REPO_ROOT / "generated"), str(REPO_ROOT / "runtime"), str(REPO_ROOT)],
        "pythonVersion": "3.11",
        "typeCheckingMode": "strict",
    }
    (tmp_path / "pyrightconfig.json").write_text(json.dumps(config))
    env = {**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=env,
    )
    report = json.loads(run.stdout)
    errors = [
        f"{index[Path(d['file']).name]} line {d['range']['start']['line'] + 1}: {d['message'].splitlines()[0]}"
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]
    assert not errors, "pyright strict:\n" + "\n".join(errors)
