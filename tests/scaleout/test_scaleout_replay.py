"""Resuming a stream on another worker after its worker drained (docs/deployment.md, "Resuming a
stream after its worker drained"): 2 uvicorn workers and a private Redis on 127.0.0.1, plus the
handover's bounds in one process against the same Redis.

The app is this module's `build` (`uvicorn --factory tests.scaleout.test_scaleout_replay:build`): a
2025-11-25 server whose `countdown` tool logs `before` messages, ends its POST stream early (SSE
polling, SEP-1699), waits, logs `after` more and answers; every response names its worker's pid.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from starlette.types import Message, Receive, Scope, Send

from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.http.resume import ReplayLimits, ReplayStore
from mcp_bindings.runtime.scaleout.handoff import Handoff
from mcp_bindings.v2025_11_25 import models as m25
from mcp_bindings.v2025_11_25.server import Server as Server25
from tests.peers.redis_server import RedisServer
from tests.support.scaleout import Deployment, rpc

pytestmark = [pytest.mark.anyio, pytest.mark.scaleout]

VERSION = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
PID = str(os.getpid()).encode()


# -- the app the workers run --------------------------------------------------------------------


class Countdown(Server25):
    name = "countdown"
    version = "1.0.0"
    declared_capabilities = {"tools": {}, "logging": {}}

    async def list_tools(self, params: Any, ctx: Any) -> m25.ListToolsResult:
        schema = m25.ToolInputSchema(type="object")
        return m25.ListToolsResult(tools=[m25.Tool(name="countdown", input_schema=schema)])

    async def call_tool(self, params: m25.CallToolRequestParams, ctx: Any) -> m25.CallToolResult:
        args = params.arguments or {}
        before, after = int(args.get("before", 0)), int(args.get("after", 0))
        for n in range(1, before + 1):
            await ctx.log("info", n)
        if args.get("close"):
            await ctx.close_sse_stream()  # the rest waits in the replay log for a GET with Last-Event-ID
        await anyio.sleep(float(args.get("pause", 0)))
        for n in range(before + 1, before + after + 1):
            await ctx.log("info", n)
        return m25.CallToolResult(content=[m25.TextContent(type="text", text=f"done on {os.getpid()}")])


def build() -> Any:
    """The ASGI app (uvicorn `--factory`): every response carries its worker's pid (`x-worker`)."""
    app = create_app(Countdown(), legacy_sse=False)

    async def tagged_app(scope: Scope, receive: Receive, send: Send) -> None:
        async def tagged(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"x-worker", PID)]
            await send(message)

        await app(scope, receive, tagged if scope["type"] == "http" else send)

    return tagged_app


# -- two workers ----------------------------------------------------------------------------------


@pytest.fixture
def workers(redis_server: RedisServer, tmp_path: Path) -> Iterator[Deployment]:
    """Two workers of this module's `build` (the shared deployment of `tests.support.scaleout`)."""
    running = Deployment(redis_server.url, 2, tmp_path / "uvicorn.log", app=__name__)
    try:
        running.wait_ready(2)
        yield running
    finally:
        running.stop()


def sse_events(text: str) -> list[tuple[int | None, Any]]:
    """(id, decoded data) of each SSE event with data."""
    out: list[tuple[int | None, Any]] = []
    for block in text.split("\n\n"):
        event_id, data = None, []
        for line in block.splitlines():
            if line.startswith("id:"):
                event_id = int(line[3:].strip())
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        if data and "".join(data):
            out.append((event_id, json.loads("\n".join(data))))
    return out


class Session:
    """A 2025-11-25 session over one kept-alive connection (so on one worker)."""

    def __init__(self, base: str) -> None:
        self.client = httpx.AsyncClient(
            base_url=base, timeout=10, limits=httpx.Limits(max_connections=1, max_keepalive_connections=1)
        )
        self.id = ""
        self.worker = ""

    async def open(self) -> Session:
        init = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "pytest", "version": "0"}}
        response = await self.client.post("/mcp", json=rpc(0, "initialize", init), headers={"Accept": ACCEPT})
        assert response.status_code == 200, response.text
        self.id, self.worker = response.headers["mcp-session-id"], response.headers["x-worker"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await self.client.post("/mcp", json=note, headers=self.head())
        return self

    def head(self, **extra: str) -> dict[str, str]:
        return {"Accept": ACCEPT, "Mcp-Session-Id": self.id, "MCP-Protocol-Version": VERSION, **extra}

    async def countdown(self, request_id: int, **arguments: Any) -> list[tuple[int | None, Any]]:
        body = rpc(request_id, "tools/call", {"name": "countdown", "arguments": arguments})
        response = await self.client.post("/mcp", json=body, headers=self.head())
        assert response.status_code == 200 and response.headers["x-worker"] == self.worker, response.text
        return sse_events(response.text)


async def get_elsewhere(base: str, head: dict[str, str], avoid: str) -> httpx.Response:
    """A GET on fresh connections until a worker other than `avoid` answers it (bounded)."""
    for _ in range(200):
        async with httpx.AsyncClient(base_url=base, timeout=10) as client:
            try:
                response = await client.get("/mcp", headers=head)
            except httpx.TransportError:  # the draining worker closed its socket under us
                await anyio.sleep(0.05)
                continue
        if response.headers.get("x-worker") != avoid:
            return response
        await anyio.sleep(0.05)
    pytest.fail(f"200 fresh connections all reached worker {avoid}")


# -- across workers -------------------------------------------------------------------------------


@pytest.mark.slow
async def test_a_stream_cut_by_a_draining_worker_is_resumed_on_another_once_and_in_order(workers: Deployment) -> None:
    with anyio.fail_after(60):
        session = await Session(workers.base).open()
        other = Session(workers.base)
        await other.client.aclose()
        other.client = session.client  # the same connection: the same worker
        await other.open()
        try:
            foreign = [i for i, _ in await other.countdown(1, before=1) if i is not None]
            seen = await session.countdown(7, before=3, close=True, pause=2.0, after=3)
            # The priming event carries no data; the three logs came before the stream was ended.
            assert [d["params"]["data"] for _, d in seen] == [1, 2, 3], seen
            last = seen[-1][0]
            assert last is not None
            os.kill(int(session.worker), signal.SIGTERM)  # worker A drains: hands its sessions' logs over

            resumed: list[tuple[int | None, Any]] = []
            deadline = time.monotonic() + 30
            while not any(d.get("id") == 7 for _, d in resumed):
                assert time.monotonic() < deadline, resumed
                response = await get_elsewhere(
                    workers.base, session.head(**{"Last-Event-ID": str(last)}), session.worker
                )
                if response.status_code == 404:  # the handover is on its way
                    await anyio.sleep(0.1)
                    continue
                assert response.status_code == 200, response.text
                events = sse_events(response.text)
                resumed += events
                if events:
                    last = events[-1][0]
                else:
                    await anyio.sleep(0.2)  # the request still runs on A: resume again for what comes later

            ids = [i for i, _ in seen + resumed if i is not None]
            assert len(ids) == len(seen + resumed)  # every event numbered
            assert ids == sorted(ids) and len(set(ids)) == len(ids), ids  # once each, in order
            logs = [d["params"]["data"] for _, d in seen + resumed if d.get("method") == "notifications/message"]
            assert logs == [1, 2, 3, 4, 5, 6]
            assert resumed[-1][1]["result"]["content"][0]["text"] == f"done on {session.worker}"

            # Another session's event id is not one of this session's: refused, never replayed.
            refused = await get_elsewhere(
                workers.base, session.head(**{"Last-Event-ID": str(foreign[-1])}), session.worker
            )
            assert refused.status_code == 404, refused.text
            assert "not an event of this session" in refused.json()["error"]["message"]
            unknown = {"Accept": ACCEPT, "Mcp-Session-Id": "no-such-session", "Last-Event-ID": str(last)}
            assert (await get_elsewhere(workers.base, unknown, session.worker)).status_code == 404
        finally:
            await session.client.aclose()


@pytest.mark.slow
async def test_a_stream_is_resumed_through_another_worker_while_its_worker_runs_it(workers: Deployment) -> None:
    """A GET with `Last-Event-ID` reaching the worker that did not run the stream is relayed from the
    one running it (event ids name it): the missed events, then the rest live, up to the response."""
    with anyio.fail_after(60):
        session = await Session(workers.base).open()
        try:
            seen = await session.countdown(7, before=2, close=True, pause=1.5, after=3)
            assert [d["params"]["data"] for _, d in seen] == [1, 2], seen
            last = seen[-1][0]
            assert last is not None
            response = await get_elsewhere(workers.base, session.head(**{"Last-Event-ID": str(last)}), session.worker)
            assert response.status_code == 200, response.text
            assert response.headers["x-worker"] != session.worker
            resumed = sse_events(response.text)
            logs = [d["params"]["data"] for _, d in resumed if d.get("method") == "notifications/message"]
            assert logs == [3, 4, 5], resumed  # logged after the GET arrived: followed live
            assert resumed[-1][1]["id"] == 7, resumed
            assert resumed[-1][1]["result"]["content"][0]["text"] == f"done on {session.worker}"
            ids = [i for i, _ in seen + resumed]
            assert None not in ids and ids == sorted(ids) and len(set(ids)) == len(ids), ids  # type: ignore[type-var]

            # The stream has ended: resuming from its last event sends nothing more, and ends.
            again = await get_elsewhere(workers.base, session.head(**{"Last-Event-ID": str(ids[-1])}), session.worker)
            assert again.status_code == 200 and sse_events(again.text) == [], again.text
            # Another session's id, numbered by the same worker: not this session's event.
            other = Session(workers.base)
            await other.client.aclose()
            other.client = session.client  # the same connection: the same worker
            await other.open()
            foreign = [i for i, _ in await other.countdown(1, before=1) if i is not None]
            refused = await get_elsewhere(
                workers.base, session.head(**{"Last-Event-ID": str(foreign[-1])}), session.worker
            )
            assert refused.status_code == 404 and "no event of this session" in refused.text, refused.text
        finally:
            await session.client.aclose()


# -- the handover's bounds, in one process ----------------------------------------------------------


async def test_a_handover_is_bounded_by_the_replay_limits_and_expires(redis_server: RedisServer) -> None:
    from mcp_bindings.runtime.scaleout.backends.redis import RedisBackend

    backend = RedisBackend(redis_server.url, prefix=f"replay-test-{os.getpid()}:")
    await backend.start()
    try:
        store = ReplayStore(ReplayLimits(events=3, ttl_seconds=1.5))
        log = store.new_log()
        stream = log.open_stream()
        ids = [log.add(stream, b'{"n":%d}' % n) for n in range(5)]  # only the last 3 are held
        handoff = Handoff(backend, store.limits.ttl_seconds)
        handoff.hand_over("s1", "alice", log, final=True)
        await handoff.flush()
        ttl_ms: Any = await backend.client.pttl(backend.prefix + "replays:s1")  # pyright: ignore[reportUnknownMemberType]
        assert 0 < ttl_ms <= 1500

        replay = await handoff.resume("s1", "alice", str(ids[2]))
        assert replay is not None and replay.status_code == 200
        assert [d for _, d in sse_events(bytes(replay.body).decode())] == [{"n": 3}, {"n": 4}]
        dropped = await handoff.resume("s1", "alice", str(ids[0]))  # beyond the per-session bound
        assert dropped is not None and dropped.status_code == 404
        assert await handoff.resume("s1", "bob", str(ids[2])) is None  # someone else's session
        finished = await handoff.resume("s1", "alice", str(ids[4]))
        assert finished is not None and finished.status_code == 410  # final, and its request never answered

        await anyio.sleep(1.7)  # past the age bound: the handover is gone
        assert await handoff.resume("s1", "alice", str(ids[2])) is None
        assert await backend.handed_over("s1") == []
    finally:
        await backend.aclose()


async def test_two_workers_draining_with_streams_of_one_session_both_hand_them_over(redis_server: RedisServer) -> None:
    """Workers A and B each ran a POST stream of one session (no sticky routing) and both drain (a
    restart of the whole deployment): each stream is resumed from its own worker's handover; the
    later handover does not replace the earlier."""
    from mcp_bindings.runtime.scaleout.backends.redis import RedisBackend

    prefix = f"replay-two-{os.getpid()}:"
    a, b, c = (RedisBackend(redis_server.url, prefix=prefix) for _ in range(3))
    for backend in (a, b, c):
        await backend.start()
    try:
        ids: dict[str, list[int]] = {}
        for first_id, name, backend in ((1 << 32 | 1, "a", a), (2 << 32 | 1, "b", b)):
            store = ReplayStore(ReplayLimits(), first_id=first_id)  # as the workers do: apart
            log = store.new_log()
            stream = log.open_stream()
            ids[name] = [log.add(stream, b'{"from":"%s","n":%d}' % (name.encode(), n)) for n in range(3)]
            handoff = Handoff(backend, store.limits.ttl_seconds)
            handoff.hand_over("s1", "alice", log, final=False)
            await handoff.flush()
        resumer = Handoff(c, ReplayLimits().ttl_seconds)  # a worker of the new deployment
        for name in ("a", "b"):
            replay = await resumer.resume("s1", "alice", str(ids[name][0]))
            assert replay is not None and replay.status_code == 200, name
            assert [d for _, d in sse_events(bytes(replay.body).decode())] == [
                {"from": name, "n": 1},
                {"from": name, "n": 2},
            ]
        unknown = await resumer.resume("s1", "alice", "12345")
        assert unknown is not None and unknown.status_code == 404
        assert await resumer.resume("s1", "bob", str(ids["a"][0])) is None
        assert len(await c.handed_over("s1")) == 2
    finally:
        for backend in (a, b, c):
            await backend.aclose()
