"""A fuzz run against a real stdio server at every protocol version stays answered and small (issue 28).

The probe: thousands of fuzzed messages per version to `examples/echo_server.py` (its stub at that
version, the client negotiating it): every method of the version's table and unknown ones, with
random params (nested values, wrong types, long strings), notifications, responses nobody asked
for, and frames that are no JSON-RPC at all. The oracle: every request with a usable id gets
exactly one answer, none is an internal error (-32603: bad input is the client's fault), the server
is alive at the end, and its RSS (VmRSS from /proc, not a timing) stays under 60 MiB; with the stdio
drain leak the same run reached 301-400 MiB.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_bindings.runtime.protocol import registry
from tests.support import REPO_ROOT
from tests.support.pipeline import PINNED_VERSIONS

ECHO_SERVER = REPO_ROOT / "examples" / "echo_server.py"
MESSAGES = 4000
RSS_BOUND_MIB = 60.0
INTERNAL_ERROR = -32603
META_KEYS = ("io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities")


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _value(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value: scalars of every type, long strings, nested objects and arrays."""
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, 2**31, -(2**63), 2**64, rng.randrange(-1000, 1000)])
    if kind == 3:
        return rng.choice([0.5, -1e308, 1e-300, 3.0])
    if kind == 4:
        return rng.choice(["", "x", "é✓", "\u0000", "a" * rng.choice([10, 1000, 65536])])
    if kind == 5:
        return rng.choice(["tools/call", "echo", "file:///x", "{}", "-32603"])
    if kind in (6, 7):
        keys = ["name", "arguments", "uri", "cursor", "_meta", "level", "text", "progressToken", "taskId", "x"]
        return {rng.choice(keys): _value(rng, depth + 1) for _ in range(rng.randrange(5))}
    return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]


def _meta(rng: random.Random, version: str) -> dict[str, Any]:
    meta: dict[str, Any] = {META_KEYS[0]: version, META_KEYS[1]: {}}
    if rng.random() < 0.2:
        meta[rng.choice(META_KEYS)] = _value(rng)
    return meta


def _params(rng: random.Random, method: str, version: str, stateless: bool) -> Any:
    shape = rng.random()
    if shape < 0.1:
        return _value(rng)  # anything, not even an object
    params: dict[str, Any] = {}
    if method == "tools/call" and shape < 0.6:
        params = {"name": rng.choice(["echo", "nope", ""]), "arguments": _value(rng)}
        if rng.random() < 0.5:
            params["arguments"] = {"text": _value(rng)}
    else:
        params = _value(rng, 1) if rng.random() < 0.5 else {}
        params = params if isinstance(params, dict) else {"x": params}
    if stateless and rng.random() < 0.8:
        params["_meta"] = _meta(rng, version)
    return params


def _frames(
    rng: random.Random, version: str, methods: list[str], notifications: list[str]
) -> tuple[list[bytes], set[Any]]:
    """The fuzzed frames, and the ids that must be answered (unique, usable ids of requests)."""
    stateless = registry.info(version).stateless
    frames: list[bytes] = []
    expected: set[Any] = set()
    for n in range(MESSAGES):
        roll = rng.random()
        if roll < 0.05:
            frames.append(rng.choice([b"{", b"[]", b"null", b"\xff\xfe", b'{"jsonrpc": "1.0"}', b"[1, 2]"]))
            continue
        if roll < 0.15:
            method = rng.choice(notifications)
            message: dict[str, Any] = {
                "jsonrpc": "2.0",
                "method": method,
                "params": _params(rng, method, version, stateless),
            }
        elif roll < 0.2:
            message = {"jsonrpc": "2.0", "id": f"r{n}", "result": _value(rng)}  # a response nobody asked for
        else:
            method = rng.choice([*methods, "nope/nothing", "initialize", "rpc.discover", ""])
            request_id = f"f{n}" if rng.random() < 0.7 else n
            message = {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": method,
                "params": _params(rng, method, version, stateless),
            }
            if rng.random() < 0.05:
                del message["params"]
            expected.add(request_id)
        frames.append(json.dumps(message).encode())
    return frames, expected


def _handshake(version: str) -> list[bytes]:
    if registry.info(version).stateless:
        return []
    init = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}
    return [
        json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": init}).encode(),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(),
    ]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads RSS from /proc")
@pytest.mark.parametrize("version", PINNED_VERSIONS)
def test_a_fuzz_run_is_answered_and_stays_small(version: str) -> None:
    tables = registry.protocol(version)
    methods = sorted(tables.client_requests)
    notifications = sorted(tables.client_notifications)
    frames, expected = _frames(random.Random(f"fuzz-{version}"), version, methods, notifications)
    proc = subprocess.Popen(
        [sys.executable, str(ECHO_SERVER), "--stub", version],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=REPO_ROOT,
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin = proc.stdin
    answers: dict[Any, int] = {}
    internal: list[Any] = []

    def read_all() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            answer = json.loads(line)
            if "id" in answer and ("result" in answer or "error" in answer):
                answers[answer["id"]] = answers.get(answer["id"], 0) + 1
                if answer.get("error", {}).get("code") == INTERNAL_ERROR:
                    internal.append(answer)

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    try:
        for frame in [*_handshake(version), *frames]:
            stdin.write(frame + b"\n")
        stdin.flush()
        deadline = time.monotonic() + 120  # a hang guard, not a timing
        while not expected <= answers.keys() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        rss = rss_mib(proc.pid)
        missing = expected - answers.keys()
        assert not missing, f"{len(missing)} requests unanswered, e.g. {sorted(map(str, missing))[:5]}"
        assert all(answers[i] == 1 for i in expected), "a request was answered twice"
        assert not internal, f"internal errors for fuzzed input: {internal[:3]}"
        assert rss < RSS_BOUND_MIB, f"RSS {rss:.1f} MiB after {MESSAGES} fuzzed messages at {version}"
        stdin.close()
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        reader.join(10)
