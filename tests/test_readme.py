"""Every Python snippet in the README runs as written (from the repository root, with the project's
environment first on PATH, as a user who followed the set-up has it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from .conftest import REPO_ROOT

BLOCKS = re.findall(r"```python\n(.*?)```", (REPO_ROOT / "README.md").read_text(encoding="utf-8"), re.S)


def _env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=_env(), capture_output=True, text=True, timeout=60
    )


def test_the_readme_has_its_snippets() -> None:
    assert len(BLOCKS) == 4, "a snippet was added or removed: give it a test here"


def test_models_snippet() -> None:
    result = _run(BLOCKS[0] + "\nprint(result.is_error, result.model_dump_json(exclude_none=True))\n")
    assert result.returncode == 0, result.stderr
    printed = result.stdout.split()
    assert printed == ["False", '{"content":[{"text":"hi","type":"text"}],"isError":false}']
    assert printed[1] in BLOCKS[0]  # what the snippet's comment says it writes


def test_client_snippet_against_the_example_server() -> None:
    result = _run(BLOCKS[2])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "hi"


def test_server_snippet_serves_the_client_snippet(tmp_path: Path) -> None:
    server = tmp_path / "echo.py"
    server.write_text(BLOCKS[1], encoding="utf-8")
    client = BLOCKS[2].replace('"examples/echo_server.py"', repr(str(server)))
    assert client != BLOCKS[2]
    result = _run(client)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "hi"


def test_lenient_client_snippet_against_the_example_server() -> None:
    result = _run(BLOCKS[3])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "mcp_bindings.v2024_11_05.models hi"  # what its comment says
    assert "# mcp_bindings.v2024_11_05.models hi" in BLOCKS[3]
