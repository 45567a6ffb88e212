"""Runs the selected measurements, prints the table, writes ``benchmarks/results/latest.json``."""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

from benchmarks import (
    bench_cli,
    bench_generator,
    bench_import,
    bench_load,
    bench_memory,
    bench_message,
    bench_modules,
    bench_peers,
    bench_roundtrip,
    bench_spawn,
    bench_tool_schemas,
)
from benchmarks.config import FULL, QUICK, RESULTS_DIR
from benchmarks.curves import run as curves
from benchmarks.procs import stop_all
from benchmarks.report import Row, render_table, write_json
from benchmarks.setup_env import prepare

SECTIONS = {
    "import": bench_import.run,
    "spawn": bench_spawn.run,
    "message": bench_message.run,
    "roundtrip": bench_roundtrip.run,
    "memory": bench_memory.run,
    "modules": bench_modules.run,
    "generator": bench_generator.run,
    "toolschemas": bench_tool_schemas.run,
    "load": bench_load.run,
    "cli": bench_cli.run,
    "curves": curves.section,  # benchmarks/curves: tables and plots, and the scaling rows
    "peers": bench_peers.run,  # every peer (TypeScript SDKs on Node included): its own tables
}


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and calls (about 2 minutes)")
    parser.add_argument("--only", default="", help=f"comma-separated subset of: {','.join(SECTIONS)} (default: all)")
    parser.add_argument("--output", type=Path, default=RESULTS_DIR / "latest.json", help="JSON output path")
    return parser.parse_args(argv)


def _section_number(row: Row) -> int:
    head = row.section.split(".", 1)[0]
    return int(head) if head.isdigit() else 99


def _on_signal(signum: int, frame: object) -> None:
    stop_all()
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    budget = QUICK if args.quick else FULL
    chosen = [s.strip() for s in args.only.split(",") if s.strip()] or list(SECTIONS)
    unknown = [s for s in chosen if s not in SECTIONS]
    selected = [s for s in SECTIONS if s in chosen]
    if unknown:
        print(f"unknown section(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _on_signal)
    started = time.perf_counter()
    rows: list[Row] = []
    notes: list[str] = []
    raw: dict[str, object] = {}
    try:
        env = prepare(
            need_mixed="message" in selected,
            need_fastmcp="curves" in selected or "peers" in selected,
            need_node="peers" in selected,
        )
        notes += env.notes
        for name in selected:
            print(f"[bench] {name} ({budget.name})", file=sys.stderr, flush=True)
            t0 = time.perf_counter()
            section = SECTIONS[name](env, budget)
            rows += section.rows
            notes += section.notes
            if section.raw:
                raw[name] = section.raw
            print(f"[bench] {name}: {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
    finally:
        stop_all()
    elapsed = time.perf_counter() - started
    rows.sort(key=_section_number)  # stable: keeps each section's own row order
    notes.append(
        "bytecode: PYTHONDONTWRITEBYTECODE=1 is set here, so every side was precompiled into its own "
        "PYTHONPYCACHEPREFIX (.cache/bench/pyc/<side>) before timing and timed runs read it"
    )
    header = (
        f"mcp-bindgen benchmarks ({budget.name}, {elapsed:.0f}s) - median [min-max] over repeated runs; "
        f"ratios are of medians measured in this run.\n"
        f"official = mcp {env.versions.get('mcp', '?')} + mcp-types {env.versions.get('mcp-types', '?')} "
        f"(pydantic {env.versions.get('pydantic', '?')}, pydantic-core {env.versions.get('pydantic-core', '?')}, "
        f"uvicorn {env.versions.get('uvicorn', '?')}); floor = JSON echo with no MCP library "
        "(stdio: stdlib json line echo; HTTP: bare-ASGI echo under the same uvicorn; message path: orjson)."
    )
    print(header)
    if rows:  # the peers section alone has only its own tables (below)
        print(render_table(rows))
    if notes:
        print("\nnotes:")
        for note in dict.fromkeys(notes):
            print(f"  - {note}")
    write_json(
        args.output,
        rows,
        {
            "mode": budget.name,
            "budget": budget.__dict__,
            "elapsed_s": elapsed,
            "versions": env.versions,
            "python": sys.version,
            "ours_available": {
                "processes": env.ours_python is not None,
                "message_path": env.ours_in_mixed,
            },
            "notes": list(dict.fromkeys(notes)),
            "raw": raw,
        },
    )
    for name in ("curves", "peers"):  # sections whose tables follow the main one
        tables = raw.get(name, {})
        if isinstance(tables, dict) and tables.get("markdown"):
            print("\n" + str(tables["markdown"]))
    print(f"\nJSON: {args.output}")
    return 0
