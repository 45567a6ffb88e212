"""Handshake sessions on several workers: what sharing them through Redis costs.

    .venv/bin/python -m benchmarks.bench_sessions [--calls 400] [--rounds 40] [--json out.json]

Everything runs on 127.0.0.1: a private `redis-server`, the app of
`tests/peers/scaleout_sessions_app.py` under `uvicorn --workers N --factory`, and one client
(httpx, sequential requests, so the figures are latencies, not throughput).

* **per request**: a 2025-11-25 session's `tools/call whoami` over one kept-alive connection, on 1
  worker in memory vs 1 worker with Redis (each request of a session reads its record: one
  `GETEX`); the overhead is the difference of the median times.
* **forwarded response**: with 2 workers and Redis, the `ask` tool sends `elicitation/create` on its
  POST stream; the client answers it with a POST on a connection held by the same worker, or by the
  other one (which forwards the response over Redis to the waiting worker). Measured from sending
  the response POST to receiving the tool's result on the stream: the extra latency is the
  difference of the medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks.bench_workers import HOST, launch_workers, start_redis, stop

ROOT = Path(__file__).resolve().parent.parent
ACCEPT = "application/json, text/event-stream"
VERSION = "2025-11-25"


def start(workers: int, redis_url: str | None, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    process, port = launch_workers(
        "tests.peers.scaleout_sessions_app", workers, redis_url, log, "--log-level", "warning"
    )
    seen: set[str] = set()
    deadline = time.monotonic() + 60
    while len(seen) < workers:
        if process.poll() is not None or time.monotonic() > deadline:
            stop(process)
            sys.exit(f"the workers did not start: {log.read_text()[-2000:]}")
        try:
            response = httpx.get(f"http://{HOST}:{port}/readyz", timeout=2)
            if response.status_code == 200:
                seen.add(response.headers["x-worker"])
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    return process, port


def rpc(request_id: Any, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def open_session(client: httpx.Client) -> dict[str, str]:
    init = {
        "protocolVersion": VERSION,
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "b", "version": "0"},
    }
    response = client.post("/mcp", json=rpc(0, "initialize", init), headers={"Accept": ACCEPT})
    head = {"Accept": ACCEPT, "MCP-Protocol-Version": VERSION, "Mcp-Session-Id": response.headers["mcp-session-id"]}
    client.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=head)
    return head


def per_request(port: int, calls: int) -> float:
    """Median seconds of a session's tools/call over one kept-alive connection."""
    with httpx.Client(base_url=f"http://{HOST}:{port}", timeout=10) as client:
        head = open_session(client)
        times: list[float] = []
        for n in range(calls):
            started = time.perf_counter()
            response = client.post("/mcp", json=rpc(n + 1, "tools/call", {"name": "whoami"}), headers=head)
            times.append(time.perf_counter() - started)
            assert response.status_code == 200, response.text
        return statistics.median(times[calls // 10 :])  # the first tenth warms up


def pinned(port: int, worker: str | None, other_than: str | None = None) -> tuple[httpx.Client, str]:
    """A client whose one kept-alive connection is held by `worker` (or by any other than `other_than`)."""
    for _ in range(200):
        client = httpx.Client(
            base_url=f"http://{HOST}:{port}",
            timeout=10,
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
        )
        got = client.get("/readyz").headers["x-worker"]
        if (worker is None or got == worker) and got != other_than:
            return client, got
        client.close()
    sys.exit("200 fresh connections did not reach the worker wanted")


def forwarded(port: int, rounds: int) -> tuple[float, float]:
    """Median seconds from the response POST to the tool's result: answered on the waiting worker,
    and through the other one."""
    stream_client, waiting = pinned(port, None)
    same, _ = pinned(port, waiting)
    other, _ = pinned(port, None, other_than=waiting)
    head = open_session(stream_client)
    times: dict[bool, list[float]] = {False: [], True: []}
    try:
        for n in range(rounds * 2):
            through_other = n % 2 == 1
            answer_on = other if through_other else same
            body = rpc(1000 + n, "tools/call", {"name": "ask"})
            with stream_client.stream("POST", "/mcp", json=body, headers=head) as stream:
                started = 0.0
                for line in stream.iter_lines():
                    if not line.startswith("data:") or not line[5:].strip():
                        continue
                    message = json.loads(line[5:])
                    if message.get("method") == "elicitation/create":
                        reply = {
                            "jsonrpc": "2.0",
                            "id": message["id"],
                            "result": {"action": "accept", "content": {"name": "x"}},
                        }
                        started = time.perf_counter()
                        answered = answer_on.post("/mcp", json=reply, headers=head)
                        assert answered.status_code == 202, answered.text
                    elif message.get("id") == 1000 + n:
                        times[through_other].append(time.perf_counter() - started)
                        break
    finally:
        for client in (stream_client, same, other):
            client.close()
    return statistics.median(times[False][2:]), statistics.median(times[True][2:])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as directory:
        log = Path(directory) / "uvicorn.log"
        redis, redis_url = start_redis(directory)
        try:
            for name, url in (("memory", None), ("redis", redis_url)):
                process, port = start(1, url, log)
                try:
                    results[f"per_request_{name}_ms"] = per_request(port, args.calls) * 1000
                finally:
                    stop(process)
            process, port = start(2, redis_url, log)
            try:
                same, other = forwarded(port, args.rounds)
                results["response_same_worker_ms"] = same * 1000
                results["response_forwarded_ms"] = other * 1000
            finally:
                stop(process)
        finally:
            stop(redis)
    results["per_request_overhead_ms"] = results["per_request_redis_ms"] - results["per_request_memory_ms"]
    results["forwarding_overhead_ms"] = results["response_forwarded_ms"] - results["response_same_worker_ms"]
    for key, value in results.items():
        print(f"{key:28} {value:8.3f}")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
