"""A worker killed mid-request: a 2026-07-28 client sends the request again on another worker and
its caller gets one answer (client_retry.py), or, when repeating is not known to be safe, a clear
error at once. Four uvicorn workers behind one port sharing a private Redis on 127.0.0.1
(`tests.scaleout.test_scaleout.Deployment`, app `tests/peers/retry_app.py`, whose tools append the pid of
the worker running them to a file, report progress, then sleep: the test kills that pid).
The decisions themselves, without workers: tests/client/test_retry_policy.py."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.client import retry as client_retry
from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.runtime.client.retry import RetryMode
from mcp_bindings.runtime.rpc.errors import DeliveryFailed, OutcomeUnknown
from mcp_bindings.v2026_07_28 import models as m
from mcp_bindings.v2026_07_28.client import Client, ClientHandlers
from tests.peers.redis_server import RedisServer
from tests.support import refused_port
from tests.support.scaleout import WORKERS, Deployment

pytestmark = [pytest.mark.anyio, pytest.mark.scaleout]

STATELESS = "2026-07-28"
APP = "tests.peers.retry_app"


@pytest.fixture(scope="module")
def deployment(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    log = tmp_path_factory.mktemp("uvicorn-retry") / "uvicorn.log"
    running = Deployment(redis_server.url, WORKERS, log, app=APP)
    try:
        running.wait_ready(WORKERS)
        yield running
    finally:
        running.stop()


@pytest.fixture
def ready(deployment: Deployment) -> Deployment:
    """The deployment with all its workers up (uvicorn replaces a killed worker with a new one)."""
    deployment.wait_ready(WORKERS)
    return deployment


class Confirming(ClientHandlers):
    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    async def elicit(self, params: m.ElicitRequestParams, ctx: Any) -> m.ElicitResult:
        self.asked += 1
        return m.ElicitResult(action="accept", content={"ok": True})


def text_of(result: Any) -> str:
    return result.content[0].text


def pids_in(mark: Path) -> list[str]:
    return mark.read_text().split() if mark.exists() else []


async def first_pid(mark: Path, seconds: float = 15) -> str:
    """The pid of the worker that started running the call marked by `mark`."""
    with anyio.fail_after(seconds):
        while not (pids := pids_in(mark)):
            await anyio.sleep(0.02)
    return pids[0]


def workers_of(deployment: Deployment) -> list[str]:
    """The pids of the deployment's workers (not multiprocessing's resource tracker, also its child)."""
    out = subprocess.run(
        ["ps", "-ww", "-o", "pid=,args=", "--ppid", str(deployment.process.pid)],
        capture_output=True,
        text=True,
        check=False,
    )
    rows = [line.split(None, 1) for line in out.stdout.splitlines() if line.strip()]
    return [row[0] for row in rows if len(row) == 2 and "spawn_main" in row[1]]


@dataclass
class Outcome:
    victim: str  # the pid of the worker signalled while running the call
    ran: list[str]  # the pids of the workers that ran the call, in order
    result: Any  # its result, or the exception it raised
    spent: float  # seconds from the signal to the outcome
    progress: list[float]  # the progress the caller saw
    asked: int  # elicitations the client's handler answered
    then: Any = None  # the result of the follow-up call on the same client, if one was asked for


async def call_and_signal(
    deployment: Deployment,
    tmp_path: Path,
    tool: str,
    sig: signal.Signals,
    *,
    retry: RetryMode = "safe",
    sleep: float = 2.0,
    then: str | None = None,
) -> Outcome:
    """Call `tool` (after listing the tools); once a worker runs it, send `sig` to that worker;
    then, if asked, call the tool `then` on the same client."""
    mark = tmp_path / f"{tool}-{sig.name}-{retry}.pids"
    seen: list[float] = []
    handlers = Confirming()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    url = deployment.base + "/mcp"
    async with connect_http(url, Client, protocol_version=STATELESS, handlers=handlers, retry=retry) as client:
        await client.list_tools()  # the annotations that say which tools are safe to repeat
        outcome: list[Any] = []

        async def call() -> None:
            arguments = {"mark": str(mark), "sleep": sleep, "n": 7}
            try:
                with client.session.progress(on_progress):
                    outcome.append(await client.call_tool(name=tool, arguments=arguments))
            except (OutcomeUnknown, DeliveryFailed) as exc:
                outcome.append(exc)

        victim, signalled = "", 0.0
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(call)
                victim = await first_pid(mark)
                assert victim in workers_of(deployment)
                await anyio.sleep(0.2)  # well inside the tool's sleep
                os.kill(int(victim), sig)
                signalled = time.monotonic()
            spent = time.monotonic() - signalled
            followed = await client.call_tool(name=then, arguments={"n": 8}) if then is not None else None
    assert len(outcome) == 1
    return Outcome(victim, pids_in(mark), outcome[0], spent, seen, handlers.asked, followed)


def answered_by(result: Any, n: int = 7) -> str:
    assert not isinstance(result, Exception), result
    text = text_of(result)
    assert text.startswith(f"{n} from "), text
    return text.removeprefix(f"{n} from ")


async def test_a_read_only_call_on_a_killed_worker_is_answered_once_by_another(
    ready: Deployment, tmp_path: Path
) -> None:
    got = await call_and_signal(ready, tmp_path, "read_slow", signal.SIGKILL)
    other = answered_by(got.result)
    assert other != got.victim and got.ran == [got.victim, other]  # run twice: killed once, answered once
    assert got.progress == [1, 2]  # the repeat's progress (1, 2 again) did not go back


async def test_an_input_round_cut_by_a_kill_is_repeated_with_its_request_state(
    ready: Deployment, tmp_path: Path
) -> None:
    """confirm_slow (idempotentHint): its second round, carrying the requestState sealed by one
    worker, is killed on a second and answered by a third (any worker opens the state)."""
    got = await call_and_signal(ready, tmp_path, "confirm_slow", signal.SIGKILL)
    assert not isinstance(got.result, Exception), got.result
    sealer, opener = text_of(got.result).removeprefix("sealed by ").split(", opened by ")
    assert opener != got.victim and got.ran == [got.victim, opener] and sealer.isdigit()
    assert got.asked == 1  # the first round was not repeated: the user was asked once


async def test_a_call_not_safe_to_repeat_is_a_clear_error_at_once_and_runs_once(
    ready: Deployment, tmp_path: Path
) -> None:
    got = await call_and_signal(ready, tmp_path, "write_slow", signal.SIGKILL, sleep=5)
    error = got.result
    assert isinstance(error, OutcomeUnknown), error
    assert "tools/call of tool 'write_slow' may or may not have run" in error.message
    assert "not marked readOnlyHint or idempotentHint" in error.message and "retry='always'" in error.message
    assert got.spent < 2  # no hang, no waiting out the tool's 5 s
    await anyio.sleep(0.5)
    assert got.ran == [got.victim]  # never silently run again


async def test_retry_always_repeats_a_call_that_may_have_run(ready: Deployment, tmp_path: Path) -> None:
    got = await call_and_signal(ready, tmp_path, "write_slow", signal.SIGKILL, retry="always")
    other = answered_by(got.result)
    assert other != got.victim and got.ran == [got.victim, other]


async def test_a_call_on_a_draining_worker_is_answered_by_it(ready: Deployment, tmp_path: Path) -> None:
    """SIGTERM: the worker drains, finishing the call in flight (not repeated: it need not be);
    the next call on the same client reaches a worker that runs."""
    got = await call_and_signal(ready, tmp_path, "write_slow", signal.SIGTERM, then="write_slow")
    assert answered_by(got.result) == got.victim and got.ran == [got.victim]
    assert answered_by(got.then, 8) != got.victim


async def test_connect_refused_on_every_attempt_is_a_clear_error_after_the_bound() -> None:
    with refused_port() as port:
        url = f"http://127.0.0.1:{port}/mcp"  # nothing listens there
        async with connect_http(url, Client, protocol_version=STATELESS) as client:
            started = time.monotonic()
            with anyio.fail_after(10), pytest.raises(DeliveryFailed) as caught:
                await client.list_tools()
            spent = time.monotonic() - started
    assert caught.value.stage == "connect"
    assert caught.value.message.startswith(f"HTTP request failed: could not connect to {url}: ")
    assert "gave up after 3 attempts" in caught.value.message
    assert 0.25 <= spent < 3  # two backoffs (at least 0.05 + 0.2 s), then the error


@pytest.mark.slow
async def test_sixteen_clients_lose_nothing_while_workers_are_killed(
    ready: Deployment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """16 clients call an idempotent tool for `SCALEOUT_RETRY_SECONDS` (default 10 s) while a worker
    is killed every 2 s: every call is answered, once, with its own answer."""
    clients, seconds = 16, float(os.environ.get("SCALEOUT_RETRY_SECONDS", "10"))
    answers: dict[int, list[str]] = {}
    lost: list[str] = []
    kills: list[str] = []
    url = ready.base + "/mcp"
    repeats: list[str] = []  # each request the client sent again (`_delay` is asked once per repeat)
    delay = client_retry._delay  # pyright: ignore[reportPrivateUsage]

    def counted(attempt: int, failure: DeliveryFailed) -> float:
        repeats.append(failure.stage)
        return delay(attempt, failure)

    monkeypatch.setattr(client_retry, "_delay", counted)

    async def client(number: int) -> None:
        mark = tmp_path / f"client-{number}.pids"
        async with connect_http(url, Client, protocol_version=STATELESS, request_timeout=30) as session:
            await session.list_tools()
            end = time.monotonic() + seconds
            sequence = 0
            while time.monotonic() < end:
                sequence += 1
                n = number * 1_000_000 + sequence
                arguments = {"n": n, "sleep": 0.1, "mark": str(mark)}
                try:
                    result = await session.call_tool(name="idempotent_slow", arguments=arguments)
                except Exception as exc:  # a lost call: reported below
                    lost.append(f"{n}: {exc!r}")
                    continue
                answers.setdefault(n, []).append(text_of(result))

    async def killer() -> None:
        end = time.monotonic() + seconds
        while time.monotonic() + 2 < end:
            await anyio.sleep(2)
            # A worker serving calls now (the last pid each client's calls ran on): the kernel may
            # have handed all the clients' kept-alive connections to one or two workers.
            alive = set(workers_of(ready))
            serving = {pids[-1] for n in range(clients) if (pids := pids_in(tmp_path / f"client-{n}.pids"))}
            if alive & serving:
                victim = random.choice(sorted(alive & serving))
                os.kill(int(victim), signal.SIGKILL)
                kills.append(victim)

    with anyio.fail_after(seconds + 90):
        async with anyio.create_task_group() as group:
            group.start_soon(killer)
            for number in range(clients):
                group.start_soon(client, number)
    ran = [pid for number in range(clients) for pid in pids_in(tmp_path / f"client-{number}.pids")]
    runs = len(ran)
    duplicated = sum(1 for got in answers.values() if len(got) > 1)
    crossed = sum(1 for n, got in answers.items() if not got[0].startswith(f"{n} from "))
    print(
        f"\n{clients} clients, {seconds:g} s, {len(kills)} workers killed: {len(answers)} calls answered, "
        f"{len(lost)} lost, {duplicated} duplicated answers, {crossed} crossed; "
        f"{runs} runs of the tool; {len(repeats)} requests sent again ({', '.join(sorted(set(repeats)))})"
    )
    assert not lost, lost[:5]
    assert answers and duplicated == 0 and crossed == 0
    assert len(kills) >= 3
