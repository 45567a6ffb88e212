"""The CLI's own start-up: `mcp-bindgen --help` and `mcp-bindgen call` as a user runs them, in a
fresh process each time, against their floors.

* `--help`, `--version`: floor = a bare interpreter (`python -c pass`); they import neither the
  runtime nor the generator (tests/cli/test_cli_imports.py checks `sys.modules`).
* `call examples/app_echo.py:make_app echo text=hi` (spawns the server through `mcp-bindgen run`,
  negotiates, lists tools to type the arguments, calls): floor = a script doing the same through
  the runtime directly (`connect_stdio` + `list_tools` + `call_tool`, the server spawned the same way).

Ratios only (ours / floor); nothing here is asserted by a test.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from benchmarks.config import Budget
from benchmarks.report import Row, Section, Target
from benchmarks.setup_env import Environment
from benchmarks.stats import stat_or_none

ROOT = Path(__file__).resolve().parent.parent
ECHO = f"{ROOT / 'examples' / 'app_echo.py'}:make_app"
DIRECT = """
import sys, anyio
from mcp_bindings.runtime.stdio.connect import connect_stdio
from mcp_bindings.v2026_07_28.client import Client
async def main():
    command = [sys.executable, "-m", "mcp_bindgen.cli", "run", sys.argv[1]]
    async with connect_stdio(command, Client, protocol_version="auto") as client:
        await client.list_tools()
        result = await client.call_tool(name="echo", arguments={"text": "hi"})
        print(result.content[0].text)
anyio.run(main)
"""


def _wall(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    wall = (time.perf_counter() - start) * 1e3
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])} failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return wall


def run(env: Environment, budget: Budget) -> Section:
    section = Section()
    python = env.ours_python
    if python is None:
        section.notes.append("cli: mcp_bindings not importable; skipped")
        return section
    cli = [python, "-m", "mcp_bindgen.cli"]
    cases = {
        "help": [*cli, "--help"],
        "version": [*cli, "--version"],
        "bare": [python, "-c", "pass"],
        "call": [*cli, "call", ECHO, "echo", "text=hi"],
        "direct": [python, "-c", DIRECT, ECHO],
    }
    walls: dict[str, list[float]] = {name: [] for name in cases}
    for argv in cases.values():  # warm-up: bytecode written once
        _wall(argv, env.side_env("ours", write=True))
    reps = max(3, budget.spawn_reps)
    names = list(cases)
    for rep in range(reps):
        for name in names[rep % len(names) :] + names[: rep % len(names)]:  # rotated, interleaved
            walls[name].append(_wall(cases[name], env.side_env("ours")))
        print(f"  cli rep {rep + 1}/{reps}", file=sys.stderr, flush=True)

    title = "9. The CLI's start-up (process wall)"
    info = Target("(info: ours / floor)")
    section.rows += [
        Row(
            title,
            "mcp-bindgen --help",
            "ms",
            {"ours": stat_or_none(walls["help"], "ms"), "official": None, "floor": stat_or_none(walls["bare"], "ms")},
            better="info",
            target=info,
            note="floor: python -c pass",
        ),
        Row(
            title,
            "mcp-bindgen --version",
            "ms",
            {
                "ours": stat_or_none(walls["version"], "ms"),
                "official": None,
                "floor": stat_or_none(walls["bare"], "ms"),
            },
            better="info",
            target=info,
            note="floor: python -c pass",
        ),
        Row(
            title,
            "mcp-bindgen call (spawn, negotiate, list, call)",
            "ms",
            {"ours": stat_or_none(walls["call"], "ms"), "official": None, "floor": stat_or_none(walls["direct"], "ms")},
            better="info",
            target=info,
            note="floor: the same calls through connect_stdio in a script",
        ),
    ]
    return section
