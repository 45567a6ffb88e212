"""Scale-out (docs/deployment.md): one server on 4 uvicorn workers behind one port, sharing state
through a private Redis on 127.0.0.1 (`redis-server` on a free port, nothing saved; the tests skip
when it is not installed).

The app is `tests/peers/scaleout_app.py`; every response carries the pid of the worker that answered
(`x-worker`), and a fresh HTTP connection is how a test reaches another worker (the kernel spreads
connections over the workers sharing the listening socket; each test tries a bounded number of times).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.peers.redis_server import RedisServer
from tests.support.scaleout import (
    SUBSCRIPTION_ID,
    TRIES,
    WORKERS,
    Deployment,
    TaskSession,
    call,
    headers,
    listening,
    next_within,
    rpc,
)

pytestmark = [pytest.mark.anyio, pytest.mark.scaleout]


@pytest.fixture(scope="module")
def deployment(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    running = Deployment(redis_server.url, WORKERS, tmp_path_factory.mktemp("uvicorn") / "uvicorn.log")
    try:
        running.wait_ready(WORKERS)
        yield running
    finally:
        running.stop()


# -- requests ----------------------------------------------------------------------------------


async def fresh_post(base: str, body: dict[str, Any], head: dict[str, str]) -> httpx.Response:
    """A POST on a new connection (so the kernel may hand it to any worker)."""
    async with httpx.AsyncClient(timeout=10) as client:
        return await client.post(base + "/mcp", json=body, headers=head)


async def on_other_worker(base: str, body: dict[str, Any], head: dict[str, str], avoid: str) -> httpx.Response:
    """POST `body` on fresh connections until a worker other than `avoid` answers it (bounded).
    Only for idempotent requests: the attempts answered by `avoid` happened too."""
    for _ in range(TRIES):
        response = await fresh_post(base, body, head)
        if response.headers["x-worker"] != avoid:
            return response
    pytest.fail(f"{TRIES} fresh connections all reached worker {avoid}")


def text_of(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    return response.json()["result"]["content"][0]["text"]


# -- the done-when checks ---------------------------------------------------------------------------


async def test_an_input_round_sealed_on_one_worker_opens_on_another(deployment: Deployment) -> None:
    with anyio.fail_after(60):
        crossed = 0
        for _ in range(TRIES):
            first = await fresh_post(deployment.base, call("confirm"), headers("tools/call", "confirm"))
            assert first.status_code == 200, first.text
            result = first.json()["result"]
            assert result["resultType"] == "input_required"
            sealer = first.headers["x-worker"]
            retry = call(
                "confirm",
                request_id=2,
                requestState=result["requestState"],
                inputResponses={"confirm": {"action": "accept", "content": {"ok": True}}},
            )
            second = await fresh_post(deployment.base, retry, headers("tools/call", "confirm"))
            opener = second.headers["x-worker"]
            assert text_of(second) == f"sealed by {sealer}, opened by {opener}"
            if opener != sealer:
                crossed += 1
                if crossed == 3:
                    break
        assert crossed == 3, "no retry reached another worker"


async def test_a_listen_stream_gets_what_another_worker_raises_and_only_its_own_updates(
    deployment: Deployment,
) -> None:
    base = deployment.base
    with anyio.fail_after(90):
        doc = {"toolsListChanged": True, "resourceSubscriptions": ["file:///doc"]}
        async with listening(base, doc, "sub-doc") as (holder, doc_messages):
            async with listening(base, {"resourceSubscriptions": ["file:///other"]}, "sub-other") as (
                _,
                other_messages,
            ):
                raised = await on_other_worker(
                    base, call("change_tools"), headers("tools/call", "change_tools"), holder
                )
                assert text_of(raised) != holder
                changed = await next_within(doc_messages, 10)
                assert changed is not None and changed["method"] == "notifications/tools/list_changed"
                assert changed["params"]["_meta"][SUBSCRIPTION_ID] == "sub-doc"
                # Attempts that reached the holder itself raised the change too (one per attempt): drain them.
                while (extra := await next_within(doc_messages, 1.0)) is not None:
                    assert extra["method"] == "notifications/tools/list_changed", extra

                update = call("update_resource", {"uri": "file:///doc"})
                raised = await on_other_worker(base, update, headers("tools/call", "update_resource"), holder)
                updated = await next_within(doc_messages, 10)
                assert updated is not None and updated["method"] == "notifications/resources/updated"
                assert updated["params"]["uri"] == "file:///doc"
                while (extra := await next_within(doc_messages, 1.0)) is not None:  # as above
                    assert extra["method"] == "notifications/resources/updated", extra
                    assert extra["params"]["uri"] == "file:///doc", extra
                # Every raise above reached the other stream's worker too; it asked for none of it.
                assert await next_within(other_messages, 1.5) is None

                other = call("update_resource", {"uri": "file:///other"})
                await on_other_worker(base, other, headers("tools/call", "update_resource"), holder)
                mine = await next_within(other_messages, 10)
                assert mine is not None and mine["params"] == {
                    "uri": "file:///other",
                    "_meta": {SUBSCRIPTION_ID: "sub-other"},
                }
                assert await next_within(doc_messages, 1.0) is None  # not subscribed to file:///other


async def session_on_another_worker(base: str, user: str, avoid: str) -> TaskSession:
    for _ in range(TRIES):
        session = await TaskSession(base, user).open()
        if session.worker != avoid:
            return session
        await session.aclose()
    pytest.fail(f"{TRIES} new sessions all opened on worker {avoid}")


async def test_a_task_created_through_one_worker_is_read_and_cancelled_through_another(
    deployment: Deployment,
) -> None:
    with anyio.fail_after(90):
        a = await TaskSession(deployment.base, "alice").open()
        b = await session_on_another_worker(deployment.base, "alice", a.worker)
        mallory = await TaskSession(deployment.base, "bob").open()
        try:
            created = await a.result(
                "tools/call", {"name": "sleep", "arguments": {"seconds": 30}, "task": {"ttl": 60000}}
            )
            task_id = created["task"]["taskId"]
            assert created["task"]["status"] == "working"
            seen = await b.result("tasks/get", {"taskId": task_id})
            assert seen["taskId"] == task_id and seen["status"] == "working"
            listed = await b.result("tasks/list", {})
            assert task_id in [t["taskId"] for t in listed["tasks"]]
            foreign = await mallory.request("tasks/get", {"taskId": task_id})
            assert foreign.json()["error"]["code"] == -32602  # bob's: as unknown
            running = await a.result("tools/call", {"name": "running", "arguments": {}})
            assert running["content"][0]["text"] == "1"
            cancelled = await b.result("tasks/cancel", {"taskId": task_id})
            assert cancelled["status"] == "cancelled"
            for _ in range(50):  # the cancellation reaches A over the bus: its work stops
                running = await a.result("tools/call", {"name": "running", "arguments": {}})
                if running["content"][0]["text"] == "0":
                    break
                await anyio.sleep(0.1)
            else:
                pytest.fail("the task's work still runs on the worker that started it")
            assert (await a.result("tasks/get", {"taskId": task_id}))["status"] == "cancelled"
            again = await a.request("tasks/cancel", {"taskId": task_id})
            assert again.json()["error"]["code"] == -32602 and "terminal" in again.json()["error"]["message"]

            # A quick task finishes on A; B fetches its result.
            quick = await a.result(
                "tools/call", {"name": "sleep", "arguments": {"seconds": 0.1}, "task": {"ttl": 60000}}
            )
            result = await b.result("tasks/result", {"taskId": quick["task"]["taskId"]})
            assert result["content"][0]["text"] == f"slept 0.1 on {a.worker}"
        finally:
            for session in (a, b, mallory):
                await session.aclose()


async def test_a_session_opened_on_one_worker_is_served_by_another(deployment: Deployment) -> None:
    """Handshake sessions are records in Redis: any worker adopts one (tests/scaleout/test_scaleout_sessions.py)."""
    with anyio.fail_after(60):
        a = await TaskSession(deployment.base, "alice").open()
        try:
            ping = rpc(1, "ping", {})
            for _ in range(TRIES):
                async with httpx.AsyncClient(base_url=deployment.base, timeout=10) as client:
                    response = await client.post("/tasks", json=ping, headers=a.head())
                if response.headers["x-worker"] != a.worker:
                    break
            else:
                pytest.fail("no other worker reached")
            assert response.status_code == 200 and response.json()["result"] == {}, response.text
            # Another principal's request for it is refused as for an unknown id.
            foreign = {**a.head(), "Authorization": "Bearer bob-token"}
            async with httpx.AsyncClient(base_url=deployment.base, timeout=10) as client:
                refused = await client.post("/tasks", json=ping, headers=foreign)
            assert refused.status_code == 404, refused.text
            assert (await a.request("ping", {})).status_code == 200  # its own worker serves it too
        finally:
            await a.aclose()


@pytest.mark.slow
async def test_concurrent_clients_get_each_answer_once(deployment: Deployment) -> None:
    """16 clients for `SCALEOUT_LOAD_SECONDS` (default 8 s): every call answered once, by its own id."""
    clients, seconds = 16, float(os.environ.get("SCALEOUT_LOAD_SECONDS", "8"))
    answers: dict[int, list[str]] = {}
    workers: set[str] = set()
    failures: list[str] = []

    async def client(number: int) -> None:
        async with httpx.AsyncClient(base_url=deployment.base, timeout=20) as http:
            end = time.monotonic() + seconds
            sequence = 0
            while time.monotonic() < end:
                sequence += 1
                n = number * 1_000_000 + sequence
                body = call("echo", {"n": n}, request_id=f"c{n}")
                response = await http.post("/mcp", json=body, headers=headers("tools/call", "echo"))
                data = response.json()
                if data.get("id") != f"c{n}":
                    failures.append(f"request c{n} answered as {data.get('id')}")
                    continue
                answered = data["result"]["content"][0]["text"]
                answers.setdefault(n, []).append(answered)
                workers.add(response.headers["x-worker"])

    with anyio.fail_after(seconds + 60):
        async with anyio.create_task_group() as group:
            for number in range(clients):
                group.start_soon(client, number)
        if len(workers) == 1:  # a loaded machine may hand all 16 kept-alive connections to one worker
            n = 99_000_000
            response = await on_other_worker(
                deployment.base, call("echo", {"n": n}, request_id=f"c{n}"), headers("tools/call", "echo"), *workers
            )
            assert response.json()["id"] == f"c{n}"
            answers[n] = [response.json()["result"]["content"][0]["text"]]
            workers.add(response.headers["x-worker"])
    duplicated = sum(1 for got in answers.values() if len(got) > 1)
    crossed = sum(1 for n, got in answers.items() if not got[0].startswith(f"{n} from "))
    print(
        f"\n{clients} clients, {seconds:g} s: {len(answers)} calls answered by {len(workers)} workers; "
        f"{len(failures)} lost or crossed ids, {crossed} crossed answers, {duplicated} duplicated"
    )
    assert not failures
    assert answers, "no call answered"
    for n, got in answers.items():
        assert len(got) == 1 and got[0].startswith(f"{n} from "), (n, got)
    assert len(workers) >= 2, workers


@pytest.mark.slow
async def test_a_worker_killed_mid_run_loses_no_acknowledged_task(deployment: Deployment) -> None:
    acknowledged: list[str] = []
    errors = 0
    before = 0
    stop = anyio.Event()

    async def client() -> None:
        nonlocal errors
        session: TaskSession | None = None
        created = 0
        # Bob's tasks, fewer than the store keeps per requester (100): none is evicted.
        while not stop.is_set() and created < 14:
            try:
                if session is None:
                    session = await TaskSession(deployment.base, "bob").open()
                task = await session.result(
                    "tools/call", {"name": "sleep", "arguments": {"seconds": 0.05}, "task": {"ttl": 120000}}
                )
                acknowledged.append(task["task"]["taskId"])
                created += 1
                await anyio.sleep(0.3)
            except (httpx.HTTPError, AssertionError, KeyError):
                errors += 1  # the worker died under this session: open another one
                if session is not None:
                    await session.aclose()
                session = None
        if session is not None:
            await session.aclose()

    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            for _ in range(6):
                group.start_soon(client)
            with anyio.fail_after(30):
                while len(acknowledged) < 6:  # the clients are under way
                    await anyio.sleep(0.05)
            victim = (await fresh_post(deployment.base, call("whoami"), headers("tools/call", "whoami"))).headers[
                "x-worker"
            ]
            assert victim in _children(deployment.process.pid)
            os.kill(int(victim), signal.SIGKILL)
            before = len(acknowledged)
            with anyio.move_on_after(30):
                while len(acknowledged) < before + 6:  # and go on after the kill
                    await anyio.sleep(0.05)
            stop.set()
        assert len(acknowledged) > before > 0  # tasks were created before and after the kill
        checker = await TaskSession(deployment.base, "bob").open()
        try:
            for task_id in acknowledged:
                state = await checker.result("tasks/get", {"taskId": task_id})
                # Work running on the killed worker is reported failed once its lease lapses (15 s;
                # docs/deployment.md), never lost: every acknowledged task is still there.
                assert state["status"] in ("completed", "working", "failed"), state
                if state["status"] == "failed":  # only a task whose worker died fails here
                    assert state["statusMessage"] == "its worker stopped", state
        finally:
            await checker.aclose()


def _children(pid: int) -> list[str]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True, check=False)
    return [line.strip() for line in out.stdout.splitlines() if line.strip()]


@pytest.mark.slow
@pytest.mark.parametrize("server", ["uvicorn", "gunicorn"])
async def test_two_workers_share_state_and_sigterm_drains_them(
    server: str, redis_server: RedisServer, tmp_path: Path
) -> None:
    """`uvicorn --workers 2` and gunicorn with uvicorn workers: an input round crosses workers; on
    SIGTERM a request in flight is answered, an open listen stream ends, and the server exits 0."""
    if server == "gunicorn":
        pytest.importorskip("gunicorn", reason="gunicorn is not installed (pip install gunicorn)")
    running = Deployment(redis_server.url, 2, tmp_path / f"{server}.log", server)
    try:
        running.wait_ready(2)
        with anyio.fail_after(90):
            for _ in range(TRIES):
                first = await fresh_post(running.base, call("confirm"), headers("tools/call", "confirm"))
                state = first.json()["result"]["requestState"]
                answer = {"confirm": {"action": "accept", "content": {"ok": True}}}
                retry = call("confirm", request_id=2, requestState=state, inputResponses=answer)
                second = await fresh_post(running.base, retry, headers("tools/call", "confirm"))
                if second.headers["x-worker"] != first.headers["x-worker"]:
                    assert text_of(second).startswith(f"sealed by {first.headers['x-worker']}, opened by ")
                    break
            else:
                pytest.fail("no retry reached the other worker")

            async with listening(running.base, {"toolsListChanged": True}, "sub-1") as (_, messages):
                answers: list[httpx.Response] = []
                async with httpx.AsyncClient(timeout=30) as client, anyio.create_task_group() as group:

                    async def slow() -> None:
                        body = call("echo", {"n": 1, "sleep": 2.0})
                        answers.append(
                            await client.post(running.base + "/mcp", json=body, headers=headers("tools/call", "echo"))
                        )

                    group.start_soon(slow)
                    await anyio.sleep(0.5)
                    running.process.send_signal(signal.SIGTERM)
                    with anyio.fail_after(5), pytest.raises(anyio.EndOfStream):  # drained, not timed out (10 s)
                        while True:
                            await messages.receive()
                assert answers[0].status_code == 200, answers[0].text
                assert answers[0].json()["result"]["content"][0]["text"].startswith("1 from ")
            assert await anyio.to_thread.run_sync(running.process.wait, 20) == 0
    finally:
        running.stop()
