"""scripts/duplicate_code.py, the CI guard on the runtime's duplicated blocks: it lists what pylint's
finder reports and fails above its ceiling."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO_ROOT

pytestmark = pytest.mark.slow  # symilar reads the whole runtime (~15 s)


def _run(ceiling: Path) -> subprocess.CompletedProcess[str]:
    script = REPO_ROOT / "scripts" / "duplicate_code.py"
    argv = [sys.executable, str(script), "--ceiling", str(ceiling)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)


def test_over_the_ceiling_fails_and_names_each_block(tmp_path: Path) -> None:
    ceiling = tmp_path / "ceiling"
    ceiling.write_text("# none allowed\n0\n")
    done = _run(ceiling)
    summary = done.stdout.splitlines()
    count = int(next(line for line in summary if line.startswith("runtime duplicate blocks")).split(": ")[1].split()[0])
    if count == 0:
        assert done.returncode == 0
        return
    assert done.returncode == 1, done.stdout
    places = [line for line in summary if line.startswith("  ") and " ~ " in line]
    assert len(places) == count
    assert all(".py:" in place for place in places)
    ceiling.write_text(f"{count}\n")
    assert _run(ceiling).returncode == 0
