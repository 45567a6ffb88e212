"""Type-check a snippet with pyright in strict mode against the project's generated and runtime
code (the `assert_type` tests of typed calls use it); skips when pyright cannot run here."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from . import REPO_ROOT


def strict_errors(tmp_path: Path, source: str, python: str | None = None) -> list[str]:
    """The errors pyright strict reports on `source` ("line: message" each), with the packages of
    `python`'s environment (default: this one's; e.g. a peer library's venv)."""
    if importlib.util.find_spec("pyright") is None:
        pytest.skip("the `pyright` package is not installed (pip install -e '.[test]')")
    (tmp_path / "snippet.py").write_text(source)
    config = {
        "include": ["snippet.py"],
        "extraPaths": [str(REPO_ROOT / "generated"), str(REPO_ROOT / "runtime")],
        "pythonVersion": "3.11",
        "typeCheckingMode": "strict",
    }
    (tmp_path / "pyrightconfig.json").write_text(json.dumps(config))
    env = {**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"}
    try:
        run = subprocess.run(
            [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", python or sys.executable],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
            env=env,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"pyright cannot run here: {exc}")
    try:
        report = json.loads(run.stdout)
    except json.JSONDecodeError:
        pytest.skip(f"pyright cannot run here: {(run.stderr or run.stdout)[-300:]}")
    return [
        f"{d['range']['start']['line'] + 1}: {d['message']}"
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]
