"""The README's "From zero to a running server in Claude" runs as written: each `$ ` line of its
console block in a fresh folder with a temporary HOME (up to where a real host would start the
server), the lines shown under a command being the first lines it prints (HOME shown as `~`).
Then the entry it wrote starts a server that answers."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from tests.support import REPO_ROOT
from tests.support.cli import bindgen
from tests.support.docs import console_steps

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
SECTION = README.split("## From zero to a running server in Claude", 1)[1].split("\n## ", 1)[0]


def _steps() -> list[tuple[list[str], list[str]]]:
    return console_steps(SECTION)


def test_from_zero_to_claude_runs_as_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    steps = _steps()
    assert all(argv[0] == "mcp-bindgen" for argv, _ in steps)  # only the CLI's own commands
    for argv, shown in steps:
        done = bindgen(*argv[1:], cwd=work, environ={"HOME": str(home), "XDG_CONFIG_HOME": ""})
        assert done.returncode == 0, (argv, done.stderr)
        printed = done.stdout.replace(str(home), "~").splitlines()
        assert printed[: len(shown)] == shown, argv

    config = json.loads((home / ".config" / "Claude" / "claude_desktop_config.json").read_text(encoding="utf-8"))
    entry = config["mcpServers"]["weather"]
    server = work / "weather" / "src" / "weather" / "server.py"
    assert entry["args"] == ["run", str(server)]
    # what Claude Desktop would start answers a call
    answer = bindgen("call", shlex.join([entry["command"], *entry["args"]]), "add", "a=40", "b=2", cwd=tmp_path)
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout == '{"total":42}\n'
