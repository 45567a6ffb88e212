"""1a. Start-up: cold import of one protocol version's full surface, in a fresh process each time.

Two figures per run: the import itself (``time.perf_counter`` around the
``import`` statement inside the fresh process) and the process wall time of
``python -c '<that import>'`` seen from outside. The floor is a bare
interpreter (``python -c pass``). Both sides read precompiled bytecode from
their own ``PYTHONPYCACHEPREFIX`` tree (see ``setup_env``).
"""

from __future__ import annotations

import subprocess
import sys
import time

from benchmarks import ours
from benchmarks.bench_spawn import bytecode_note
from benchmarks.config import OFFICIAL_IMPORT_FULL, OFFICIAL_IMPORT_TYPES, Budget
from benchmarks.report import Row, Section, Target, ratio_at_most
from benchmarks.setup_env import Environment
from benchmarks.stats import stat_or_none

_CODE = "import time\nt=time.perf_counter()\n{imports}\nprint(time.perf_counter()-t)"


def _once(python: str, modules: tuple[str, ...], env: dict[str, str]) -> tuple[float, float]:
    code = _CODE.format(imports=f"import {', '.join(modules)}" if modules else "pass")
    start = time.perf_counter()
    r = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - start
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        raise RuntimeError(f"import {', '.join(modules)} failed: {last}")
    return float(r.stdout.strip().splitlines()[-1]) * 1e3, wall * 1e3


def run(env: Environment, budget: Budget) -> Section:
    section = Section()
    cases: dict[str, dict[str, tuple[str, tuple[str, ...], str]]] = {
        "full": {"official": (env.official_python, OFFICIAL_IMPORT_FULL, "official")},
        "types": {"official": (env.official_python, OFFICIAL_IMPORT_TYPES, "official")},
        "bare": {"floor": (env.official_python, (), "floor")},
    }
    if env.ours_python:
        cases["full"]["ours"] = (env.ours_python, ours.OURS_IMPORT_FULL, "ours")
        cases["types"]["ours"] = (env.ours_python, ours.OURS_IMPORT_TYPES, "ours")

    imports: dict[tuple[str, str], list[float]] = {}
    walls: dict[tuple[str, str], list[float]] = {}
    runs = [(case, peer, spec) for case, peers in cases.items() for peer, spec in peers.items()]
    failed: set[tuple[str, str]] = set()
    # Warm-up: write bytecode for everything imported (stdlib included), then one warm read.
    for case, peer, (python, modules, side) in runs:
        try:
            _once(python, modules, env.side_env(side, write=True))
            _once(python, modules, env.side_env(side))
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            failed.add((case, peer))
            section.notes.append(f"import {case}/{peer}: {exc}")
    if env.ours_python and ("full", "ours") not in failed:
        section.notes.append(f"import: {bytecode_note(env.ours_python, env.side_env('ours'))}")
    for rep in range(budget.import_reps):
        order = runs[rep % len(runs) :] + runs[: rep % len(runs)]  # rotate so no peer always goes first
        for case, peer, (python, modules, side) in order:
            if (case, peer) in failed:
                continue
            imp, wall = _once(python, modules, env.side_env(side))
            imports.setdefault((case, peer), []).append(imp)
            walls.setdefault((case, peer), []).append(wall)
        print(f"  import rep {rep + 1}/{budget.import_reps}", file=sys.stderr, flush=True)

    def st(d: dict, case: str, peer: str):  # noqa: ANN001, ANN202
        return stat_or_none(d.get((case, peer), []), "ms")

    title = "1. Start-up (bytecode precompiled for both sides)"
    section.rows += [
        Row(
            title,
            "cold import, full surface",
            "ms",
            {
                "ours": st(imports, "full", "ours"),
                "official": st(imports, "full", "official"),
                "floor": None,
            },
            target=ratio_at_most(1 / 3),
            note=f"ours: {', '.join(ours.OURS_IMPORT_FULL)}; official: {', '.join(OFFICIAL_IMPORT_FULL)}",
        ),
        Row(
            title,
            "cold import, types + method maps only",
            "ms",
            {
                "ours": st(imports, "types", "ours"),
                "official": st(imports, "types", "official"),
                "floor": None,
            },
            target=ratio_at_most(1 / 3),
            note=f"ours: {', '.join(ours.OURS_IMPORT_TYPES)}; official: {', '.join(OFFICIAL_IMPORT_TYPES)}",
        ),
        Row(
            title,
            "process wall, python -c 'import full surface'",
            "ms",
            {
                "ours": st(walls, "full", "ours"),
                "official": st(walls, "full", "official"),
                "floor": st(walls, "bare", "floor"),
            },
            better="info",
            target=Target("(info; floor = bare python -c pass)"),
        ),
    ]
    return section
