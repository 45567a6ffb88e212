"""Request builders and timing loops shared by the curves (stdio and HTTP, through ``driver.py``)."""

from __future__ import annotations

import json
import time
from typing import Any

from benchmarks.config import PROTOCOL_MODERN
from benchmarks.driver import DriverError, HttpClient, StdioClient, envelope
from benchmarks.stats import Stat, stat_or_none

MIB = 1024 * 1024


def request(req_id: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": req_id, "method": method}
    if params is not None:
        body["params"] = params
    return json.dumps(body, separators=(",", ":")).encode()


def call(req_id: int, tool: str, arguments: dict[str, Any], version: str | None = None) -> bytes:
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if version == PROTOCOL_MODERN:
        params["_meta"] = envelope(version)
    return request(req_id, "tools/call", params)


def result_of(message: dict[str, Any], what: str) -> dict[str, Any]:
    if "result" not in message:
        raise DriverError(f"{what} failed: {str(message)[:300]}")
    return message["result"]


class Ids:
    """Request ids, never reused within a process (each peer's server sees increasing ids)."""

    def __init__(self) -> None:
        self._next = 100

    def __call__(self) -> int:
        self._next += 1
        return self._next


def timed_stdio(client: StdioClient, line: bytes, req_id: int, what: str) -> tuple[float, dict[str, Any]]:
    """(seconds, result) of one request over a stdio pipe."""
    started = time.perf_counter()
    message = client.request(line, req_id)
    elapsed = time.perf_counter() - started
    return elapsed, result_of(message, what)


async def timed_http(http: HttpClient, body: bytes, headers: bytes, what: str) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    status, _, data = await http.post(body, headers)
    elapsed = time.perf_counter() - started
    if status != 200:
        raise DriverError(f"{what}: HTTP {status}: {data[:300]!r}")
    return elapsed, result_of(json.loads(data), what)


def ms_stat(seconds: list[float]) -> Stat | None:
    return stat_or_none([s * 1000 for s in seconds], "ms")


def rotated(names: list[str], rep: int) -> list[str]:
    k = rep % len(names) if names else 0
    return names[k:] + names[:k]
