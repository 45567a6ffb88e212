"""Scale-out, what crosses workers besides list changes and resource updates (docs/deployment.md):
a custom broadcast (`extensions.broadcast`) raised on one worker reaches the handshake GET streams
of every worker's clients that declared its extension (and no others); a task status of the tasks
extension (`notifications/tasks`) changed through one worker reaches the `subscriptions/listen`
stream held by another; and the unfinished task of a worker killed with SIGKILL is reported
`failed` by the others once its lease (2 s here) lapses.

Two uvicorn workers behind one port (`tests/peers/scaleout_app.py`) and a private Redis on 127.0.0.1;
fresh or kept-alive HTTP connections are how a test reaches one worker or another (bounded tries).
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream

from tests.peers.redis_server import RedisServer
from tests.support.scaleout import (
    META,
    SUBSCRIPTION_ID,
    TRIES,
    Deployment,
    TaskSession,
    call,
    headers,
    next_within,
    rpc,
    sse_messages,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.scaleout]

TASKS_EXT = "io.modelcontextprotocol/tasks"
CAPS = "io.modelcontextprotocol/clientCapabilities"
META_EXT = {**META, CAPS: {**META[CAPS], "extensions": {TASKS_EXT: {}}}}
LEASE_S = "2"


@pytest.fixture(scope="module")
def pair(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """Two workers whose leases last 2 s (`MCP_WORKER_LEASE_SECONDS`)."""
    before = os.environ.get("MCP_WORKER_LEASE_SECONDS")
    os.environ["MCP_WORKER_LEASE_SECONDS"] = LEASE_S
    try:
        running = Deployment(redis_server.url, 2, tmp_path_factory.mktemp("pair") / "uvicorn.log")
    finally:
        if before is None:
            del os.environ["MCP_WORKER_LEASE_SECONDS"]
        else:
            os.environ["MCP_WORKER_LEASE_SECONDS"] = before
    try:
        running.wait_ready(2)
        yield running
    finally:
        running.stop()


@asynccontextmanager
async def pinned(base: str, avoid: str | None = None) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    """A client whose one kept-alive connection is held by a worker other than `avoid`: (it, the worker)."""
    for _ in range(TRIES):
        client = httpx.AsyncClient(
            base_url=base, timeout=10, limits=httpx.Limits(max_connections=1, max_keepalive_connections=1)
        )
        response = await client.post("/mcp", json=call("whoami"), headers=headers("tools/call", "whoami"))
        worker = response.headers["x-worker"]
        if worker != avoid:
            try:
                yield client, worker
            finally:
                await client.aclose()
            return
        await client.aclose()
    pytest.fail(f"{TRIES} fresh connections all reached worker {avoid}")


async def post_on(client: httpx.AsyncClient, body: dict[str, Any], head: dict[str, str], worker: str) -> Any:
    response = await client.post("/mcp", json=body, headers=head)
    assert response.headers["x-worker"] == worker  # still the pinned connection
    assert response.status_code == 200, response.text
    return response.json()


@asynccontextmanager
async def sse(
    client: httpx.AsyncClient, method: str, url: str, **kwargs: Any
) -> AsyncIterator[tuple[str, MemoryObjectReceiveStream[Any]]]:
    """An open SSE response: (the worker holding it, its messages), read by a task of its own."""
    async with client.stream(method, url, **kwargs) as stream:
        assert stream.status_code == 200
        send, receive = anyio.create_memory_object_stream[Any](100)

        async def pump() -> None:
            async with send:
                async for message in sse_messages(stream):
                    await send.send(message)

        async with anyio.create_task_group() as group:
            group.start_soon(pump)
            yield stream.headers.get("x-worker", ""), receive
            group.cancel_scope.cancel()


class DeclaringSession(TaskSession):
    """A 2025-11-25 session whose client declares the `com.example/pings` extension (or none)."""

    def __init__(self, base: str, user: str, declare: bool) -> None:
        super().__init__(base, user)
        self.declare = declare

    async def open(self) -> DeclaringSession:
        capabilities: dict[str, Any] = {"experimental": {"com.example/pings": {}}} if self.declare else {}
        init = rpc(
            0,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "clientInfo": {"name": "pytest", "version": "0"},
            },
        )
        response = await self.client.post("/tasks", json=init, headers=self.auth)
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        self.worker = response.headers["x-worker"]
        await self.client.post(
            "/tasks", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self.head()
        )
        return self


async def session_on(
    base: str, declare: bool, *, avoid: str | None = None, want: str | None = None
) -> DeclaringSession:
    for _ in range(TRIES):
        session = await DeclaringSession(base, "alice", declare).open()
        if session.worker != avoid and want in (None, session.worker):
            return session
        await session.aclose()
    pytest.fail(f"{TRIES} sessions opened, none on the worker wanted")


async def test_a_custom_broadcast_reaches_the_declaring_clients_of_every_worker(pair: Deployment) -> None:
    with anyio.fail_after(90):
        declaring = await session_on(pair.base, True)
        silent = await session_on(pair.base, False, want=declaring.worker)  # same worker: only the filter differs
        raiser = await session_on(pair.base, True, avoid=declaring.worker)
        try:
            get = {**declaring.head(), "Accept": "text/event-stream"}
            quiet_get = {**silent.head(), "Accept": "text/event-stream"}
            endless = httpx.Timeout(10, read=None)
            async with (  # each on its session's own connection, so on its worker
                sse(declaring.client, "GET", "/tasks", headers=get, timeout=endless) as (_, pings),
                sse(silent.client, "GET", "/tasks", headers=quiet_get, timeout=endless) as (_, quiet),
            ):
                await anyio.sleep(0.3)  # both GET streams are registered with their sessions
                sent = await raiser.result("tools/call", {"name": "ping_all", "arguments": {}})
                assert sent["content"][0]["text"] == "1"  # the raiser's own client, on its own worker
                ping = await next_within(pings, 10)
                assert ping is not None, "the broadcast did not reach the other worker's client"
                assert ping["method"] == "notifications/example/pinged"
                assert ping["params"] == {"from": int(raiser.worker)}
                assert await next_within(pings, 1.0) is None  # once
                assert await next_within(quiet, 1.0) is None  # it did not declare the extension
        finally:
            for session in (declaring, silent, raiser):
                await session.aclose()


async def test_a_task_status_changed_on_one_worker_reaches_a_listen_stream_on_another(pair: Deployment) -> None:
    base = pair.base
    with anyio.fail_after(90):
        async with httpx.AsyncClient(timeout=10) as client:
            created = await client.post(
                base + "/mcp",
                json=call("slow_task", {"seconds": 60}, _meta=META_EXT),
                headers=headers("tools/call", "slow_task"),
            )
        assert created.status_code == 200, created.text
        task = created.json()["result"]
        assert task["resultType"] == "task" and task["status"] == "working", task
        task_id = task["taskId"]
        listen = rpc("sub-t", "subscriptions/listen", {"notifications": {"taskIds": [task_id]}, "_meta": META_EXT})
        async with (
            httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as streams,
            sse(streams, "POST", base + "/mcp", json=listen, headers=headers("subscriptions/listen")) as (
                holder,
                messages,
            ),
        ):
            ack = await next_within(messages, 10)
            assert ack is not None and ack["params"]["notifications"] == {"taskIds": [task_id]}, ack
            async with pinned(base, avoid=holder) as (client, other):
                cancel = rpc(2, "tasks/cancel", {"taskId": task_id, "_meta": META_EXT})
                answer = await post_on(client, cancel, headers("tasks/cancel", task_id), other)
                assert answer["result"]["resultType"] == "complete", answer
            status = await next_within(messages, 10)
            assert status is not None, "the status change did not reach the listen stream's worker"
            assert status["method"] == "notifications/tasks"
            assert status["params"]["taskId"] == task_id and status["params"]["status"] == "cancelled"
            assert status["params"]["_meta"][SUBSCRIPTION_ID] == "sub-t"
            assert await next_within(messages, 1.0) is None  # once


async def test_resuming_with_an_event_id_no_worker_holds_is_refused_by_name(pair: Deployment) -> None:
    """An event id that names no event of the session (not held by the worker it names, nor handed
    over) is answered 404 by a worker that did not run the session's streams, saying so."""
    with anyio.fail_after(60):
        session = await session_on(pair.base, False)
        try:
            resume = {**session.head(), "Accept": "text/event-stream", "Last-Event-ID": "1"}
            for _ in range(TRIES):
                async with (
                    httpx.AsyncClient(base_url=pair.base, timeout=10) as client,
                    client.stream("GET", "/tasks", headers=resume) as response,
                ):
                    if response.headers["x-worker"] == session.worker:
                        continue  # its own worker opened the stream: leave it
                    status, body = response.status_code, json.loads(await response.aread())
                    break
            else:
                pytest.fail("no other worker reached")
            assert status == 404
            message = body["error"]["message"]
            assert "Last-Event-ID" in message and "worker that ran it" in message, message
        finally:
            await session.aclose()


# Last: it kills one of the two workers.
async def test_the_task_of_a_killed_worker_is_reported_failed_once_its_lease_lapses(pair: Deployment) -> None:
    base = pair.base
    with anyio.fail_after(120):
        async with pinned(base) as (client, victim):
            created = await post_on(
                client,
                call("slow_task", {"seconds": 600}, _meta=META_EXT),
                headers("tools/call", "slow_task"),
                victim,
            )
        task_id = created["result"]["taskId"]
        get = rpc(3, "tasks/get", {"taskId": task_id, "_meta": META_EXT})
        async with pinned(base, avoid=victim) as (client, other):
            seen = await post_on(client, get, headers("tasks/get", task_id), other)
            assert seen["result"]["status"] == "working"  # its worker holds its lease
            os.kill(int(victim), signal.SIGKILL)
            for _ in range(100):  # the lease (2 s) lapses; then the next read records the task failed
                seen = await post_on(client, get, headers("tasks/get", task_id), other)
                if seen["result"]["status"] != "working":
                    break
                await anyio.sleep(0.1)
            result = seen["result"]
            assert result["status"] == "failed", result
            assert result["error"]["code"] == -32603
            assert "worker running this task stopped" in result["error"]["message"]
            again = await post_on(client, get, headers("tasks/get", task_id), other)
            assert again["result"]["status"] == "failed"  # terminal: recorded once, stays so
