"""`RedisTaskStore` (backends/redis_tasks.py) against a private Redis: the `TaskStore` contract the
in-memory store keeps (scoping, paging, terminal tasks never change, waiting, deleting, bounds),
across two store objects standing for two workers; and the Redis backend's session records."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import anyio.abc
import pytest

from mcp_bindings.runtime.scaleout.backends.redis import RedisBackend
from mcp_bindings.runtime.scaleout.backends.redis_tasks import RedisTaskStore
from mcp_bindings.runtime.tasks.core.store import InvalidCursor, TaskLimitError
from tests.peers.redis_server import RedisServer

pytestmark = [pytest.mark.anyio, pytest.mark.scaleout]


@pytest.fixture
async def workers(
    redis_server: RedisServer, request: pytest.FixtureRequest
) -> AsyncIterator[tuple[RedisTaskStore, RedisTaskStore]]:
    prefix = f"t-{request.node.name}:"  # pyright: ignore[reportUnknownMemberType]
    a, b = RedisBackend(redis_server.url, prefix=prefix), RedisBackend(redis_server.url, prefix=prefix)
    await a.start()
    await b.start()
    try:
        yield RedisTaskStore(a, max_tasks_per_requester=5, page_size=2), RedisTaskStore(b, page_size=2)
    finally:
        await a.aclose()
        await b.aclose()


async def test_a_task_is_shared_and_scoped_to_its_requester(workers: tuple[RedisTaskStore, RedisTaskStore]) -> None:
    a, b = workers
    created = await a.create("alice", "tools/call", ttl_ms=60_000, poll_interval_ms=500)
    seen = await b.get("alice", created.task_id)
    assert seen == created
    assert await b.get("bob", created.task_id) is None
    assert await b.get("alice", "no-such-task") is None


async def test_a_terminal_task_never_changes_whoever_writes(workers: tuple[RedisTaskStore, RedisTaskStore]) -> None:
    a, b = workers
    task = await a.create("alice", "tools/call", ttl_ms=None, poll_interval_ms=None)
    cancelled = await b.update(task.task_id, status="cancelled", status_message="by request")
    assert cancelled is not None and cancelled.status == "cancelled"
    late = await a.update(task.task_id, status="completed", result={"content": []})
    assert late is not None and late.status == "cancelled" and late.result is None
    with pytest.raises(ValueError, match="unknown task status"):
        await a.update(task.task_id, status="done")


async def test_racing_updates_keep_one_outcome(workers: tuple[RedisTaskStore, RedisTaskStore]) -> None:
    a, b = workers
    task = await a.create("alice", "tools/call", ttl_ms=None, poll_interval_ms=None)
    outcomes: list[str] = []

    async def finish(store: RedisTaskStore, status: str) -> None:
        state = await store.update(task.task_id, status=status)
        assert state is not None
        outcomes.append(state.status)

    async with anyio.create_task_group() as group:
        for store, status in ((a, "completed"), (b, "cancelled"), (a, "failed"), (b, "completed")):
            group.start_soon(finish, store, status)
    final = await a.get("alice", task.task_id)
    assert final is not None and final.terminal
    assert outcomes.count(final.status) >= 1 and set(outcomes) == {final.status}


async def test_wait_returns_when_another_worker_finishes_it(workers: tuple[RedisTaskStore, RedisTaskStore]) -> None:
    a, b = workers
    task = await a.create("alice", "tools/call", ttl_ms=None, poll_interval_ms=None)
    done = None
    async with anyio.create_task_group() as group:

        async def finish() -> None:
            await anyio.sleep(0.2)
            await b.update(task.task_id, status="completed", result={"ok": True})

        group.start_soon(finish)
        with anyio.fail_after(5):
            done = await a.wait(task.task_id)
    assert done is not None and done.status == "completed" and done.result == {"ok": True}
    gone = await a.create("alice", "tools/call", ttl_ms=None, poll_interval_ms=None)
    await b.delete(gone.task_id)
    assert await a.wait(gone.task_id) is None
    assert await a.get("alice", gone.task_id) is None


async def test_list_pages_in_creation_order(workers: tuple[RedisTaskStore, RedisTaskStore]) -> None:
    a, b = workers
    ids = [(await a.create("carol", "tools/call", ttl_ms=None, poll_interval_ms=None)).task_id for _ in range(3)]
    first, cursor = await b.list("carol", None, 10)
    assert [t.task_id for t in first] == ids[:2] and cursor is not None
    rest, end = await b.list("carol", cursor, 10)
    assert [t.task_id for t in rest] == ids[2:] and end is None
    assert await b.list("dave", None, 10) == ([], None)
    with pytest.raises(InvalidCursor):
        await b.list("carol", "not-a-cursor!", 10)


async def test_a_full_requester_evicts_terminal_tasks_then_refuses(
    workers: tuple[RedisTaskStore, RedisTaskStore],
) -> None:
    a, _ = workers
    first = await a.create("erin", "tools/call", ttl_ms=None, poll_interval_ms=None)
    await a.update(first.task_id, status="completed")
    for _ in range(4):
        await a.create("erin", "tools/call", ttl_ms=None, poll_interval_ms=None)
    await a.create("erin", "tools/call", ttl_ms=None, poll_interval_ms=None)  # evicts the completed one
    assert await a.get("erin", first.task_id) is None
    with pytest.raises(TaskLimitError, match="too many tasks"):
        await a.create("erin", "tools/call", ttl_ms=None, poll_interval_ms=None)


async def test_tasks_without_a_requester_are_bounded_by_their_quota_key(
    workers: tuple[RedisTaskStore, RedisTaskStore],
) -> None:
    """Per-client fairness (item 2): anonymous tasks counted against different quota keys (client
    addresses) have a bound each, on any worker; they stay readable with no requester, and a
    deleted or completed one makes room in its quota key's index."""
    a, b = workers
    x = [await a.create(None, "tools/call", ttl_ms=None, poll_interval_ms=None, quota="address:x") for _ in range(5)]
    with pytest.raises(TaskLimitError) as raised:
        await a.create(None, "tools/call", ttl_ms=None, poll_interval_ms=None, quota="address:x")
    assert raised.value.data == {"bound": "max_tasks_per_requester", "limit": 5}
    y = await a.create(None, "tools/call", ttl_ms=None, poll_interval_ms=None, quota="address:y")
    assert y.requester is None and y.quota_key == "address:y"
    assert await b.get(None, x[0].task_id) == x[0]
    await b.delete(x[0].task_id)
    await a.update(x[1].task_id, status="completed")
    await a.create(None, "tools/call", ttl_ms=None, poll_interval_ms=None, quota="address:x")  # the deleted one's room
    await a.create(None, "tools/call", ttl_ms=None, poll_interval_ms=None, quota="address:x")  # evicts the completed
    assert await b.get(None, x[1].task_id) is None
    with pytest.raises(TaskLimitError):
        await a.create(None, "tools/call", ttl_ms=None, poll_interval_ms=None, quota="address:x")


async def test_an_expired_task_is_reported_then_forgotten(workers: tuple[RedisTaskStore, RedisTaskStore]) -> None:
    a, b = workers
    task = await a.create("frank", "tools/call", ttl_ms=50, poll_interval_ms=None)
    await anyio.sleep(0.1)
    state = await b.get("frank", task.task_id)
    assert state is not None and state.expired()  # kept a grace period, answered "expired"


async def test_session_records_name_the_worker(redis_server: RedisServer) -> None:
    a, b = RedisBackend(redis_server.url, prefix="s:"), RedisBackend(redis_server.url, prefix="s:")
    try:
        await a.put("sess-1", 30)
        assert await b.holder("sess-1") == a.worker_id
        await b.drop("sess-1")
        assert await a.holder("sess-1") is None
        await a.put("sess-2", 0.05)
        await anyio.sleep(0.2)
        assert await b.holder("sess-2") is None  # expires with the session's idle timeout
    finally:
        await a.aclose()
        await b.aclose()


async def _leasing(backend: RedisBackend, group: anyio.abc.TaskGroup) -> anyio.CancelScope:
    """Run `backend`'s bus (and so its lease renewal) in a scope of its own; wait until it holds its lease."""
    scope = anyio.CancelScope()

    async def run() -> None:
        with scope:
            await backend.run_bus(_ignore)

    group.start_soon(run)
    with anyio.fail_after(5):
        while not backend.leasing:
            await anyio.sleep(0.01)
    return scope


async def _ignore(method: str, data: object) -> None:
    return None


@pytest.mark.parametrize("death", ["killed", "closed"])
async def test_the_unfinished_tasks_of_a_dead_worker_are_reported_failed(redis_server: RedisServer, death: str) -> None:
    """A worker "killed" stops renewing its lease (it lapses after 0.6 s); one "closed" gives it back at once.
    Either way its unfinished tasks read through another worker are failed, once; finished ones are kept."""
    prefix = f"lease-{death}:"
    a = RedisBackend(redis_server.url, prefix=prefix, lease_s=0.6)
    b = RedisBackend(redis_server.url, prefix=prefix, lease_s=0.6)
    await a.start()
    await b.start()
    try:
        async with anyio.create_task_group() as group:
            scope_a = await _leasing(a, group)
            scope_b = await _leasing(b, group)
            store_a, store_b = RedisTaskStore(a), RedisTaskStore(b)
            running = await store_a.create("alice", "tools/call", ttl_ms=60_000, poll_interval_ms=None)
            done = await store_a.create("alice", "tools/call", ttl_ms=60_000, poll_interval_ms=None)
            await store_a.update(done.task_id, status="completed", result={"content": []})
            await anyio.sleep(0.8)  # longer than the lease: a's renewal keeps it
            seen = await store_b.get("alice", running.task_id)
            assert seen is not None and seen.status == "working"

            scope_a.cancel()  # the worker stops renewing (killed: its lease key stays until it lapses)
            if death == "closed":
                await a.aclose()  # a graceful stop deletes the lease at once
            else:
                seen = await store_b.get("alice", running.task_id)
                assert seen is not None and seen.status == "working"  # not yet lapsed
                await anyio.sleep(0.8)
            failed = await store_b.get("alice", running.task_id)
            assert failed is not None and failed.status == "failed", failed
            assert failed.error is not None and failed.error["code"] == -32603
            assert "worker running this task stopped" in failed.error["message"]
            assert await store_b.wait(running.task_id) == failed  # terminal: recorded once
            page, _ = await store_b.list("alice", None, 10)
            assert {t.task_id: t.status for t in page} == {running.task_id: "failed", done.task_id: "completed"}
            # b's own tasks are never failed by b while it holds its lease.
            own = await store_b.create("alice", "tools/call", ttl_ms=60_000, poll_interval_ms=None)
            assert (await store_b.get("alice", own.task_id)).status == "working"  # pyright: ignore[reportOptionalMemberAccess]
            scope_b.cancel()
    finally:
        await a.aclose()
        await b.aclose()


def test_the_lease_comes_from_the_environment() -> None:
    from mcp_bindings.runtime.scaleout.backends import backend_from_env

    backend = backend_from_env({"MCP_REDIS_URL": "redis://127.0.0.1:1/0", "MCP_WORKER_LEASE_SECONDS": "4.5"})
    assert isinstance(backend, RedisBackend) and backend.lease_s == 4.5
    assert backend_from_env({"MCP_REDIS_URL": "redis://127.0.0.1:1/0"}).lease_s == 15.0  # pyright: ignore[reportAttributeAccessIssue]
    for bad in ("0.5", "soon", "nan"):
        with pytest.raises(ValueError, match="MCP_WORKER_LEASE_SECONDS must be a number of seconds, at least 1"):
            backend_from_env({"MCP_REDIS_URL": "redis://127.0.0.1:1/0", "MCP_WORKER_LEASE_SECONDS": bad})


async def test_a_worker_killed_mid_call_is_gone_not_a_timeout(redis_server: RedisServer) -> None:
    """A call forwarded to a worker that dies after its mail was counted as received is `WorkerGone`
    (the worker stopped listening) well before the forwarder's 5 s reply timeout."""
    from mcp_bindings.runtime.scaleout.forwarding import CALL, TIMEOUT_S, Forwarder, WorkerGone

    a, b = RedisBackend(redis_server.url, prefix="fwd:"), RedisBackend(redis_server.url, prefix="fwd:")
    await a.start()
    await b.start()
    try:
        async with anyio.create_task_group() as group:
            received = anyio.Event()
            scope_b = anyio.CancelScope()

            async def callee_dies_on_the_call(method: str, data: object) -> None:
                if method == CALL:
                    received.set()
                    scope_b.cancel()  # killed: no reply, and its mailbox subscription closes

            async def run_b() -> None:
                with scope_b:
                    await b.run_bus(callee_dies_on_the_call)

            group.start_soon(run_b)
            with anyio.fail_after(5):
                while not await a.listens(b.worker_id):
                    await anyio.sleep(0.01)
            forwarder = Forwarder(server=None, mail=a, worker_id=a.worker_id)  # pyright: ignore[reportArgumentType]
            started = anyio.current_time()
            with pytest.raises(WorkerGone, match=b.worker_id):
                await forwarder.call(b.worker_id, "tasks-extension/update", {"t": "x"})
            assert received.is_set()
            assert anyio.current_time() - started < TIMEOUT_S / 2
            assert not await a.listens(b.worker_id)
    finally:
        await a.aclose()
        await b.aclose()


async def test_one_worker_holds_a_sessions_get_stream(redis_server: RedisServer) -> None:
    a, b = RedisBackend(redis_server.url, prefix="gs:"), RedisBackend(redis_server.url, prefix="gs:")
    await a.start()
    await b.start()
    try:
        async with anyio.create_task_group() as group:
            scope_a = await _leasing(a, group)
            with anyio.fail_after(5):
                while not await b.listens(a.worker_id):
                    await anyio.sleep(0.01)
            assert await a.claim_stream("s1", 30) is None
            assert await a.claim_stream("s1", 30) is None  # renewed
            assert await b.claim_stream("s1", 30) == a.worker_id
            await b.release_stream("s1")  # not b's to give back
            assert await b.claim_stream("s1", 30) == a.worker_id
            await a.release_stream("s1")
            assert await b.claim_stream("s1", 30) is None
            assert await a.claim_stream("s1", 30) is None  # b does not listen (killed): a takes it over
            assert await b.claim_stream("s1", 30) == a.worker_id
            assert await b.claim_stream("s2", 0.05) is None
            await anyio.sleep(0.2)
            assert await a.claim_stream("s2", 30) is None  # lapsed
            scope_a.cancel()
    finally:
        await a.aclose()
        await b.aclose()
