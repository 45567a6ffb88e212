"""docs/cli.md's "The MCP Registry entry" runs as written: its console block, each `$ ` line in a
fresh folder, prints what the page shows; the finding it quotes is what `registry check` says after
the change the page describes (the server renamed in server.json alone)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from tests.support import REPO_ROOT
from tests.support.cli import bindgen

PAGE = (REPO_ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
SECTION = PAGE.split("## The MCP Registry entry", 1)[1].split("\n## ", 1)[0]


def test_the_registry_section_runs_as_written(tmp_path: Path) -> None:
    [console] = re.findall(r"```console\n(.*?)```", SECTION, re.S)
    steps: list[tuple[list[str], list[str]]] = []
    for line in console.splitlines():
        if line.startswith("$ "):
            steps.append((shlex.split(line[2:]), []))
        else:
            steps[-1][1].append(line)
    assert [argv[:2] for argv, _ in steps] == [["mcp-bindgen", "new"], ["mcp-bindgen", "registry"]]
    for argv, shown in steps:
        done = bindgen(*argv[1:], cwd=tmp_path)
        assert done.returncode == 0, (argv, done.stderr)
        assert done.stdout.splitlines()[: len(shown)] == shown, argv

    [quoted] = re.findall(r"```text\n(.*?)```", SECTION, re.S)
    entry = json.loads((tmp_path / "weather" / "server.json").read_text(encoding="utf-8"))
    entry["name"] = "io.github.bob/weather"
    (tmp_path / "weather" / "server.json").write_text(json.dumps(entry, indent=2), encoding="utf-8")
    done = bindgen("registry", "check", "weather/server.json", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, quoted)
