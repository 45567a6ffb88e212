"""Message-path microbenchmark worker. Runs inside the mixed venv (official SDK + ours + orjson).

``python -m benchmarks.message_worker OUT.json [--quick]`` (cwd = repo root).
Times every implementation on every corpus item in one process, interleaving
implementations sample by sample so drift hits all of them alike, and writes
µs-per-message samples plus an output cross-check to OUT.json.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from benchmarks.config import FULL, QUICK
from benchmarks.corpus import build_corpus


def _calibrate(fn: Callable[[], bytes], seconds: float) -> int:
    """Loops per sample so one sample lasts about ``seconds`` (bounded: 1..1_000_000)."""
    for _ in range(3):  # warm: lazily built validators, caches, allocator
        fn()
    number = 1
    for _ in range(25):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds * 0.5 or number >= 1_000_000:
            return max(1, min(1_000_000, int(number * seconds / max(elapsed, 1e-9))))
        number *= 4
    return number


def _sample(fn: Callable[[], bytes], number: int) -> float:
    gc.collect()
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number * 1e6


def _normalise(data: bytes) -> Any:
    return json.loads(data)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    budget = QUICK if args.quick else FULL
    corpus = build_corpus()
    report: dict[str, Any] = {
        "python": sys.version,
        "items": {},
        "errors": {},
        "budget": budget.name,
    }

    impls: dict[str, dict[str, Callable[[], bytes]]] = {}
    from benchmarks.message_impls import floor_message_path, official_message_path

    impls["floor"] = floor_message_path(corpus)
    impls["official"] = official_message_path(corpus)
    try:
        from benchmarks.ours import ours_message_path

        ours = ours_message_path(corpus)
        if ours:
            impls["ours"] = dict(ours)
    except Exception:  # noqa: BLE001 - report, keep measuring the others
        report["errors"]["ours"] = traceback.format_exc()

    try:
        from importlib.metadata import version

        import mcp  # noqa: F401  # pyright: ignore[reportMissingImports] - availability probe: the SDK is only in the mixed venv

        report["versions"] = {
            name: version(name) for name in ("mcp", "mcp-types", "pydantic", "pydantic-core", "orjson")
        }
    except Exception:  # noqa: BLE001
        pass

    for item in corpus:
        entry: dict[str, Any] = {
            "title": item.title,
            "wire_bytes": len(item.wire),
            "samples_us": {},
            "checks": {},
        }
        runnable: dict[str, tuple[Callable[[], bytes], int]] = {}
        outputs: dict[str, Any] = {}
        for peer, fns in impls.items():
            fn = fns.get(item.name)
            if fn is None:
                continue
            try:
                out = fn()
                if not isinstance(out, bytes | bytearray | memoryview) or not bytes(out).endswith(b"\n"):
                    raise TypeError("must return bytes ending in b'\\n'")
                outputs[peer] = _normalise(bytes(out))
                runnable[peer] = (fn, _calibrate(fn, budget.msg_sample_seconds))
            except Exception:  # noqa: BLE001
                report["errors"][f"{peer}:{item.name}"] = traceback.format_exc()
        for peer in runnable:
            entry["samples_us"][peer] = []
        for _ in range(budget.msg_samples):
            for peer, (fn, number) in runnable.items():
                entry["samples_us"][peer].append(_sample(fn, number))
        entry["loops"] = {peer: number for peer, (_, number) in runnable.items()}
        if "official" in outputs:
            for peer in ("ours", "floor"):
                if peer in outputs:
                    entry["checks"][f"{peer}_output_equals_official"] = outputs[peer] == outputs["official"]
        report["items"][item.name] = entry

    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
