"""The peers section's A/B knobs (issue 51, item 4): `MCP_BENCH_BASELINE` runs ours again under another
tree's PYTHONPATH as peers of the same rounds, `MCP_BENCH_PEERS` keeps the named peers only, and the
no-library floor also runs on ours' interpreter (the stack ours serves HTTP on)."""

from __future__ import annotations

import sys

import pytest

from benchmarks import bench_peers
from benchmarks.setup_env import Environment

ENV = Environment(official_python=sys.executable, mixed_python=None, ours_python=sys.executable, ours_in_mixed=False)


def test_the_floor_runs_on_ours_stack_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(bench_peers.BASELINE_ENV, raising=False)
    monkeypatch.delenv(bench_peers.PEERS_ENV, raising=False)
    peers = {peer.name: peer for peer in bench_peers.peers(ENV)}
    floor = peers[bench_peers.FLOOR_OURS_STACK]
    assert floor.http(5, "2025-11-25")[:2] == [sys.executable, str(bench_peers.PEERS_DIR / "floor_http_echo.py")]
    assert floor.side == "ours"
    assert "ours-base" not in peers and "ours-app-base" not in peers


def test_a_baseline_runs_ours_again_under_its_pythonpath(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(bench_peers.BASELINE_ENV, "/tmp/base/runtime:/tmp/base/generated")
    monkeypatch.setenv(bench_peers.PEERS_ENV, "ts-v1,ours,ours-base,ours-app-base")
    peers = {peer.name: peer for peer in bench_peers.peers(ENV)}
    assert set(peers) == {"ours", "ours-base", "ours-app-base"}  # no Node here: ts-v1 is not set up
    assert peers["ours-base"].stdio("2025-11-25") == peers["ours"].stdio("2025-11-25")
    env = peers["ours-base"].env(ENV)
    assert env["PYTHONPATH"] == "/tmp/base/runtime:/tmp/base/generated"
    assert "PYTHONPATH" not in peers["ours"].env(ENV) or peers["ours"].env(ENV)["PYTHONPATH"] != env["PYTHONPATH"]
