"""scripts/release takes the version from the source and holds the git tag to it: a `v*` tag on HEAD
naming another version stops the release before anything is built (the generated headers and the
scaffolds' requirement carry the source's version). Run on a scratch repository holding the script
and the version file only."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from mcp_bindgen import __version__
from tests.support import REPO_ROOT


def _repository(tmp_path: Path, tag: str) -> Path:
    repo = tmp_path / "repo"
    for rel in ("scripts/release", "generator/mcp_bindgen/__init__.py"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / rel, repo / rel)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "release"], ["tag", tag]):
        subprocess.run([*git, *argv], check=True, capture_output=True, timeout=60)
    return repo


def test_a_tag_naming_another_version_stops_the_release(tmp_path: Path) -> None:
    repo = _repository(tmp_path, "v9.9.9")
    done = subprocess.run(
        [str(repo / "scripts" / "release"), "--outdir", str(tmp_path / "dist")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHON": "false"},  # nothing is built: the check comes first
    )
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"release: HEAD is tagged v9.9.9 but generator/mcp_bindgen/__init__.py says {__version__}: set __version__ "
        "to 9.9.9, run `mcp-bindgen generate`"
    ), done.stderr
    assert not (tmp_path / "dist").exists()


def test_an_unknown_option_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(REPO_ROOT / "scripts" / "release"), "--upload"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stderr == "usage: scripts/release [--outdir DIR]\n"
