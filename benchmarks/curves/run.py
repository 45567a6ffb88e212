"""Runs the scaling curves, writes each one's table (``<key>.md``), plot (``<key>.png``) and all of
them as ``curves.md`` and ``curves.json``; as a section of ``python -m benchmarks`` it also hands back
the summary rows for the main table (the #36 scaling targets)."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.config import RESULTS_DIR, Budget
from benchmarks.curves import catalog, inflight, payload, sessions, tools, workers
from benchmarks.curves.model import Curve
from benchmarks.curves.render import markdown, plot
from benchmarks.curves.servers import FULL_CURVES, QUICK_CURVES, SMOKE_CURVES, CurveBudget, peers
from benchmarks.curves.summary import rows_of
from benchmarks.procs import stop_all
from benchmarks.report import Section, machine_info
from benchmarks.setup_env import Environment, prepare

OUT_DIR = RESULTS_DIR / "curves"
CurveRun = Callable[[Environment, CurveBudget, list[str]], "Curve | list[Curve] | None"]
CURVES: dict[str, CurveRun] = {
    "sessions": sessions.run,
    "tools": tools.run,
    "payload": payload.run,
    "inflight": inflight.run,
    "workers": workers.run,
    "catalog": catalog.run,
}


def measure(env: Environment, budget: CurveBudget, chosen: list[str], out_dir: Path) -> tuple[list[Curve], str]:
    """Run the chosen curves; write their files under `out_dir`; return them and the markdown of all."""
    names = peers(env)
    curves: list[Curve] = []
    for key in chosen:
        print(f"[curves] {key} ({budget.name}; peers: {', '.join(names)})", file=sys.stderr, flush=True)
        started = time.perf_counter()
        got = CURVES[key](env, budget, names)
        curves += got if isinstance(got, list) else [got] if got is not None else []
        print(f"[curves] {key}: {time.perf_counter() - started:.0f}s", file=sys.stderr, flush=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = []
    for curve in curves:
        text = markdown(curve)
        image = plot(curve, out_dir / f"{curve.key}.png")
        (out_dir / f"{curve.key}.md").write_text(text)
        parts.append(f"{text}\n![{curve.title}]({image.name})\n")
    machine = machine_info()
    header = (
        f"Scaling curves ({budget.name}), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{machine.get('nproc')} CPUs ({machine.get('cpu', '?')}), load average at the end "
        f"{' '.join(machine.get('loadavg_at_end', []))}; official = mcp {env.versions.get('mcp', '?')}, "
        "fastmcp = fastmcp 4.2.3. Figures are median [min-max].\n"
    )
    text = header + "\n" + "\n".join(parts)
    (out_dir / "curves.md").write_text(text)
    doc = {
        "budget": budget.__dict__,
        "machine": machine,
        "versions": env.versions,
        "curves": {c.key: c.to_json() for c in curves},
    }
    (out_dir / "curves.json").write_text(json.dumps(doc, indent=1, default=str))
    return curves, text


def section(env: Environment, budget: Budget) -> Section:
    """`python -m benchmarks`'s `curves` section: every curve, quick or full as the run is."""
    curve_budget = QUICK_CURVES if budget.name == "quick" else FULL_CURVES
    curves, text = measure(env, curve_budget, list(CURVES), OUT_DIR)
    rows = rows_of(curves)
    return Section(
        rows=rows,
        notes=[f"scaling curves: tables and plots in {OUT_DIR}"] + [f"{r.metric}: {r.note}" for r in rows if r.note],
        raw={"markdown": text, "curves": {c.key: c.to_json() for c in curves}},
    )


def _on_signal(signum: int, frame: object) -> None:
    stop_all()
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.curves", description=(__doc__ or "").splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="smaller maxima (about 3 minutes)")
    size.add_argument("--smoke", action="store_true", help="a tiny fixed input, every curve and file (the tests')")
    parser.add_argument("--only", default="", help=f"comma-separated subset of: {','.join(CURVES)} (default: all)")
    parser.add_argument("--out", type=Path, default=OUT_DIR, help=f"where the tables and plots go (default: {OUT_DIR})")
    args = parser.parse_args(argv)
    chosen = [c.strip() for c in args.only.split(",") if c.strip()] or list(CURVES)
    unknown = [c for c in chosen if c not in CURVES]
    if unknown:
        print(f"unknown curve(s): {', '.join(unknown)}; choose from {', '.join(CURVES)}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _on_signal)
    try:
        env = prepare(need_mixed=False, need_fastmcp=True)
        budget = SMOKE_CURVES if args.smoke else QUICK_CURVES if args.quick else FULL_CURVES
        _, text = measure(env, budget, [c for c in CURVES if c in chosen], args.out)
    finally:
        stop_all()
    print(text)
    print(f"tables and plots: {args.out}")
    return 0
