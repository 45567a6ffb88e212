"""What middleware costs on the request path: `tools/call echo` (examples/app_echo.py) with no
middleware, with one pass-through middleware, and with `Timing()` (its log line below the level
shown), as ratios to the app without middleware, which is also measured against itself (the noise
floor: an app without middleware puts nothing on the dispatch seam, so it pays nothing).

``.venv/bin/python -m benchmarks.bench_middleware [--quick] [--output PATH]`` (cwd = repo root).
Samples alternate between the variants (CPU time per call, in process, as benchmarks/bench_app.py
measures the request path); the figures are medians over samples. Writes JSON (default
``benchmarks/results/middleware.json``).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.bench_app import VERSIONS, _calibrate, _load, _request_path
from benchmarks.config import RESULTS_DIR


def _variants(version: str) -> dict[str, Callable[[], bytes]]:
    from mcp_bindings.runtime.middleware import Call, Next, Timing

    async def passthrough(call: Call, call_next: Next) -> Any:
        return await call_next(call)

    def build(*middleware: Any) -> Callable[[], bytes]:
        app = _load("app_echo").make_app(version)
        for each in middleware:
            app.middleware(each)
        return _request_path(app.server, version)

    return {
        "none": build(),
        "none (again)": build(),
        "pass-through": build(passthrough),
        "Timing": build(Timing()),
    }


def measure(version: str, samples: int, seconds: float) -> dict[str, Any]:
    variants = _variants(version)
    answers = {json.loads(fn())["result"]["content"][0]["text"] for fn in variants.values()}
    assert answers == {"hello"}, answers
    number = _calibrate(variants["none"], seconds)
    times: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    for i in range(samples):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            fn = variants[name]
            gc.collect()
            start = time.process_time()
            for _ in range(number):
                fn()
            times[name].append((time.process_time() - start) / number * 1e6)
    base = statistics.median(times["none"])
    return {name: {"us": statistics.median(ts), "ratio": statistics.median(ts) / base} for name, ts in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--output", default=str(RESULTS_DIR / "middleware.json"))
    args = parser.parse_args()
    samples, seconds = (12, 0.05) if args.quick else (24, 0.1)
    report: dict[str, Any] = {
        "python": sys.version,
        "request_path": {v: measure(v, samples, seconds) for v in VERSIONS},
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(report, indent=2))
    print("request path, server CPU per tools/call (medians), ratio to the app without middleware")
    for version, rows in report["request_path"].items():
        for name, row in rows.items():
            print(f"{version:<12} {name:<14} {row['us']:>8.1f}us {row['ratio']:>7.3f}x")
    print(f"\nwritten to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
