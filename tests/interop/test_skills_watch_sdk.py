"""The official MCP Python SDK's client (mcp==2.3.0) against examples/skills_server.py, a real
server process over stdio, while its skills folder changes (tests/peers/sdk_skills_watch_client.py):
a skill folder added is told with `notifications/resources/list_changed` within a bounded wait and is
then listed by `resources/list` and `skills/list`; removed, the same (issue 31)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO_ROOT

pytestmark = pytest.mark.interop

PEERS = REPO_ROOT / "tests" / "peers"
SERVER = REPO_ROOT / "examples" / "skills_server.py"
NEW = "skill://release-notes/SKILL.md"


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_the_sdk_client_is_told_when_the_skills_folder_changes(sdk_python: str, version: str, tmp_path: Path) -> None:
    folder = tmp_path / "skills"
    shutil.copytree(REPO_ROOT / "examples" / "skills", folder)
    argv = [sdk_python, str(PEERS / "sdk_skills_watch_client.py"), "--version", version, "--directory", str(folder)]
    done = subprocess.run(
        [*argv, "--", sys.executable, str(SERVER), "--directory", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(REPO_ROOT),
    )
    assert done.returncode == 0, f"the SDK client failed:\n{done.stderr[-3000:]}"
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["capabilities"]["resources"]["listChanged"] is True
    assert [(s["change"], s["notified"]) for s in seen["steps"]] == [("added", True), ("removed", True)]
    assert seen["notifications"] == ["notifications/resources/list_changed"] * 2
    for state in ("before", "removed"):
        assert NEW not in seen[state]["skills"] and NEW not in seen[state]["resources"]
    assert seen["added"]["skills"] == sorted([*seen["before"]["skills"], NEW])
    assert seen["added"]["resources"] == sorted([*seen["before"]["resources"], NEW])
