"""What the HTTP server keeps in memory is bounded and given back (issue 22, item 3).

* The SSE replay log (`http_resume.EventLog`, one per resumable session; `ReplayStore` over all of
  them) is bounded by events and bytes per session, bytes overall and age; the oldest events go
  first; a resumption past them is answered 410; the log is released with its session.
* A legacy `/sse` client that stops reading is dropped and its connection closed once what waits
  for it passes `legacy_queue_bytes` (logged once); its memory is given back.
* A legacy session belongs to the principal that opened it.

Memory figures are RSS of a server in a subprocess (`benchmarks/load_server.py`, VmRSS from
/proc/<pid>/status), asserted only as generous bounds: a heavy session (150 results of 1 MiB, each
streamed and logged) returns within 40 MB of idle once deleted; a legacy client that reads nothing
while 1 MiB results are posted for it costs under 60 MB at its peak and is released within 40 MB of
idle once it is dropped. Before these bounds the first run pinned about 155 MB until DELETE (and
75 MB stayed in the heap after it), and the legacy one grew without limit (idle + 203 MB after 200
results, all of it kept after the client left). After 64 clients of the benchmark's mixed load and
every session deleted, the server is back within 12 MB of its idle figure and a second round adds
under 2 MB; what the runtime itself kept after a load (pydantic-core's string cache filled by
result checks, the replay store's shells of dropped events, dicts emptied but kept at their peak
size) is checked directly. Every
exchange runs under a deadline, every server is stopped when its test ends, and each test checks
that the server answers a normal request afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import socket
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from benchmarks import bench_load
from benchmarks.load_server import LoadServer
from benchmarks.stdio_memory import HttpEchoProbe
from mcp_bindings.runtime.auth.resource_server import AccessToken
from mcp_bindings.runtime.http.app import Deadlines, create_app
from mcp_bindings.runtime.http.fairness import PerClient
from mcp_bindings.runtime.http.resume import EVENT_OVERHEAD, EventLog, ReplayLimits, ReplayStore
from tests.support import REPO_ROOT
from tests.support.http import ACCEPT, HANDSHAKE, STATELESS, open_session, rpc, serve_in_thread, sse_messages
from tests.support.memory import growth, needs_proc

pytestmark = pytest.mark.anyio


LOAD_SERVER = REPO_ROOT / "benchmarks" / "load_server.py"
DEADLINE = 60  # seconds per test
MIB = 1024 * 1024
IDLE_MARGIN_MB = 40  # RSS after release, above idle
LOAD_MARGIN_MB = 12  # RSS after the 64-client load and DELETE, above the idle server that served one session
LOAD_ROUND_GROWTH_MB = 2  # a later round of the same load may add at most this (no state kept per session)
# Rounds of that load, at most: on a loaded machine the second round's higher concurrency can lift the
# allocator's high-water mark once (seen: +7.9 MB in the suite's timed run beside eight busy agents,
# then nothing); state kept per session grows every round instead, so the test runs rounds until one
# adds under LOAD_ROUND_GROWTH_MB and fails if none of them does.
LOAD_ROUNDS = 4
LEGACY_PEAK_MB = 60  # RSS while a legacy client reads nothing, above idle (queue bound 8 MiB)


# -- a server in a subprocess, and its RSS --------------------------------------------------------


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def settled_rss(pid: int, target: float, seconds: float = 5.0) -> float:
    """RSS once it is at or under `target`, or after `seconds` (memory is given back asynchronously)."""
    deadline = time.monotonic() + seconds
    while True:
        now = rss_mb(pid)
        if now <= target or time.monotonic() > deadline:
            return now
        time.sleep(0.1)


@contextlib.contextmanager
def load_server(tmp_path: Path, *args: str) -> Iterator[tuple[subprocess.Popen[bytes], str, Path]]:
    """benchmarks/load_server.py on port 0 (it binds and says which port): (process, base URL, its stderr log)."""
    log = tmp_path / "server.log"
    with open(log, "wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, str(LOAD_SERVER), "0", *args],
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        line = proc.stdout.readline() if ready else b""
        assert line.startswith(b"READY"), log.read_text()
        yield proc, f"http://127.0.0.1:{int(line.split()[2])}", log
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
            proc.wait(5)
        if proc.stdout is not None:
            proc.stdout.close()


def blob_call(request_id: int, size: int, *, progress: bool = True) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "blob", "arguments": {"size": size, "progress": progress}}
    if progress:
        params["_meta"] = {"progressToken": f"p{request_id}"}
    return rpc(request_id, "tools/call", params)


def sse_events(body: bytes) -> list[dict[str, str]]:
    """The events of a whole SSE body: {"id": ..., "data": ...} (fields absent when not sent)."""
    events = []
    for block in body.decode().split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            name, _, value = line.partition(":")
            fields[name] = fields.get(name, "") + value.removeprefix(" ")
        if fields:
            events.append(fields)
    return events


def answers_normally(url: str) -> None:
    """A new session on `url` (a /mcp endpoint) answers a tools/call."""
    with httpx.Client(timeout=10) as client:
        init = rpc(
            1,
            "initialize",
            {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        )
        reply = client.post(url, json=init, headers=ACCEPT)
        assert reply.status_code == 200, reply.text
        session = {**ACCEPT, "Mcp-Session-Id": reply.headers["mcp-session-id"], "MCP-Protocol-Version": HANDSHAKE}
        call = client.post(
            url, json=rpc(2, "tools/call", {"name": "echo", "arguments": {"text": "still here"}}), headers=session
        )
        assert call.json()["result"]["content"][0]["text"] == "still here"
        assert client.delete(url, headers=session).status_code == 200


# -- the replay log: RSS of a heavy session -------------------------------------------------------


def test_heavy_session_rss_returns_near_idle_after_delete(tmp_path: Path) -> None:
    """150 results of 1 MiB, each on an SSE stream (a progress notification first) and so logged for
    replay: the log keeps at most its byte bound (16 MiB) of them, and once the session is deleted
    the server's RSS is back within 40 MB of idle."""
    with load_server(tmp_path) as (proc, base, _), httpx.Client(timeout=30) as client:
        url = base + "/mcp"
        answers_normally(url)  # warm: the first session's imports and caches belong to idle
        time.sleep(0.3)
        idle = rss_mb(proc.pid)
        started = time.monotonic()
        init = rpc(
            0,
            "initialize",
            {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        )
        reply = client.post(url, json=init, headers=ACCEPT)
        session = {**ACCEPT, "Mcp-Session-Id": reply.headers["mcp-session-id"], "MCP-Protocol-Version": HANDSHAKE}
        client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        peak = idle
        for request_id in range(1, 151):
            reply = client.post(url, json=blob_call(request_id, MIB), headers=session)
            assert reply.headers["content-type"].startswith("text/event-stream")
            events = sse_events(reply.content)
            assert all(event.get("id") for event in events)  # numbered: kept for replay
            assert len(events[-1]["data"]) > MIB and f'"id":{request_id}' in events[-1]["data"]
            peak = max(peak, rss_mb(proc.pid))
            assert time.monotonic() - started < DEADLINE
        assert peak - idle < 100, (idle, peak)  # was +153 MB: every result pinned
        assert client.delete(url, headers=session).status_code == 200
        after = settled_rss(proc.pid, idle + IDLE_MARGIN_MB)
        assert after - idle <= IDLE_MARGIN_MB, (idle, peak, after)
        answers_normally(url)


# -- a few hundred large answers, at both eras (issue 44, item 1) -----------------------------------

ECHO_BOUND_MB = 40  # RSS over the start after 240 echo calls of 1 MiB
ECHO_SECOND_HALF_MB = 20  # what the second 120 may add (or half what the first 120 added): RSS of an HTTP
# server moves by 10-20 MB from one checkpoint to the next (nothing trims after a large answer there)


@needs_proc
@pytest.mark.parametrize("version", [HANDSHAKE, STATELESS])
def test_rss_stays_bounded_under_hundreds_of_large_answers(version: str) -> None:
    """The stdio probe of issue 44 over Streamable HTTP (`benchmarks/stdio_memory.py`): 240 echo calls
    of 1 MiB to `examples/echo_server.py --transport http`, 8 in flight, in a handshake session
    (2025-11-25) or as stateless requests (2026-07-28). The second 120 calls must not keep adding
    to RSS what the first did, and the server ends within 40 MB of its start (measured: +5 to +27)."""
    with HttpEchoProbe(version) as probe:
        growth(probe, 240, MIB, ECHO_BOUND_MB).check(ECHO_BOUND_MB, ECHO_SECOND_HALF_MB)


# -- legacy /sse: a client that stops reading -----------------------------------------------------


def test_slow_legacy_consumer_is_dropped_and_its_memory_released(tmp_path: Path) -> None:
    """A legacy client reads its `endpoint` event, then nothing more, while 1 MiB results are posted
    for it: once 8 MiB wait (legacy_queue_bytes) it is dropped (logged once), its connection is
    closed, later POSTs for its session are 404, the server's RSS stays under idle + 60 MB
    throughout and returns within 40 MB of idle."""
    with load_server(tmp_path) as (proc, base, log), httpx.Client(timeout=30) as client:
        answers_normally(base + "/mcp")
        time.sleep(0.3)
        idle = rss_mb(proc.pid)
        port = int(base.rsplit(":", 1)[1])
        stuck = socket.create_connection(("127.0.0.1", port), timeout=30)
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        try:
            stuck.sendall(f"GET /sse HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n".encode())
            head = b""
            while b"session_id=" not in head or not head.split(b"session_id=", 1)[1].count(b"\n"):
                head += stuck.recv(4096)
            session_id = head.split(b"session_id=", 1)[1].split(b"\n", 1)[0].decode().strip()
            messages = f"{base}/messages?session_id={session_id}"
            init = rpc(
                0,
                "initialize",
                {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
            )
            assert client.post(messages, json=init).status_code == 202
            assert (
                client.post(messages, json={"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202
            )
            peak, refused_after = idle, None
            for request_id in range(1, 201):  # 200 MiB of results if nothing were bounded
                status = client.post(messages, json=blob_call(request_id, MIB, progress=False)).status_code
                peak = max(peak, rss_mb(proc.pid))
                if status == 404:
                    refused_after = request_id
                    break
                assert status == 202
            assert refused_after is not None and refused_after < 50, refused_after
            time.sleep(0.5)
            peak = max(peak, rss_mb(proc.pid))
            assert peak - idle < LEGACY_PEAK_MB, (idle, peak)
            # The server closed the stream: what the kernel still held arrives, then the end.
            stuck.settimeout(10)
            while stuck.recv(1 << 20):
                pass
        finally:
            stuck.close()
        after = settled_rss(proc.pid, idle + IDLE_MARGIN_MB)
        assert after - idle <= IDLE_MARGIN_MB, (idle, peak, after)
        answers_normally(base + "/mcp")
        assert client.post(messages, json=rpc(9, "ping")).status_code == 404
    assert log.read_text().count("the client is not reading") == 1, log.read_text()[-2000:]


# -- the replay log's bounds, in process ----------------------------------------------------------


async def test_replay_log_byte_bound_holds_and_resuming_past_it_is_410() -> None:
    """max_replay_bytes=2 MiB: after 12 results of 512 KiB the session holds at most 2 MiB; a GET
    resuming from the first stream is answered 410 with a JSON-RPC error saying the events are gone;
    one resuming the last stream replays its result; DELETE releases the log."""
    app = create_app(LoadServer(), max_replay_bytes=2 * MIB)
    with serve_in_thread(app) as base, anyio.fail_after(DEADLINE):
        url = base + "/mcp"
        async with httpx.AsyncClient(timeout=20) as client:
            session = await open_session(client, url)
            log = app.streamable.sessions[session["Mcp-Session-Id"]].events
            assert log is not None
            first_ids: list[str] = []
            for request_id in range(1, 13):
                reply = await client.post(url, json=blob_call(request_id, 512 * 1024), headers=session)
                events = sse_events(reply.content)
                first_ids.append(events[0]["id"])  # the priming event
                assert f'"id":{request_id}' in events[-1]["data"]
                assert log.bytes <= 2 * MIB
            assert 2 <= len(log) < 12 * 3  # some streams remain, the oldest are gone
            assert app.streamable.replay.bytes == log.bytes

            resume = {**session, "Accept": "text/event-stream"}
            gone = await client.get(url, headers={**resume, "Last-Event-ID": first_ids[0]})
            assert gone.status_code == 410
            assert gone.json()["error"]["code"] == -32600
            assert "no longer held" in gone.json()["error"]["message"]
            async with client.stream("GET", url, headers={**resume, "Last-Event-ID": first_ids[-1]}) as replay:
                assert replay.status_code == 200
                replayed = [message async for message in sse_messages(replay)]
            assert [m.get("id") for m in replayed] == [None, 12]  # the progress, then the result
            assert len(replayed[-1]["result"]["content"][0]["text"]) == 512 * 1024

            assert (await client.delete(url, headers=session)).status_code == 200
            assert log.closed and log.bytes == 0 and app.streamable.replay.bytes == 0
            session = await open_session(client, url)
            ping = await client.post(url, json=rpc(5, "ping"), headers=session)
            assert ping.json() == {"jsonrpc": "2.0", "id": 5, "result": {}}


async def test_replay_log_total_bound_and_age() -> None:
    """Two sessions share max_replay_bytes_total=1 MiB (the oldest events overall go first), and an
    event older than replay_ttl_seconds is dropped by a timer, with no further request."""
    app = create_app(LoadServer(), max_replay_bytes_total=MIB, replay_ttl_seconds=1.0)
    with serve_in_thread(app) as base, anyio.fail_after(DEADLINE):
        url = base + "/mcp"
        async with httpx.AsyncClient(timeout=20) as client:
            alice = await open_session(client, url)
            bob = await open_session(client, url)
            for request_id in range(1, 4):
                for session in (alice, bob):
                    reply = await client.post(url, json=blob_call(request_id, 300 * 1024), headers=session)
                    assert reply.status_code == 200
                    assert app.streamable.replay.bytes <= MIB
            logs = [app.streamable.sessions[s["Mcp-Session-Id"]].events for s in (alice, bob)]
            assert all(log is not None and len(log) > 0 for log in logs)  # both keep their newest
            await anyio.sleep(1.5)
            assert app.streamable.replay.bytes == 0
            assert all(log is not None and len(log) == 0 for log in logs)
            ping = await client.post(url, json=rpc(9, "ping"), headers=alice)
            assert ping.json()["result"] == {}


def test_event_log_units() -> None:
    """The log drops oldest first, keeps `dropped_through` exact, answers a resumption past it 410,
    does not hold an event larger than its bound, and gives everything back on close."""
    store = ReplayStore(ReplayLimits(events=4, bytes=10_000, total_bytes=12_000, ttl_seconds=60))
    log = EventLog(store)
    stream = log.open_stream()
    ids = [log.add(stream, b"x" * 1000) for _ in range(5)]
    assert len(log) == 4 and log.dropped_through == ids[0]  # the count bound
    assert log.bytes == 4 * (1000 + EVENT_OVERHEAD)
    gone = log.replay(str(ids[0]))
    assert gone is not None and gone.status_code == 410
    assert log.replay(str(ids[1])) is not None and log.replay(str(ids[1])).status_code == 200  # type: ignore[union-attr]
    assert log.replay(str(ids[-1] + 1)) is None and log.replay("0") is None  # never issued: not a resumption
    other = EventLog(store)
    other.add(other.open_stream(), b"y" * 9000)  # over the overall bound: the oldest overall go
    assert store.bytes <= 12_000 and len(log) == 2 and log.dropped_through == ids[2]
    huge = log.add(stream, b"z" * 20_000)  # larger than the session's bound: not held, nor anything older
    assert len(log) == 0 and log.dropped_through == huge
    log.close()
    other.close()
    assert store.bytes == 0


# -- what outlives a load ------------------------------------------------------------------------


@pytest.mark.slow
def test_mixed_load_of_64_clients_returns_near_idle_after_delete(tmp_path: Path) -> None:
    """64 clients of the benchmark's mixed load (`benchmarks/bench_load.py`: echo, progress,
    cancelled and dropped-then-resumed calls, sessions deleted and reopened) for a few seconds, then
    every session deleted: the server's RSS comes back within 12 MB of what it was idle after one
    session had been served (the first requests import and build what any server's first requests
    do), and a later round (of at most LOAD_ROUNDS) adds under 2 MB (nothing is kept per session or
    request). Measured, not
    asserted, in `python -m benchmarks --only load` and docs/security.md ("After a load"):
    idle + 7.5 MiB, from 64 clients' peak of idle + 36 MiB."""
    with load_server(tmp_path) as (proc, base, _):
        port = int(base.rsplit(":", 1)[1])

        async def load(seconds: float, *, clients: int) -> bench_load.Tally:
            tally = bench_load.Tally()
            until = time.monotonic() + seconds
            crowd = [bench_load.Client(n, port, tally, 30, seed=n) for n in range(clients)]
            with anyio.fail_after(DEADLINE):
                await asyncio.gather(*(client.run(until) for client in crowd))
            return tally

        warm = asyncio.run(load(1.0, clients=1))
        assert warm.lost == warm.crossed == warm.duplicated == 0
        time.sleep(1.0)
        idle = rss_mb(proc.pid)
        after: list[float] = []
        while len(after) < LOAD_ROUNDS and (len(after) < 2 or after[-1] - after[-2] > LOAD_ROUND_GROWTH_MB):
            tally = asyncio.run(load(4.0, clients=bench_load.CLIENTS))
            assert sum(tally.ops.values()) > bench_load.CLIENTS and tally.lost == tally.crossed == 0, tally.examples
            after.append(settled_rss(proc.pid, idle + LOAD_MARGIN_MB / 2))
        assert after[0] - idle <= LOAD_MARGIN_MB, (idle, after)
        assert after[-1] - after[-2] <= LOAD_ROUND_GROWTH_MB, (idle, after)
        answers_normally(f"{base}/mcp")


def test_result_checks_do_not_keep_the_strings_they_read() -> None:
    """Results are checked with the model's `validate_json` (`versions.checked_json`); pydantic-core
    would keep the last ~16,000 distinct strings it read in a process-wide cache (about 1 MB, spread
    over the allocator's arenas after a load). The generated models cache dict keys only."""
    from mcp_bindings.runtime.protocol.versions import checked_json
    from mcp_bindings.v2025_11_25 import models as m

    checked_json(m.CallToolResult(content=[m.TextContent(text="warm")]), "warm")
    tracemalloc.start()
    try:
        for n in range(5000):
            checked_json(m.CallToolResult(content=[m.TextContent(text=f"distinct text {n}")]), "result")
        kept = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert kept < 50_000, f"{kept} bytes kept after checking 5,000 results"  # 'all': about 300,000


def test_nothing_the_load_sized_stays_once_every_session_is_gone() -> None:
    """Once every replay log is closed, no shell of a dropped event stays in the store's order (up to
    256 did), and the order is the deque the store began with (one made at the load's peak pinned an
    allocator arena of its own); a per-client share and the request deadlines that held many entries
    are emptied to fresh tables, not kept at the size the load grew them to."""
    store = ReplayStore(ReplayLimits(events=2))
    order = store._order
    logs = [store.new_log() for _ in range(64)]
    for log in logs:
        stream = log.open_stream()
        for _ in range(10):  # 8 of each log's 10 dropped while it is open: the order is compacted
            log.add(stream, b"x" * 100)
    for log in logs:
        log.close()
    assert store.bytes == 0 and len(store._order) == 0 and store._timer is None
    assert store._order is order  # compacted in place: no container made under the load stays

    share = PerClient("max_things_per_client", 1000, "things", "drop one first")
    for n in range(200):
        share.take(f"client {n}")
    for n in range(200):
        share.give_back(f"client {n}")
    assert sys.getsizeof(share._held) == sys.getsizeof({})

    async def reads() -> None:
        deadlines = Deadlines(30.0)
        await asyncio.gather(*(deadlines.run(asyncio.sleep(0)) for _ in range(200)))
        assert sys.getsizeof(deadlines._running) == sys.getsizeof({})

    asyncio.run(reads())


# -- legacy /sse: sessions bound to their principal -----------------------------------------------


class FakeBearer:
    """Stands in for `auth.resource_server.require_bearer`: `X-Test-User: alice` puts alice's
    AccessToken in scope["auth"]."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            user = dict(scope["headers"]).get(b"x-test-user")
            if user is not None:
                scope = {**scope, "auth": AccessToken(subject=user.decode(), client_id="cli", issuer="https://as")}
        await self.app(scope, receive, send)


async def test_legacy_session_belongs_to_its_principal() -> None:
    app = create_app(LoadServer())
    with serve_in_thread(FakeBearer(app)) as base, anyio.fail_after(DEADLINE):
        async with httpx.AsyncClient(timeout=20) as client:
            alice = {"X-Test-User": "alice"}
            async with client.stream("GET", base + "/sse", headers={"Accept": "text/event-stream", **alice}) as stream:
                lines = stream.aiter_lines()
                endpoint = ""
                async for line in lines:
                    if line.startswith("data:"):
                        endpoint = line[5:].strip()
                        break
                messages = base + endpoint
                init = rpc(
                    1,
                    "initialize",
                    {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
                )
                for other in ({"X-Test-User": "bob"}, {}):  # another principal, or none: as good as unknown
                    refused = await client.post(messages, json=init, headers=other)
                    assert refused.status_code == 404
                assert (await client.post(messages, json=init, headers=alice)).status_code == 202
                data = ""
                async for line in lines:
                    if line.startswith("data:"):
                        data = line[5:]
                        break
                assert '"id":1' in data and '"protocolVersion":"2024-11-05"' in data
        async with httpx.AsyncClient(timeout=20) as client:
            session = await open_session(client, base + "/mcp")
            ping = await client.post(base + "/mcp", json=rpc(2, "ping"), headers=session)
            assert ping.json()["result"] == {}
