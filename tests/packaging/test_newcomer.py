"""A newcomer's first day from a built wheel, outside the checkout (issue 45, item 2): the README's
install section (the wheel, then `pip install` of that file into a fresh virtual environment in a
temporary folder), its "From zero to a running server in Claude" commands (scaffold, list, call,
install into Claude Desktop's config under a temporary HOME), and the scaffold's own "Run it" steps
(its .venv, `pip install -e '.[dev]'`, its tests): each command as written, run by a shell whose
PATH has the venv first, as an activated venv has it. Before, the scaffold depended on
`mcp-bindgen[runtime]==0.1.0` from the package index, where no release is: its install failed."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.support import REPO_ROOT
from tests.support.docs import section
from tests.support.wheel import built_wheel, fresh_venv

pytestmark = pytest.mark.slow  # two virtual environments and their packages from the index

CHECKOUT = "/path/to/mcp-bindgen"  # how the README names the checkout


def _console(heading: str) -> list[str]:
    """The `$ ` lines of the one console block of the section `heading` (the README's)."""
    text = section(heading).split("\n## ", 1)[0]
    (block,) = re.findall(r"```console\n(.*?)```", text, re.S)
    return [line[2:] for line in block.splitlines() if line.startswith("$ ")]


def _sh(text: str, heading: str) -> list[str]:
    """The commands of the sh block under `heading` of a Markdown file, comments dropped."""
    part = text.split(heading, 1)[1]
    (block,) = re.findall(r"```sh\n(.*?)```", part, re.S)[:1]
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]


def _run(command: str, cwd: Path, environ: dict[str, str], timeout: float = 900) -> str:
    done = subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=environ, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_a_newcomer_installs_the_wheel_scaffolds_tests_and_installs_a_server(tmp_path: Path) -> None:
    work = tmp_path / "work"
    home = tmp_path / "home"
    for folder in (work, home):
        folder.mkdir()
    venv_bin = Path(fresh_venv(tmp_path / "venv")).parent
    environ = {
        **{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
        "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}",
        "VIRTUAL_ENV": str(venv_bin.parent),
        "HOME": str(home),
        "XDG_CONFIG_HOME": "",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }

    # The README's install section: the wheel (built once per source tree by the same command into
    # .cache/wheel/, copied to where the README puts it), then `pip install` of that file.
    build, install = _console("Install")
    assert shlex.split(build) == ["pip", "wheel", "--no-deps", "--wheel-dir", "dist", CHECKOUT]
    wheel = built_wheel()
    (work / "dist").mkdir()
    shutil.copy(wheel, work / "dist" / wheel.name)
    assert f"dist/{wheel.name}[" in install, "the README names another wheel than the checkout builds"
    _run(install, work, environ)
    assert shutil.which("mcp-bindgen", path=environ["PATH"]) == str(venv_bin / "mcp-bindgen")

    # "From zero to a running server in Claude", every command as written.
    for command in _console("From zero to a running server in Claude"):
        _run(command, work, environ, timeout=300)
    project = work / "weather"
    requirement = tomllib.loads((project / "pyproject.toml").read_text())["project"]["dependencies"][0]
    assert requirement == f"mcp-bindgen[runtime] @ {(work / 'dist' / wheel.name).as_uri()}"

    # The scaffold's README, "Run it": its own venv, its install (the wheel again, through that
    # requirement), its tests. The last line (ruff and pyright) is the developer's lint, not run here.
    steps = _sh((project / "README.md").read_text(), "## Run it")
    assert steps[:3] == ["python -m venv .venv", ".venv/bin/pip install -e '.[dev]'", ".venv/bin/pytest"]
    for command in steps[:2]:
        _run(command, project, environ)
    tested = _run(steps[2], project, environ)
    assert re.search(r"\b\d+ passed\b", tested) and " failed" not in tested, tested[-2000:]

    # The host's config: absolute paths into this venv and the scaffold, and what it starts answers.
    config = json.loads((home / ".config" / "Claude" / "claude_desktop_config.json").read_text())
    entry = config["mcpServers"]["weather"]
    assert entry["command"] == str(venv_bin / "mcp-bindgen")
    assert entry["args"] == ["run", str(project / "src" / "weather" / "server.py")]
    started = shlex.quote(shlex.join([entry["command"], *entry["args"]]))
    answer = _run(f"mcp-bindgen call {started} add a=40 b=2", tmp_path, environ)
    assert answer == '{"total":42}\n'
    assert str(REPO_ROOT) not in json.dumps(config)  # nothing of the checkout in what the host starts
