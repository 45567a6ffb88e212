"""docs/openapi.md runs as written: each `$ ` line of its console block in a fresh folder holding the
fixture description as `petstore.yaml`, with a temporary HOME; the lines shown under a command are
the first lines it prints (HOME shown as `~`). Then the entry it wrote starts a server that answers."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

from tests.openapi.conftest import FIXTURES
from tests.support import REPO_ROOT
from tests.support.cli import bindgen
from tests.support.docs import console_steps

PAGE = (REPO_ROOT / "docs" / "openapi.md").read_text(encoding="utf-8")


def _steps() -> list[tuple[list[str], list[str]]]:
    return console_steps(PAGE)


def test_from_a_description_to_claude_runs_as_written(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    shutil.copy(FIXTURES / "petstore.yaml", work / "petstore.yaml")
    steps = _steps()
    assert all(argv[0] == "mcp-bindgen" for argv, _ in steps)
    for argv, shown in steps:
        done = bindgen(*argv[1:], cwd=work, environ={"HOME": str(home), "XDG_CONFIG_HOME": ""})
        assert done.returncode == 0, (argv, done.stderr)
        assert done.stdout.replace(str(home), "~").splitlines()[: len(shown)] == shown, argv

    config = json.loads((home / ".config" / "Claude" / "claude_desktop_config.json").read_text(encoding="utf-8"))
    entry = config["mcpServers"]["petstore"]
    assert entry["args"] == ["run", str(work / "petstore" / "src" / "server.py")]
    assert entry["env"] == {"PETSTORE_API_KEY": "your-key"}
    # what Claude Desktop would start answers (an argument below the parameter's minimum: the tool's
    # input schema says so, before any request to the fixture's made-up host)
    answer = bindgen("call", shlex.join([entry["command"], *entry["args"]]), "getPet", "petId=0", cwd=tmp_path)
    assert answer.returncode != 0
    assert "0 is less than the minimum of 1" in answer.stdout + answer.stderr


def _block(kind: str, containing: str = "") -> str:
    """The page's one `kind` block (holding `containing`)."""
    (found,) = [block for block in re.findall(rf"```{kind}\n(.*?)```", PAGE, re.S) if containing in block]
    return found


def test_the_route_map_runs_as_written(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "petstore.yaml", tmp_path / "petstore.yaml")
    (tmp_path / "routes.yaml").write_text(_block("yaml"))
    argv = "openapi petstore.yaml -o petstore --routes routes.yaml".split()
    assert f"mcp-bindgen {shlex.join(argv)}" in " ".join(PAGE.split())
    done = bindgen(*argv, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    readme = (tmp_path / "petstore" / "README.md").read_text()
    assert "| `getPet` | `petstore://pets/{pet_id}` | `GET /pets/{petId}` |" in readme
    assert "deletePet" not in readme and "| `listPets` | `GET /pets` |" in readme


def test_the_diff_runs_as_written(tmp_path: Path) -> None:
    for name in ("petstore.yaml", "petstore_v2.yaml"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    (command,) = _block("sh", "openapi diff").strip().splitlines()
    done = bindgen(*shlex.split(command)[1:], cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # a change breaks a caller
    printed = done.stdout.splitlines()
    assert [line for line in _block("text").splitlines() if line not in printed] == []


def test_app_openapi_runs_as_written(tmp_path: Path) -> None:
    """The run-time section: its server.py beside the fixture description, its `$ ` commands (the
    lines shown are what the first prints), then the Claude Desktop entry the JSON block shows."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    shutil.copy(FIXTURES / "petstore.yaml", work / "petstore.yaml")
    (work / "server.py").write_text(_block("python"))
    steps = console_steps(PAGE, "shell")
    assert [argv[:3] for argv, _ in steps] == [
        ["mcp-bindgen", "list", "tools"],
        ["mcp-bindgen", "install", "claude-desktop"],
    ]
    for argv, shown in steps:
        done = bindgen(*argv[1:], cwd=work, environ={"HOME": str(home), "XDG_CONFIG_HOME": ""})
        assert done.returncode == 0, (argv, done.stderr)
        assert done.stdout.splitlines()[: len(shown)] == shown, argv
    written = json.loads((home / ".config" / "Claude" / "claude_desktop_config.json").read_text(encoding="utf-8"))
    entry = written["mcpServers"]["petstore"]
    shown_entry = json.loads(_block("json"))["mcpServers"]["petstore"]
    assert Path(entry["command"]).name == Path(shown_entry["command"]).name == "mcp-bindgen"
    assert entry["args"] == ["run", str(work / "server.py")] and shown_entry["args"][0] == "run"
    assert entry["env"] == shown_entry["env"]
