"""7. Tool schema validation: what checking tools/call against the listed schemas costs per call.

Ours only, with vs without, measured in one process (``benchmarks.tool_schemas_worker``, ours'
interpreter): the server's request path for the ``echo`` tool (its inputSchema checked), the same
for an echo with an outputSchema and structuredContent (both checked), and a typed client + server
round trip in memory (server and client checks). Overheads are medians over pairs of interleaved
samples; the target is the issue's: under 5 % on the echo tool.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile

from benchmarks.config import REPO_ROOT, Budget
from benchmarks.report import Row, Section, absolute_at_most
from benchmarks.setup_env import Environment
from benchmarks.stats import stat_or_none

TITLE = "7. Tool schema validation (ours only: with / without, tools/call echo, 2025-11-25)"
ITEMS = {
    "request": "server request path, echo (inputSchema)",
    "structured": "server request path, echo + outputSchema (both schemas)",
    "roundtrip": "in-memory round trip, typed client + server",
}


def run(env: Environment, budget: Budget) -> Section:
    section = Section()
    if not env.ours_python:
        section.notes.append("tool schema validation skipped: ours unavailable")
        return section
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        argv = [env.ours_python, "-m", "benchmarks.tool_schemas_worker", out.name]
        if budget.name == "quick":
            argv.append("--quick")
        r = subprocess.run(argv, cwd=REPO_ROOT, env=env.side_env("ours"), capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            section.notes.append(f"tool schema worker failed: {r.stderr[-1500:]}")
            return section
        with open(out.name) as f:
            data = json.load(f)
    section.raw = data
    for key, title in ITEMS.items():
        item = data["items"][key]
        for side, label in (("off", "validation off"), ("on", "validation on")):
            section.rows.append(
                Row(TITLE, f"{title}, {label}", "us/call", {"ours": stat_or_none(item[side], "us/call")}, better="info")
            )
        section.rows.append(
            Row(
                TITLE,
                f"{title}, overhead",
                "%",
                {"ours": stat_or_none(item["overhead_pct"], "%")},
                target=absolute_at_most(5, "%") if key == "request" else None,
                note="median over pairs of interleaved samples (on / off)",
            )
        )
    print("  tool schema validation done", file=sys.stderr, flush=True)
    return section
