"""The generated bindings type-check under pyright strict (config: tests/pyrightconfig.generated.json).

Pyright comes from the `pyright` package of the test environment (pinned in pyproject's `test` extra).
That wrapper runs the pyright bundled in the wheel with a `node` found on PATH; only when there is no
node does it try to download one. The test skips only when pyright cannot start at all (no wrapper,
or no node and no way to get one); any diagnostic of severity "error" fails it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support import REPO_ROOT

CONFIG = REPO_ROOT / "tests" / "pyrightconfig.generated.json"
GENERATED = REPO_ROOT / "generated" / "mcp_bindings"
TIMEOUT = 600  # a cold start on a slow machine; a warm run takes ~10 s


def _pyright(*args: str) -> subprocess.CompletedProcess[str]:
    # The version check against PyPI is skipped with --outputjson anyway; this silences it for --version.
    env = {**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "pyright", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=REPO_ROOT,
        env=env,
        check=False,
    )


@pytest.fixture(scope="module")
def pyright_ready() -> None:
    if importlib.util.find_spec("pyright") is None:
        pytest.skip("the `pyright` package is not installed (pip install -e '.[test]')")
    try:
        probe = _pyright("--version")
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"pyright cannot run here: {exc}")
    if probe.returncode != 0 or "pyright" not in probe.stdout:
        detail = (probe.stderr or probe.stdout).strip().splitlines()[-3:]
        pytest.skip(f"pyright cannot run here (no node runtime, and none could be fetched?): {' | '.join(detail)}")


def _diagnostic(d: dict[str, Any]) -> str:
    path = Path(d.get("file", "?"))
    shown = path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path
    start = d.get("range", {}).get("start", {})
    where = f"{shown}:{start.get('line', -1) + 1}:{start.get('character', -1) + 1}"
    rule = f" ({d['rule']})" if d.get("rule") else ""
    return f"{where}: {d['severity']}: {d['message']}{rule}"


def test_generated_bindings_are_pyright_strict_clean(pyright_ready: None) -> None:
    result = _pyright("--outputjson", "--project", str(CONFIG), "--pythonpath", sys.executable)
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        # Exit code 3 is a config error, 4 a bad command line: our fault, so fail, never skip.
        pytest.fail(f"pyright exited {result.returncode} without a JSON report:\n{result.stderr or result.stdout}")
    diagnostics = report.get("generalDiagnostics", [])
    errors = [d for d in diagnostics if d.get("severity") == "error"]
    others = [d for d in diagnostics if d.get("severity") != "error"]
    # Not vacuous: pyright saw every generated module (a wrong `include` would check nothing).
    expected = sorted(GENERATED.glob("v*/*.py"))
    assert expected, f"no generated modules under {GENERATED}"
    assert report["summary"]["filesAnalyzed"] >= len(expected), (report["summary"], [str(p) for p in expected])
    assert not errors, (
        f"pyright strict: {len(errors)} errors in the generated bindings "
        f"(fix the generator, not the output):\n"
        + "\n".join(_diagnostic(d) for d in errors)
        + ("\nalso:\n" + "\n".join(_diagnostic(d) for d in others) if others else "")
    )
