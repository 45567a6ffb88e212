"""`mcp-bindgen` finds the commands other packages register under the entry point group
`mcp_bindgen.commands` (issue 47, item 5: the live-server tools are one such package, so the
generator names none of them). A third-party package installed beside it adds a command with no
edit to the generator; one whose plug-in cannot load is reported in one line and the others work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PLUGIN = """
import argparse


def _hello(args: argparse.Namespace) -> int:
    print(f"hello {args.name}")
    return 0


def add_parsers(sub) -> None:
    hello = sub.add_parser("hello", help="say hello")
    hello.add_argument("name")
    hello.set_defaults(func=_hello)


def rewrite_argv(argv: list[str]) -> list[str]:
    return ["hello", "from-rewrite"] if argv == ["greet"] else argv
"""


def _site(tmp_path: Path, entry_points: str) -> Path:
    """A folder holding the plug-in module and a distribution's metadata naming its entry points."""
    site = tmp_path / "site"
    (site / "acme_cmds-1.0.dist-info").mkdir(parents=True)
    (site / "acme_cmds.py").write_text(PLUGIN, encoding="utf-8")
    (site / "acme_cmds-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: acme-cmds\nVersion: 1.0\n", encoding="utf-8"
    )
    (site / "acme_cmds-1.0.dist-info" / "entry_points.txt").write_text(entry_points, encoding="utf-8")
    return site


def _bindgen(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, "-m", "mcp_bindgen.cli", *args], capture_output=True, text=True, timeout=120, env=env
    )


def test_a_registered_package_adds_a_command(tmp_path: Path) -> None:
    site = _site(tmp_path, "[mcp_bindgen.commands]\nacme = acme_cmds\n")
    done = _bindgen(site, "hello", "world")
    assert (done.returncode, done.stdout, done.stderr) == (0, "hello world\n", "")
    rewritten = _bindgen(site, "greet")  # its argv rewrite runs before parsing
    assert rewritten.stdout == "hello from-rewrite\n"
    listed = _bindgen(site, "--help").stdout.split()
    assert {"hello", "call", "record", "generate"} <= set(listed)  # beside the live tools and the generator's


def test_a_plug_in_that_cannot_load_is_named_and_left_out(tmp_path: Path) -> None:
    site = _site(tmp_path, "[mcp_bindgen.commands]\nbroken = acme_missing_module\n")
    done = _bindgen(site, "call", "--help")
    assert done.returncode == 0, done.stderr
    assert "mcp-bindgen call" in done.stdout
    assert done.stderr.startswith("mcp-bindgen: warning: commands 'acme_missing_module' not loaded: ")
    assert "Traceback" not in done.stderr
