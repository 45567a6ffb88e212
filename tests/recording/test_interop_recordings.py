"""Sessions of servers nobody here wrote (npm `server-everything`, PyPI `mcp-server-time`), driven by
the official Python SDK client (tests/peers/sdk_everything_client.py) and the TypeScript SDK client
(tests/peers/ts_everything_client.mjs) through
`mcp-bindgen record`, then replayed to the same client by `mcp-bindgen replay`: every step answers
the same, none fails. The recorded client side replayed to the live server matches too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_bindgen.cli import main
from tests.peers import contract_peers
from tests.peers.harness import PEERS
from tests.support import REPO_ROOT
from tests.support.sdk import TS_SDK, node_with_ts_sdk

pytestmark = [pytest.mark.slow, pytest.mark.interop]
BINDGEN = [sys.executable, "-m", "mcp_bindgen.cli"]


def sdk_report(sdk_python: str, server: list[str], scenario: str) -> dict[str, Any]:
    argv = [sdk_python, str(PEERS / "sdk_everything_client.py"), "--scenario", scenario, "--", *server]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    report: dict[str, Any] = json.loads(done.stdout)
    failed = {k: v for k, v in report.items() if isinstance(v, dict) and "error" in v}
    assert not failed, failed
    return report


@pytest.fixture(scope="module")
def peers() -> dict[str, list[str]]:
    try:
        return {
            "everything": contract_peers.everything_server(),
            "time": [str(contract_peers.python_peers() / "bin" / "mcp-server-time")],
        }
    except contract_peers.Unavailable as exc:
        pytest.skip(f"a pinned peer server could not be installed: {exc}")


@pytest.mark.parametrize("scenario", ["everything", "time"])
def test_sdk_client_replays_a_recorded_third_party_server(
    sdk_python: str, peers: dict[str, list[str]], scenario: str, tmp_path: Path
) -> None:
    session = tmp_path / f"{scenario}.mcpsession"
    live = sdk_report(sdk_python, [*BINDGEN, "record", "-o", str(session), "--", *peers[scenario]], scenario)
    replayed = sdk_report(sdk_python, [*BINDGEN, "replay", str(session)], scenario)
    assert replayed == live
    if scenario == "everything":
        assert live["sum"]["content"][0]["text"] == "The sum of 2 and 40 is 42."
        assert live["progress"] == [[1.0, 3.0], [2.0, 3.0], [3.0, 3.0]]  # progress replayed with the new token
    else:
        assert live["bad_zone"]["isError"] is True
    # The client side, replayed to the live server, finds the same answers (the time of day aside).
    ignore = (
        ["--ignore-result", "result.content", "--ignore-result", "result.structuredContent"]
        if scenario == "time"
        else []
    )
    assert main(["replay-client", str(session), *ignore, "--from", *peers[scenario]]) == 0


def test_typescript_sdk_client_replays_a_recorded_server(peers: dict[str, list[str]], tmp_path: Path) -> None:
    node = node_with_ts_sdk()

    def ts_report(server: list[str]) -> dict[str, Any]:
        argv = [node, str(PEERS / "ts_everything_client.mjs"), str(TS_SDK), *server]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
        assert done.returncode == 0, done.stderr[-2000:]
        report: dict[str, Any] = json.loads(done.stdout)
        failed = {k: v for k, v in report.items() if isinstance(v, dict) and "error" in v}
        assert not failed, failed
        return report

    session = tmp_path / "ts.mcpsession"
    live = ts_report([*BINDGEN, "record", "-o", str(session), "--", *peers["everything"]])
    assert live["sum"]["content"][0]["text"] == "The sum of 20 and 22 is 42."
    assert live["progress"][:1] == [[1, 2]]  # (the SDK may drop the last one, which comes with the result)
    # The SDK handles notifications a turn later than answers: progress read together with the answer
    # is dropped, live as replayed (the last step's comes a moment before the answer). With the recorded
    # timing the first step's arrives, as live, well before it.
    replayed = ts_report([*BINDGEN, "replay", str(session), "--timing", "preserved"])
    assert replayed.pop("progress")[:1] == live.pop("progress")[:1] == [[1, 2]]
    assert replayed == live
