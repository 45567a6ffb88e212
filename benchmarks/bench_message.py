"""2. Message path: µs per message, in-process, for the corpus in ``corpus.py``.

Runs ``benchmarks.message_worker`` under the mixed venv's interpreter (the only
process where the official SDK and ours are imported together).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile

from benchmarks import ours
from benchmarks.config import REPO_ROOT, Budget, clean_env
from benchmarks.report import Row, Section, ratio_at_most
from benchmarks.setup_env import Environment
from benchmarks.stats import stat_or_none


def run(env: Environment, budget: Budget) -> Section:
    section = Section()
    if not env.mixed_python:
        section.notes.append("message path skipped: mixed venv unavailable")
        return section
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        argv = [env.mixed_python, "-m", "benchmarks.message_worker", out.name]
        if budget.name == "quick":
            argv.append("--quick")
        r = subprocess.run(
            argv,
            cwd=REPO_ROOT,
            env=clean_env(dict(ours.OURS_EXTRA_ENV)),
            capture_output=True,
            text=True,
            timeout=900,
        )
        if r.returncode != 0:
            section.notes.append(f"message worker failed: {r.stderr[-1500:]}")
            return section
        with open(out.name) as f:
            data = json.load(f)
    section.raw = data
    for key, err in data.get("errors", {}).items():
        section.notes.append(f"message path {key}: {err.strip().splitlines()[-1]}")
    for name, item in data["items"].items():
        checks = item.get("checks", {})
        if checks.get("ours_output_equals_official") is False:
            section.notes.append(f"message path {name}: ours' output differs from official's (as JSON)")
        section.rows.append(
            Row(
                "2. Message path (in-process, bytes -> validated -> bytes, 2025-11-25)",
                item["title"],
                "us/msg",
                {p: stat_or_none(item["samples_us"].get(p, []), "us/msg") for p in ("ours", "official", "floor")},
                target=ratio_at_most(1 / 3, 3),
                note=f"wire {item['wire_bytes']} bytes; checks {checks}",
            )
        )
    print("  message path done", file=sys.stderr, flush=True)
    return section
