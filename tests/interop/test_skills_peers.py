"""The Skills extension against a real peer: the TypeScript SDK v2 client's Skills API
(`@modelcontextprotocol/client` 2.4.0, `ext/skills`: `SkillsClient`, which checks every file it reads
against the entry's size and digest, and SKILL.md's frontmatter against the entry's) drives
examples/skills_server.py over stdio (tests/peers/ts_skills_client.mjs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO_ROOT
from tests.support.browser import bundle, ensure_packages, node_path

pytestmark = [pytest.mark.interop, pytest.mark.slow]


def test_the_typescript_sdk_skills_client_lists_gets_verifies_and_reads_directories(tmp_path: Path) -> None:
    ensure_packages()
    script = bundle(REPO_ROOT / "tests" / "peers" / "ts_skills_client.mjs", tmp_path / "client.mjs", platform="node")
    done = subprocess.run(
        [str(node_path()), str(script), sys.executable, str(REPO_ROOT / "examples" / "skills_server.py")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["supported"] is True and seen["directoryRead"] is True
    assert seen["listed"] == [
        ["skill://acme/billing/refunds/SKILL.md", "refunds", 2],
        ["skill://git-workflow/SKILL.md", "git-workflow", 1],
        ["skill://pdf-processing/SKILL.md", "pdf-processing", 3],
        ["skill://reports/daily/SKILL.md", "daily", "dynamic"],
    ]
    assert seen["got"]["license"] == "Apache-2.0" and seen["got"]["metadata"] == {"version": "1.2"}
    assert seen["skillMd"]["verified"] is True and seen["skillMd"]["body"].startswith("\n# Refunds")
    assert seen["email"] == {"verified": True, "text": "Dear customer,\n\nyour refund of {amount} is on its way.\n"}
    assert seen["directory"] == [
        ["skill://pdf-processing/templates/invoice.md", "text/markdown"],
        ["skill://pdf-processing/templates/regional", "inode/directory"],
    ]
    assert seen["unknown"] == {
        "code": -32602,
        "message": "No skill is served at skill://acme/billing/chargebacks/SKILL.md",
    }
