"""Any worker serves any handshake session (docs/deployment.md, "What is shared"): 4 uvicorn
workers behind one port and a private Redis on 127.0.0.1, no sticky routing.

The app is `tests/peers/scaleout_sessions_app.py` (every response names its worker, `x-worker`). The
official `mcp` SDK client (tests/peers/sdk_scaleout_client.py, in the SDK's venv) opens a new
connection per request, so the kernel spreads its requests over the workers: it initializes, calls
tools, sets the logging level and gets exactly the messages at or above it, and answers elicitation
requests whose response POST often reaches another worker than the one waiting (forwarded over the
bus). Raw HTTP checks: DELETE on one worker ends the session on all of them; a response for a
worker that is gone is refused; a 2026-07-28 tasks-extension task asks for input on one worker and
is answered with `tasks/update` through another.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcp_bindings.runtime.http.streamable import HttpTransport
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc.jsonrpc import Request
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.scaleout import sessions as http_sessions
from mcp_bindings.runtime.server.notifications import broadcasts
from mcp_bindings.runtime.server.runtime import ServerRuntime
from tests.peers.redis_server import RedisServer
from tests.peers.scaleout_sessions_app import Handshake
from tests.support import REPO_ROOT
from tests.support.scaleout import ACCEPT, SECRET, TRIES, Deployment, rpc

pytestmark = [pytest.mark.anyio, pytest.mark.scaleout]

WORKERS = 4
HANDSHAKE = "2025-11-25"
STATELESS = "2026-07-28"
TASKS_EXT = "io.modelcontextprotocol/tasks"
META_EXT = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientInfo": {"name": "pytest", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {TASKS_EXT: {}}},
}
LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


class Sessions(Deployment):
    """`uvicorn --workers N --factory tests.peers.scaleout_sessions_app:build` with the Redis backend."""

    def __init__(self, redis_url: str, workers: int, log: Path) -> None:
        command = [sys.executable, "-m", "uvicorn", "--factory", "tests.peers.scaleout_sessions_app:build"]
        command += ["--workers", str(workers), "--fd", "{fd}"]
        command += ["--log-level", "warning", "--timeout-graceful-shutdown", "10"]
        self.start(command, redis_url, log)


@pytest.fixture(scope="module")
def deployment(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sessions]:
    running = Sessions(redis_server.url, WORKERS, tmp_path_factory.mktemp("sessions") / "uvicorn.log")
    try:
        running.wait_ready(WORKERS)
        yield running
    finally:
        running.stop()


# -- the record, in one process --------------------------------------------------------------------


async def test_a_session_rebuilt_from_its_record_is_the_same_session() -> None:
    server = Handshake()
    first = ServerRuntime(server)
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "c", "version": "1"},
    }
    await first.on_request(Request(id=1, method="initialize", params=init, raw={}), Session(HttpTransport(), first))
    assert first.view is not None
    first.view.log_level = "error"
    first.subscriptions = {"file:///doc"}
    first.initialized = True
    state = http_sessions.snapshot(first)
    assert state is not None
    record = json.loads(json.dumps(http_sessions.record_of(init, "alice", state)))  # as stored

    again = ServerRuntime(server)
    assert await http_sessions.rebuild(again, Session(HttpTransport(), again), record)
    assert again.view is not None and again.view.version == "2025-06-18"
    assert again.view.client_info == {"name": "c", "version": "1"}
    assert again.view.client_capabilities == {"elicitation": {}}
    assert http_sessions.snapshot(again) == state
    # A later change, read from the record by a worker holding a copy:
    http_sessions.apply(again, {**record, "level": None, "subscriptions": []})
    assert http_sessions.snapshot(again) == (None, frozenset(), True)

    foreign = ServerRuntime(server)
    assert not await http_sessions.rebuild(foreign, Session(HttpTransport(), foreign), {**record, "format": 99})
    assert not await http_sessions.rebuild(
        foreign, Session(HttpTransport(), foreign), {**record, "init": {"protocolVersion": 3}}
    )


def test_request_ids_name_their_worker() -> None:
    ids = http_sessions.WorkerIds("0a1b2c3d4e5f")
    assert [next(ids), next(ids)] == ["0a1b2c3d4e5f-1", "0a1b2c3d4e5f-2"]
    assert http_sessions.addressee("0a1b2c3d4e5f-2", "ffffffffffff") == "0a1b2c3d4e5f"
    assert http_sessions.addressee("0a1b2c3d4e5f-2", "0a1b2c3d4e5f") is None  # this worker's own
    for other in (7, "7", "a-b", "-1", None):  # not ours to forward: handled here (dropped if unknown)
        assert http_sessions.addressee(other, "ffffffffffff") is None


def test_only_session_notifications_are_sent_on_to_another_workers_get_stream() -> None:
    """`http_sessions.SESSION_NOTIFICATIONS` names notifications some version has, and none that
    the host broadcasts (every worker delivers those itself: sending them on would duplicate them)."""
    known = {m for v in registry.versions() for m in registry.protocol(v).server_notifications}
    assert known >= http_sessions.SESSION_NOTIFICATIONS, http_sessions.SESSION_NOTIFICATIONS - known
    assert "notifications/resources/updated" in broadcasts() and "notifications/tools/list_changed" in broadcasts()
    assert not http_sessions.SESSION_NOTIFICATIONS & (broadcasts() | {"notifications/tasks"})
    request = b'{"jsonrpc":"2.0","id":"w-1","method":"roots/list"}'
    assert http_sessions.addressed(request)
    assert http_sessions.addressed(b'{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{}}')
    assert not http_sessions.addressed(b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}')


# -- the official SDK client, no sticky routing ----------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18"])
def test_the_sdk_client_is_served_by_any_worker(deployment: Sessions, sdk_python: str, version: str) -> None:
    client = str(REPO_ROOT / "tests" / "peers" / "sdk_scaleout_client.py")
    done = subprocess.run(
        [sdk_python, client, "--version", version, "--url", deployment.base + "/mcp"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    steps = report["steps"]
    assert steps["initialize"] == version, steps["initialize"]
    workers = set(steps["whoami"])
    assert len(workers) >= 2, f"12 calls all served by {workers}: no other worker adopted the session"

    # The level set on one worker filters the messages sent by another (the record is read per request).
    assert steps["log_warning"][1:] == LEVELS[LEVELS.index("warning") :], steps["log_warning"]
    assert steps["log_critical"][1:] == LEVELS[LEVELS.index("critical") :], steps["log_critical"]

    rounds = steps["ask"]
    assert isinstance(rounds, list), rounds
    forwarded: list[float] = []
    local: list[float] = []
    for ask in rounds:
        waiting = ask["text"].removeprefix("Grace asked by ")
        assert ask["text"] == f"Grace asked by {waiting}", ask
        assert len(ask["responses"]) == 1 and ask["responses"][0]["status"] == 202, ask
        response = ask["responses"][0]
        assert isinstance(response["id"], str) and response["id"].count("-") == 1, response  # ids name their worker
        (forwarded if response["worker"] != waiting else local).append(ask["seconds"])
    assert forwarded, "no response POST reached another worker than the one waiting for it"
    assert steps["ping"] == "ok", steps["ping"]

    relayed = 0
    if version >= "2025-11-25":  # the server ends the tool's POST stream early; the SDK resumes it by GET
        resumed = steps["resume"]
        assert isinstance(resumed, list), resumed
        for done in resumed:
            assert done["logged"] == [1, 2, 3, 4], done  # every message once, in order, across the break
            assert done["resumed"] and all(r["status"] == 200 for r in done["resumed"]), done
            relayed += sum(r["worker"] != done["worker"] for r in done["resumed"])
        assert relayed, "no resumption reached another worker than the one running the stream"
    print(
        f"\nMCP {version}: {len(rounds)} elicitation rounds, {len(forwarded)} answered through another worker"
        f" (median round {statistics.median(forwarded) * 1000:.1f} ms)"
        + (f", {len(local)} on the waiting worker (median {statistics.median(local) * 1000:.1f} ms)" if local else "")
        + (f"; {relayed} stream resumptions relayed from the worker running them" if relayed else "")
    )


# -- raw HTTP --------------------------------------------------------------------------------------


def _head(session_id: str | None = None) -> dict[str, str]:
    head = {"Accept": ACCEPT, "MCP-Protocol-Version": HANDSHAKE}
    if session_id is not None:
        head["Mcp-Session-Id"] = session_id
    return head


async def _open_session(base: str) -> str:
    init = rpc(
        0, "initialize", {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    )
    async with httpx.AsyncClient(base_url=base, timeout=10) as client:
        opened = await client.post("/mcp", json=init, headers={"Accept": ACCEPT})
        assert opened.status_code == 200, opened.text
        session_id = opened.headers["mcp-session-id"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await client.post("/mcp", json=initialized, headers=_head(session_id))).status_code == 202
    return session_id


async def _on_every_worker(base: str, body: dict[str, Any], head: dict[str, str]) -> dict[str, httpx.Response]:
    """`body` POSTed on fresh connections until every worker has answered it once (bounded: on a
    loaded machine the kernel may hand a burst of connections to the same two workers)."""
    seen: dict[str, httpx.Response] = {}
    for _ in range(TRIES * 10):
        async with httpx.AsyncClient(base_url=base, timeout=10) as client:
            response = await client.post("/mcp", json=body, headers=head)
        seen.setdefault(response.headers["x-worker"], response)
        if len(seen) == WORKERS:
            return seen
        await anyio.sleep(0.02)
    pytest.fail(f"{TRIES * 10} fresh connections reached only workers {sorted(seen)}")


async def test_delete_on_one_worker_ends_the_session_on_every_worker(deployment: Sessions) -> None:
    with anyio.fail_after(60):
        session_id = await _open_session(deployment.base)
        served = await _on_every_worker(deployment.base, rpc(1, "ping", {}), _head(session_id))
        assert all(r.status_code == 200 and r.json()["result"] == {} for r in served.values()), served
        async with httpx.AsyncClient(base_url=deployment.base, timeout=10) as client:
            deleted = await client.delete("/mcp", headers=_head(session_id))
        assert deleted.status_code == 200, deleted.text
        refused = await _on_every_worker(deployment.base, rpc(2, "ping", {}), _head(session_id))
        for worker, response in refused.items():
            assert response.status_code == 404, (worker, response.text)
            assert "unknown or expired Mcp-Session-Id" in response.json()["error"]["message"]


async def test_a_cancellation_reaching_another_worker_stops_the_request(deployment: Sessions) -> None:
    with anyio.fail_after(60):
        async with _session_on_workers(deployment.base, 2) as (head, ((runner, worker), (canceller, _))):
            sleep = rpc("long-1", "tools/call", {"name": "sleep", "arguments": {"seconds": 30}})
            answered: list[httpx.Response] = []
            started = time.monotonic()
            async with anyio.create_task_group() as group:

                async def run() -> None:
                    answered.append(await runner.post("/mcp", json=sleep, headers=head))

                group.start_soon(run)
                await anyio.sleep(0.5)  # the request runs on `worker`
                cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "long-1"}}
                cancelled = await canceller.post("/mcp", json=cancel, headers=head)
                assert cancelled.status_code == 202 and cancelled.headers["x-worker"] != worker
            assert time.monotonic() - started < 10, "the request was not cancelled"
            assert answered[0].headers["x-worker"] == worker
            assert b'"result"' not in answered[0].content, answered[0].content  # cancelled: no response


async def test_a_response_for_a_worker_that_is_gone_is_refused(deployment: Sessions) -> None:
    with anyio.fail_after(30):
        session_id = await _open_session(deployment.base)
        stray = {"jsonrpc": "2.0", "id": "0123456789ab-1", "result": {"action": "decline"}}
        async with httpx.AsyncClient(base_url=deployment.base, timeout=10) as client:
            response = await client.post("/mcp", json=stray, headers=_head(session_id))
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["code"] == -32600 and "'0123456789ab-1'" in error["message"], error
        assert "worker that sent it has stopped" in error["message"], error


@asynccontextmanager
async def _session_on_workers(
    base: str, count: int
) -> AsyncIterator[tuple[dict[str, str], tuple[tuple[httpx.AsyncClient, str], ...]]]:
    """A new session's headers, and `count` clients each kept on a worker of its own (all different)."""
    head = _head(await _open_session(base))
    ping = rpc(1, "ping", {})
    clients: list[tuple[httpx.AsyncClient, str]] = []
    try:
        for _ in range(count):
            clients.append(await _pinned(base, "/mcp", ping, head, {worker for _, worker in clients}))
        yield head, tuple(clients)
    finally:
        for client, _ in clients:
            await client.aclose()


async def _pinned(
    base: str, path: str, probe: dict[str, Any], head: dict[str, str], avoid: set[str]
) -> tuple[httpx.AsyncClient, str]:
    """A client whose one kept-alive connection is served by a worker not in `avoid`."""
    for _ in range(TRIES):
        client = httpx.AsyncClient(
            base_url=base, timeout=10, limits=httpx.Limits(max_connections=1, max_keepalive_connections=1)
        )
        response = await client.post(path, json=probe, headers=head)
        if response.headers["x-worker"] not in avoid:
            return client, response.headers["x-worker"]
        await client.aclose()
    pytest.fail(f"{TRIES} fresh connections all reached workers {sorted(avoid)}")


async def test_a_get_stream_held_by_one_worker_gets_what_the_session_gets_on_others(deployment: Sessions) -> None:
    """A subscription made through one worker filters the resource updates raised on another for
    the GET stream held by a third; a notification for the session alone, sent by a worker that does
    not hold the stream, reaches it."""
    with anyio.fail_after(60):
        async with _session_on_workers(deployment.base, 3) as (
            head,
            ((streams, holder), (subscriber, _), (toucher, _)),
        ):
            got: list[Any] = []
            sender = ""
            async with (
                streams.stream("GET", "/mcp", headers={**head, "Accept": "text/event-stream"}) as stream,
                anyio.create_task_group() as group,
            ):
                assert stream.status_code == 200 and stream.headers["x-worker"] == holder

                async def pump() -> None:
                    async for line in stream.aiter_lines():
                        if line.startswith("data:") and line[5:].strip():
                            got.append(json.loads(line[5:]))

                group.start_soon(pump)
                subscribe = rpc(2, "resources/subscribe", {"uri": "file:///doc"})
                answered = await subscriber.post("/mcp", json=subscribe, headers=head)
                assert answered.status_code == 200 and answered.json()["result"] == {}, answered.text
                for n, uri in enumerate(["file:///other", "file:///doc"]):
                    touch = rpc(3 + n, "tools/call", {"name": "touch", "arguments": {"uri": uri}})
                    touched = await toucher.post("/mcp", json=touch, headers=head)
                    assert touched.status_code == 200, touched.text
                # A message for this session alone, sent by a worker that does not hold its GET stream.
                notify = rpc(5, "tools/call", {"name": "notify", "arguments": {}})
                notified = await toucher.post("/mcp", json=notify, headers=head)
                sender = notified.json()["result"]["content"][0]["text"]
                for _ in range(100):
                    if len(got) >= 2:
                        break
                    await anyio.sleep(0.05)
                await anyio.sleep(0.3)  # nothing more comes
                group.cancel_scope.cancel()
            assert sender != holder
            assert [m["method"] for m in got] == ["notifications/resources/updated", "notifications/message"], got
            assert got[0]["params"]["uri"] == "file:///doc", got  # only the subscribed one, once
            assert got[1]["params"] == {"level": "error", "data": f"from {sender}"}, got


async def test_a_sessions_tasks_without_auth_are_served_by_any_worker(deployment: Sessions) -> None:
    """A 2025-11-25 task created without auth belongs to its session (not to one worker's copy of
    it): read, listed, waited for and cancelled through the other workers."""
    with anyio.fail_after(60):
        async with _session_on_workers(deployment.base, 2) as (head, ((creator, owner), (other, worker))):
            ids: list[str] = []
            for n, seconds in enumerate([0.2, 30]):
                nap = rpc(10 + n, "tools/call", {"name": "nap", "arguments": {"seconds": seconds}, "task": {}})
                created = await creator.post("/mcp", json=nap, headers=head)
                assert created.status_code == 200, created.text
                ids.append(created.json()["result"]["task"]["taskId"])
            short, long = ids
            answered = await other.post("/mcp", json=rpc(20, "tasks/result", {"taskId": short}), headers=head)
            assert answered.headers["x-worker"] == worker and "result" in answered.json(), answered.text
            assert answered.json()["result"]["content"][0]["text"] == f"napped 0.2 on {owner}"
            listed = await other.post("/mcp", json=rpc(21, "tasks/list", {}), headers=head)
            statuses = {t["taskId"]: t["status"] for t in listed.json()["result"]["tasks"]}
            assert statuses == {short: "completed", long: "working"}, statuses
            cancelled = await other.post("/mcp", json=rpc(22, "tasks/cancel", {"taskId": long}), headers=head)
            assert cancelled.json()["result"]["status"] == "cancelled", cancelled.text
            # Another session (same lack of auth) sees none of them.
            stranger = _head(await _open_session(deployment.base))
            async with httpx.AsyncClient(base_url=deployment.base, timeout=10) as client:
                hidden = await client.post("/mcp", json=rpc(23, "tasks/get", {"taskId": short}), headers=stranger)
            assert hidden.json()["error"]["code"] == -32602, hidden.text


async def test_at_max_sessions_a_worker_forgets_an_idle_session_not_refuses(redis_server: RedisServer) -> None:
    """Two workers (in this process) of `max_sessions=2` sharing Redis: a worker at its limit forgets
    its least recently used idle session (its record stays) instead of refusing a new one, and serves
    it again on its next request; a session with an open stream is never forgotten, so a worker whose
    sessions all hold one still answers 503."""
    from mcp_bindings.runtime.http.app import create_app
    from mcp_bindings.runtime.scaleout.backends.redis import RedisBackend
    from tests.support.http import serve_in_thread

    def worker() -> Any:
        backend = RedisBackend(redis_server.url, prefix="room:")
        return create_app(Handshake(), backend=backend, request_state_secret=SECRET, max_sessions=2)

    with serve_in_thread(worker()) as a, serve_in_thread(worker()) as b, anyio.fail_after(60):
        ids = [await _open_session(a) for _ in range(3)]  # the third: the first is forgotten on `a`
        async with httpx.AsyncClient(timeout=10) as client:
            for base in (a, b):
                for n, session_id in enumerate(ids):
                    served = await client.post(base + "/mcp", json=rpc(n, "ping", {}), headers=_head(session_id))
                    assert served.status_code == 200 and served.json()["result"] == {}, (base, n, served.text)
            # `a` now holds ids[1] and ids[2] (ids[0] forgotten again): give both an open GET stream.
            async with (
                httpx.AsyncClient(timeout=10) as s1,
                httpx.AsyncClient(timeout=10) as s2,
                s1.stream("GET", a + "/mcp", headers={**_head(ids[1]), "Accept": "text/event-stream"}) as g1,
                s2.stream("GET", a + "/mcp", headers={**_head(ids[2]), "Accept": "text/event-stream"}) as g2,
            ):
                assert g1.status_code == g2.status_code == 200
                refused = await client.post(a + "/mcp", json=rpc(9, "ping", {}), headers=_head(ids[0]))
                assert refused.status_code == 503 and "too many sessions" in refused.text, refused.text
                served = await client.post(b + "/mcp", json=rpc(9, "ping", {}), headers=_head(ids[0]))
                assert served.status_code == 200, served.text  # `b` still has room (it forgets one)


async def _get_stream(client: httpx.AsyncClient, head: dict[str, str]) -> tuple[int, str, str]:
    """Open the session's GET stream on `client`'s worker and close it at once: (status, worker, body)."""
    async with client.stream("GET", "/mcp", headers={**head, "Accept": "text/event-stream"}) as stream:
        body = "" if stream.status_code == 200 else (await stream.aread()).decode()
        return stream.status_code, stream.headers["x-worker"], body


async def test_a_session_has_one_get_stream_across_workers(deployment: Sessions) -> None:
    """A second GET stream of a session is refused by any worker while one is open (each message
    would otherwise reach the client twice, once per stream); once it closes, another worker opens one."""
    with anyio.fail_after(60):
        async with _session_on_workers(deployment.base, 2) as (head, ((streams, holder), (other, worker))):
            async with streams.stream("GET", "/mcp", headers={**head, "Accept": "text/event-stream"}) as held:
                assert held.status_code == 200 and held.headers["x-worker"] == holder
                status, served_by, body = await _get_stream(other, head)
                assert (status, served_by) == (409, worker), (status, served_by, body)
                assert body.startswith("a GET stream is already open for this session (on worker "), body
                for _ in range(6):  # fresh connections: whichever worker each reaches refuses it
                    async with httpx.AsyncClient(base_url=deployment.base, timeout=10) as fresh:
                        status, served_by, body = await _get_stream(fresh, head)
                    assert status == 409, (status, served_by, body)
            status, served_by = 0, ""
            for _ in range(100):  # the holder gives the claim back as its stream closes
                status, served_by, _ = await _get_stream(other, head)
                if status == 200:
                    break
                await anyio.sleep(0.05)
            assert (status, served_by) == (200, worker)


# -- a tasks-extension task's input asks, answered through another worker --------------------------


def _ext_head(method: str, name: str | None = None) -> dict[str, str]:
    head = {"Accept": ACCEPT, "MCP-Protocol-Version": STATELESS, "Mcp-Method": method}
    if name is not None:
        head["Mcp-Name"] = name
    return head


async def _pinned_elsewhere(base: str, avoid: str) -> tuple[httpx.AsyncClient, str]:
    """A client whose one kept-alive connection is served by a worker other than `avoid`."""
    probe = rpc(1, "tools/list", {"_meta": META_EXT})
    for _ in range(TRIES):
        client = httpx.AsyncClient(
            base_url=base, timeout=10, limits=httpx.Limits(max_connections=1, max_keepalive_connections=1)
        )
        response = await client.post("/ext", json=probe, headers=_ext_head("tools/list"))
        if response.headers["x-worker"] != avoid:
            return client, response.headers["x-worker"]
        await client.aclose()
    pytest.fail(f"{TRIES} fresh connections all reached worker {avoid}")


async def test_an_extension_task_asking_for_input_is_answered_through_another_worker(deployment: Sessions) -> None:
    with anyio.fail_after(60):
        call = rpc(1, "tools/call", {"name": "ask_task", "arguments": {}, "_meta": META_EXT})
        async with httpx.AsyncClient(base_url=deployment.base, timeout=10) as client:
            created = await client.post("/ext", json=call, headers=_ext_head("tools/call", "ask_task"))
        assert created.status_code == 200, created.text
        task = created.json()["result"]
        assert task["resultType"] == "task", task
        owner, task_id = created.headers["x-worker"], task["taskId"]

        other, worker = await _pinned_elsewhere(deployment.base, owner)
        try:
            get = rpc(2, "tasks/get", {"taskId": task_id, "_meta": META_EXT})
            state: dict[str, Any] = {}
            for _ in range(100):  # the work asks the client: input_required, the ask read from its worker
                state = (await other.post("/ext", json=get, headers=_ext_head("tasks/get", task_id))).json()["result"]
                if state["status"] == "input_required":
                    break
                await anyio.sleep(0.05)
            assert state["status"] == "input_required" and state["inputRequests"], state
            (key, ask), *_ = state["inputRequests"].items()
            assert ask["method"] == "elicitation/create", ask

            answer = {key: {"action": "accept", "content": {"name": "Grace"}}}
            update = rpc(3, "tasks/update", {"taskId": task_id, "inputResponses": answer, "_meta": META_EXT})
            started = time.perf_counter()
            updated = await other.post("/ext", json=update, headers=_ext_head("tasks/update", task_id))
            seconds = time.perf_counter() - started
            assert updated.headers["x-worker"] == worker != owner
            assert updated.status_code == 200 and "error" not in updated.json(), updated.text

            for _ in range(100):
                state = (await other.post("/ext", json=get, headers=_ext_head("tasks/get", task_id))).json()["result"]
                if state["status"] == "completed":
                    break
                await anyio.sleep(0.05)
            assert state["status"] == "completed", state
            assert state["result"]["content"][0]["text"] == f"Grace asked by {owner}", state
            print(f"\ntasks/update forwarded from worker {worker} to {owner}: {seconds * 1000:.1f} ms")
        finally:
            await other.aclose()


# -- the worker running the task is gone -----------------------------------------------------------


@pytest.fixture
def pair(redis_server: RedisServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Sessions]:
    """Two workers whose leases last 2 s (one of them is killed)."""
    monkeypatch.setenv("MCP_WORKER_LEASE_SECONDS", "2")
    running = Sessions(redis_server.url, 2, tmp_path / "uvicorn.log")
    try:
        running.wait_ready(2)
        yield running
    finally:
        running.stop()


@pytest.mark.slow
async def test_an_update_for_a_task_whose_worker_died_is_refused_then_the_task_fails(pair: Sessions) -> None:
    with anyio.fail_after(60):
        call = rpc(1, "tools/call", {"name": "ask_task", "arguments": {}, "_meta": META_EXT})
        async with httpx.AsyncClient(base_url=pair.base, timeout=10) as client:
            created = await client.post("/ext", json=call, headers=_ext_head("tools/call", "ask_task"))
        owner, task_id = created.headers["x-worker"], created.json()["result"]["taskId"]
        other, _ = await _pinned_elsewhere(pair.base, owner)
        try:
            get = rpc(2, "tasks/get", {"taskId": task_id, "_meta": META_EXT})
            state: dict[str, Any] = {}
            for _ in range(100):
                state = (await other.post("/ext", json=get, headers=_ext_head("tasks/get", task_id))).json()["result"]
                if state["inputRequests"]:
                    break
                await anyio.sleep(0.05)
            key = next(iter(state["inputRequests"]))
            os.kill(int(owner), signal.SIGKILL)

            answer = {key: {"action": "accept", "content": {"name": "Grace"}}}
            update = rpc(3, "tasks/update", {"taskId": task_id, "inputResponses": answer, "_meta": META_EXT})
            refused = (await other.post("/ext", json=update, headers=_ext_head("tasks/update", task_id))).json()
            error = refused["error"]  # the lease (2 s) has not lapsed yet: said so, nothing lost silently
            assert error["code"] == -32603 and f"the worker running task {task_id} stopped" in error["message"], error

            await anyio.sleep(2.5)  # the lease lapses: the task is failed, and an update acknowledged
            acknowledged = await other.post("/ext", json=update, headers=_ext_head("tasks/update", task_id))
            assert acknowledged.status_code == 200 and "result" in acknowledged.json(), acknowledged.text
            state = (await other.post("/ext", json=get, headers=_ext_head("tasks/get", task_id))).json()["result"]
            assert state["status"] == "failed" and state["statusMessage"] == "its worker stopped", state
        finally:
            await other.aclose()


@pytest.mark.slow
async def test_the_get_stream_of_a_killed_worker_reopens_on_another_at_once(pair: Sessions) -> None:
    with anyio.fail_after(60):
        async with _session_on_workers(pair.base, 2) as (head, ((streams, holder), (other, worker))):
            try:
                async with streams.stream("GET", "/mcp", headers={**head, "Accept": "text/event-stream"}) as held:
                    assert held.status_code == 200 and held.headers["x-worker"] == holder
                    assert (await _get_stream(other, head))[0] == 409
                    os.kill(int(holder), signal.SIGKILL)
                    started = time.monotonic()
                    status, served_by, body = 0, "", ""
                    for _ in range(100):  # its claim is taken over once it stops listening, not when it lapses
                        status, served_by, body = await _get_stream(other, head)
                        if status == 200:
                            break
                        await anyio.sleep(0.05)
                    assert (status, served_by) == (200, worker), body
                    assert time.monotonic() - started < 10  # not the claim's lifetime (the 30 min idle timeout)
            except (httpx.RemoteProtocolError, httpx.ReadError):
                pass  # the killed worker's stream breaks as the block exits
