"""docs/authoring.md stays true: its first example is examples/app_server.py as written, and its line
count tables are what the comparison files hold (ours the fewest): the basic server's, and the
notes server's with lifespan, a dependency, middleware, a mounted app and auth."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.support import REPO_ROOT

DOC = REPO_ROOT / "docs" / "authoring.md"
FILES = {
    "this layer": REPO_ROOT / "examples" / "app_server.py",
    "FastMCP 4.2.3": REPO_ROOT / "docs" / "comparison" / "fastmcp_server.py",
    "official SDK `MCPServer` (mcp 2.3.0)": REPO_ROOT / "docs" / "comparison" / "official_mcpserver.py",
}

NOTES_SECTION = "## Compared, with lifespan, a dependency, middleware, a mounted app and auth"
NOTES_FILES = {
    "this layer": REPO_ROOT / "docs" / "comparison" / "notes_app.py",
    "FastMCP 4.2.3": REPO_ROOT / "docs" / "comparison" / "notes_fastmcp.py",
    "official SDK `MCPServer` (mcp 2.3.0)": REPO_ROOT / "docs" / "comparison" / "notes_mcpserver.py",
}


def _without_module_docstring(source: str) -> list[str]:
    lines = source.splitlines()
    body = ast.parse(source).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        first, last = body[0].lineno, body[0].end_lineno or body[0].lineno
        lines = lines[: first - 1] + lines[last:]
    while lines and not lines[0].strip():
        lines = lines[1:]
    return lines


def counts(source: str) -> tuple[int, int]:
    """(lines, code lines): without the module docstring; code lines without blank and comment lines."""
    lines = _without_module_docstring(source)
    code = [line for line in lines if line.strip() and not line.strip().startswith("#")]
    return len(lines) + 1, len(code)  # +1: the blank line a module docstring leaves before the code


def test_the_first_example_is_the_example_file() -> None:
    block = re.search(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert block is not None
    example = "\n".join(_without_module_docstring(FILES["this layer"].read_text())) + "\n"
    assert block.group(1) == example


def _table(text: str, files: dict[str, Path]) -> dict[str, tuple[int, int]]:
    """The first line-count table in `text` naming `files`' rows: {row: (lines, code lines)}."""
    table: dict[str, tuple[int, int]] = {}
    for line in text.splitlines():
        if line.startswith("| ") and line.count("|") == 5:
            row = [cell.strip() for cell in line.strip("|").split("|")]
            if row[0] in files and row[0] not in table:
                table[row[0]] = (int(row[2].strip("*")), int(row[3].strip("*")))
    return table


@pytest.mark.parametrize("notes", [False, True], ids=["basic", "notes"])
def test_the_line_count_table(notes: bool) -> None:
    text = DOC.read_text()
    basic, _, rest = text.partition(NOTES_SECTION)
    files = NOTES_FILES if notes else FILES
    table = _table(rest if notes else basic, files)
    measured = {name: counts(path.read_text()) for name, path in files.items()}
    assert table == measured
    ours = measured["this layer"]
    assert all(ours[0] < other[0] and ours[1] < other[1] for name, other in measured.items() if name != "this layer")


def _snippet(marker: str) -> str:
    found = [b for b in re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL) if marker in b]
    assert len(found) == 1, f"{len(found)} blocks of docs/authoring.md hold {marker!r}"
    return found[0]


def _python(code: str) -> str:
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_the_running_snippet_runs_in_memory() -> None:
    assert _python(_snippet('app = App("files", version="1.0")')).strip() == "deleted /tmp/x"


def test_the_input_first_snippet_defines_its_tool() -> None:
    code = _snippet('@app.tool(task="required", input_first=True)') + (
        "\nimport anyio\n"
        "async def main() -> None:\n"
        "    async with app.test_client('2025-11-25') as client:\n"
        "        tool = (await client.list_tools()).tools[0]\n"
        "        print(tool.name)\n"
        "anyio.run(main)\n"
    )
    assert _python(code).strip() == "enrol"
