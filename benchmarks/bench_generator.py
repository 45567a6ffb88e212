"""5. Generator: wall time of ``mcp-bindgen generate`` and ``mcp-bindgen check`` (cwd = repo root).

Commands come from ``benchmarks.ours.ours_generator_commands`` (``generate``
writes to a scratch ``--out`` under ``.cache/bench``, never into ``generated/``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import ours
from benchmarks.config import CACHE_DIR, REPO_ROOT, Budget, clean_env
from benchmarks.report import Row, Section, absolute_at_most
from benchmarks.setup_env import Environment
from benchmarks.stats import stat_or_none


def _clear_scratch(argv: list[str]) -> None:
    """Empty the scratch --out dir if it lives under .cache/bench (so every run generates from scratch)."""
    if "--out" in argv:
        out = Path(argv[argv.index("--out") + 1]).resolve()
        if CACHE_DIR.resolve() in out.parents and out.exists():
            shutil.rmtree(out)


def run(env: Environment, budget: Budget) -> Section:
    section = Section()
    title = "5. Generator"
    commands = ours.ours_generator_commands()
    if not commands:
        section.notes.append("generator skipped: mcp-bindgen CLI not installed")
    for name in ("generate", "check"):
        samples: list[float] = []
        argv = (commands or {}).get(name)
        if argv:
            if name == "generate":
                _clear_scratch(argv)
            for _ in range(budget.gen_reps):
                start = time.perf_counter()
                try:
                    r = subprocess.run(
                        argv,
                        cwd=REPO_ROOT,
                        env=clean_env(dict(ours.OURS_EXTRA_ENV)),
                        capture_output=True,
                        text=True,
                        timeout=600,
                    )
                except subprocess.TimeoutExpired:
                    section.notes.append(f"mcp-bindgen {name}: timed out after 600 s")
                    break
                elapsed = time.perf_counter() - start
                if r.returncode != 0:
                    tail = (r.stderr.strip() or r.stdout.strip())[-300:]
                    section.notes.append(f"mcp-bindgen {name} exited {r.returncode} (timed anyway): {tail}")
                    if name != "check":  # check exits non-zero on a diff, which is still a full run
                        break
                samples.append(elapsed)
            print(f"  mcp-bindgen {name} done", file=sys.stderr, flush=True)
        section.rows.append(
            Row(
                title,
                f"mcp-bindgen {name} wall time",
                "s",
                {"ours": stat_or_none(samples, "s"), "official": None, "floor": None},
                target=absolute_at_most(15, "s"),
            )
        )
    return section
