"""Scale-out resilience and probes, in one process: Redis unavailable at start (a clear startup
error), a worker of several refused without a configured secret, Redis lost mid-run (what needs it
fails with -32603 naming Redis, the rest goes on, the bus comes back by itself), /healthz and
/readyz, and draining before shutdown. The Redis is private (`tests/scaleout/test_scaleout.py`'s server)."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcp_bindings.runtime.http.app import StreamableHTTPApp, create_app
from mcp_bindings.runtime.http.backend import SINGLE_PROCESS
from mcp_bindings.runtime.protocol.request_state import PREVIOUS_SECRET_ENV, SECRET_ENV
from mcp_bindings.runtime.scaleout.backends import REDIS_URL_ENV, backend_from_env
from mcp_bindings.runtime.scaleout.backends.redis import RedisBackend
from tests.peers.redis_server import RedisServer
from tests.peers.scaleout_app import Scaled
from tests.support import refused_port
from tests.support.http import serve_in_thread
from tests.support.scaleout import SECRET, call, headers, listening

pytestmark = [pytest.mark.anyio, pytest.mark.scaleout]


@pytest.fixture
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (SECRET_ENV, PREVIOUS_SECRET_ENV, REDIS_URL_ENV):
        monkeypatch.delenv(name, raising=False)


async def startup(app: StreamableHTTPApp) -> dict[str, Any]:
    """Run the app's lifespan startup; the message it answered (and shut it down if it started)."""
    inbox = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return inbox.pop(0) if inbox else await anyio.sleep_forever()  # type: ignore[func-returns-value]

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(dict(message))

    with anyio.fail_after(10):
        await app(  # pyright: ignore[reportArgumentType]
            {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, receive, send
        )
    return sent[0]


async def test_redis_unreachable_at_start_is_a_clear_startup_error(no_env: None) -> None:
    with refused_port() as port:
        backend = RedisBackend(f"redis://user:pw@127.0.0.1:{port}/0")
        answer = await startup(create_app(Scaled(), backend=backend, request_state_secret=SECRET))
    assert answer["type"] == "lifespan.startup.failed"
    assert f"shared state unavailable (Redis at redis://127.0.0.1:{port}/0" in answer["message"]
    assert "pw" not in answer["message"]  # credentials are never echoed


async def test_a_shared_backend_without_a_secret_refuses_to_start(no_env: None, redis_server: RedisServer) -> None:
    answer = await startup(create_app(Scaled(), backend=RedisBackend(redis_server.url)))
    assert answer["type"] == "lifespan.startup.failed"
    assert "several workers need one requestState secret: set MCP_REQUEST_STATE_SECRET" in answer["message"]


async def test_a_short_secret_is_refused_at_start(no_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_ENV, "too-short")
    answer = await startup(create_app(Scaled()))
    assert answer["type"] == "lifespan.startup.failed"
    assert "MCP_REQUEST_STATE_SECRET is 9 bytes; use at least 32" in answer["message"]


async def test_one_process_needs_nothing_new(no_env: None) -> None:
    assert backend_from_env() is SINGLE_PROCESS
    app = create_app(Scaled())
    assert (await startup(app))["type"] == "lifespan.startup.complete"
    with serve_in_thread(create_app(Scaled())) as base:
        async with httpx.AsyncClient(timeout=10) as client:
            assert (await client.get(base + "/healthz")).text == "ok\n"
            ready = await client.get(base + "/readyz", headers={"Host": "10.0.0.7"})  # probes name the address
            assert ready.status_code == 200 and ready.text == "ready\n"


@pytest.fixture
def lone_redis(tmp_path: Path) -> Iterator[RedisServer]:
    import shutil

    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (apt-get install -y redis-server)")
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def test_redis_lost_mid_run_fails_what_needs_it_and_comes_back(no_env: None, lone_redis: RedisServer) -> None:
    app = create_app(Scaled(), backend=RedisBackend(lone_redis.url), request_state_secret=SECRET)
    with serve_in_thread(app) as base, anyio.fail_after(60):
        async with httpx.AsyncClient(timeout=10) as client:
            assert (await client.get(base + "/readyz")).status_code == 200
            lone_redis.stop()
            # A stateless request that needs no shared state is answered as usual.
            who = await client.post(base + "/mcp", json=call("whoami"), headers=headers("tools/call", "whoami"))
            assert who.status_code == 200 and "result" in who.json()
            # A broadcast's fan-out needs Redis: -32603 naming it.
            raised = await client.post(
                base + "/mcp", json=call("change_tools"), headers=headers("tools/call", "change_tools")
            )
            error = raised.json()["error"]
            assert error["code"] == -32603
            assert f"shared state unavailable (Redis at {lone_redis.url}" in error["message"]
            ready = await client.get(base + "/readyz")
            assert ready.status_code == 503 and f"Redis at {lone_redis.url} unreachable" in ready.text
            lone_redis.start()  # same port: the client reconnects, the bus resubscribes (backoff <= 5 s)
            for _ in range(200):
                if (await client.get(base + "/readyz")).status_code == 200:
                    break
                await anyio.sleep(0.1)
            else:
                pytest.fail("not ready again within 20 s of Redis coming back")
            again = await client.post(
                base + "/mcp", json=call("change_tools"), headers=headers("tools/call", "change_tools")
            )
            assert "result" in again.json(), again.text


async def test_draining_closes_streams_and_finishes_requests_in_flight(no_env: None) -> None:
    app = create_app(Scaled())
    with serve_in_thread(app) as base, anyio.fail_after(30):
        async with listening(base, {"toolsListChanged": True}, "sub-1") as (_, messages):
            answers: list[httpx.Response] = []
            async with httpx.AsyncClient(timeout=10) as client, anyio.create_task_group() as group:

                async def slow() -> None:
                    body = call("echo", {"n": 7, "sleep": 1.0})
                    answers.append(await client.post(base + "/mcp", json=body, headers=headers("tools/call", "echo")))

                group.start_soon(slow)
                await anyio.sleep(0.3)
                app.drain()
                ready = await client.get(base + "/readyz")
                assert ready.status_code == 503 and "draining" in ready.text
                with anyio.fail_after(5), pytest.raises(anyio.EndOfStream):
                    await messages.receive()  # the listen stream has ended (the client listens again elsewhere)
            assert answers[0].json()["result"]["content"][0]["text"].startswith("7 from ")
