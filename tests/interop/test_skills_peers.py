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

from tests.peers import contract_peers
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


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_inspector_verifies_the_skills_server_over_stdio_and_http(era: str) -> None:
    """MCP Inspector 2.12's CLI `--verify` (SEP-2640 conformance and digest checks) exits 0 on
    examples/skills_server.py, over stdio and over Streamable HTTP, handshake era and 2026-07-28."""
    from examples.skills_server import make_app
    from tests.support.browser import inspector_cli
    from tests.support.http import serve_in_thread

    cli = [str(node_path()), str(inspector_cli()), "--cli", "--protocol-era", era]
    verify = ["--method", "skills/list", "--verify", "--quiet"]
    stdio = subprocess.run(
        [*cli, *verify, "--", sys.executable, str(REPO_ROOT / "examples" / "skills_server.py")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
    )
    with serve_in_thread(make_app().asgi()) as url:
        http = subprocess.run(
            [*cli, f"{url}/mcp", "--transport", "http", *verify], capture_output=True, text=True, timeout=120
        )
    for done in (stdio, http):
        assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
        reports = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        outcomes = {r["uri"]: r["outcome"] for r in reports}
        assert outcomes["skill://acme/billing/refunds/SKILL.md"] == "verified"
        assert outcomes["skill://pdf-processing/SKILL.md"] == "verified"
        # the generated skill (resources "dynamic") is reported unverifiable, with a note saying why
        static = [r for r in reports if r["uri"] != "skill://reports/daily/SKILL.md"]
        assert len(static) == 3 and all(r["conformance"] == [] and r["ok"] for r in static), static


def test_fastmcps_skills_client_lists_gets_and_reads() -> None:
    """FastMCP 4.2.3's client (`list_skills`, `get_skill`, `read_skill`) against the example skills
    server, run as people install FastMCP (its own venv)."""
    try:
        python = contract_peers.fastmcp() / "bin" / "python"
    except contract_peers.Unavailable as exc:
        pytest.skip(f"FastMCP could not be installed: {exc}")
    client = REPO_ROOT / "tests" / "peers" / "fastmcp_skills_client.py"
    server = [sys.executable, str(REPO_ROOT / "examples" / "skills_server.py")]
    run = subprocess.run(
        [str(python), str(client), *server], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT
    )
    assert run.returncode == 0, run.stderr[-2000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["uris"] == [
        "skill://acme/billing/refunds/SKILL.md",
        "skill://git-workflow/SKILL.md",
        "skill://pdf-processing/SKILL.md",
        "skill://reports/daily/SKILL.md",
    ]
    assert seen["got"] == "skill://acme/billing/refunds/SKILL.md" and seen["read"] == "Skill"
