"""`python -m benchmarks.curves --smoke`, end to end: every curve's table and plot are written, with a
row per point of the smoke budget (a small fixed input: `--quick` took ten minutes of the suite on a
loaded 2-core machine) and a figure for every peer at every point. Nothing about the
figures themselves is asserted (speed is measured in benchmarks/, never asserted in tests)."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.peers import contract_peers
from tests.support import REPO_ROOT
from tests.support.sdk import SDK_VENV, create_sdk_venv

pytestmark = [pytest.mark.slow, pytest.mark.interop]  # builds the FastMCP venv; drives the official SDK

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _smoke_points() -> dict[str, list[float]]:
    from benchmarks.curves.servers import SMOKE_CURVES as smoke

    inflight = [float(n) for n in smoke.inflight]
    return {
        "sessions": [float(n) for n in smoke.sessions],
        "tools": [float(n) for n in smoke.tools],
        "payload": [n / (1024 * 1024) for n in smoke.payloads],
        "inflight_stdio": inflight,
        "inflight_http": inflight,
        "workers": [float(n) for n in smoke.workers],
        "catalog": [float(n) for n in smoke.catalog],
    }


def _peers(key: str) -> set[str]:
    """The series a curve has: ours alone for workers; the catalog adds the two behind a search."""
    from benchmarks.curves.catalog import SEARCHING

    if key == "workers":
        return {"ours"}
    return {"ours", "official", "fastmcp"} | (set(SEARCHING.values()) if key == "catalog" else set())


@pytest.fixture(scope="module")
def curves_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("matplotlib", reason="the plots need the bench extra (pip install -e '.[bench]')")
    # The official SDK's and FastMCP's venvs of the other tests (same pins, built once under a lock)
    # instead of two more under .cache/bench/.
    problem = create_sdk_venv()
    if problem is not None:
        pytest.skip(f"the official SDK venv could not be created: {problem}")
    try:
        fastmcp = contract_peers.fastmcp()
    except contract_peers.Unavailable as exc:
        pytest.skip(f"FastMCP could not be installed: {exc}")
    out = tmp_path_factory.mktemp("curves")
    env = {**os.environ, "MCP_BENCH_OFFICIAL_VENV": str(SDK_VENV), "MCP_BENCH_FASTMCP_VENV": str(fastmcp)}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.curves", "--smoke", "--out", str(out)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "tables and plots:" in done.stdout
    return out


def test_every_curve_has_its_table_and_plot(curves_run: Path) -> None:
    expected = set(_smoke_points())
    if shutil.which("redis-server") is None:
        expected.discard("workers")  # the workers curve needs a private Redis; skipped without one
    for key in expected:
        assert (curves_run / f"{key}.png").read_bytes()[:8] == PNG_MAGIC, key
        table = (curves_run / f"{key}.md").read_text()
        assert table.startswith("#### "), key
    summary = (curves_run / "curves.md").read_text()
    for key in expected:
        assert f"]({key}.png)" in summary


def test_tables_have_a_row_per_point_and_every_peer(curves_run: Path) -> None:
    doc = json.loads((curves_run / "curves.json").read_text())
    for key, xs in _smoke_points().items():
        if key not in doc["curves"]:
            assert key == "workers" and shutil.which("redis-server") is None
            continue
        curve = doc["curves"][key]
        assert curve["xs"] == pytest.approx(xs), key
        rows = [line for line in (curves_run / f"{key}.md").read_text().splitlines() if line.startswith("| ")]
        # header, separator, one row per point (then the fits' table)
        assert len(rows) >= 2 + len(xs)
        first = next(iter(curve["metrics"].values()))
        assert set(first["series"]) == _peers(key), key
        for name, metric in curve["metrics"].items():
            for peer, points in metric["series"].items():
                assert len(points) == len(xs), (key, name, peer)
                assert all(p is not None and math.isfinite(p["median"]) for p in points), (key, name, peer)


def test_linear_fits_are_reported(curves_run: Path) -> None:
    doc = json.loads((curves_run / "curves.json").read_text())
    fits = doc["curves"]["sessions"]["fits"]
    for peer in ("ours", "official", "fastmcp"):
        fit = fits[f"RSS / {peer}"]
        assert fit["verdict"] in {"flat", "linear", "sub-linear", "super-linear", "falling"}
    assert "KiB per session" in (curves_run / "sessions.md").read_text()
