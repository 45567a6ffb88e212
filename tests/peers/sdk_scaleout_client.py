"""The official MCP Python SDK (mcp==2.3.0) client against several workers behind one port, with no
sticky routing: its HTTP client keeps no connection alive, so every request (POST, GET, DELETE)
opens a new connection and may reach any worker. Runs in the SDK's venv; prints one JSON report.

    <sdk-python> tests/peers/sdk_scaleout_client.py --version 2025-11-25 --url http://127.0.0.1:PORT/mcp

The app is tests/peers/scaleout_sessions_app.py: `whoami` names the worker that ran it, `log` logs
at every level, `ask` sends elicitation/create and waits for the answer. An event hook records, for
every POST that carries the client's response to a server request, the worker it reached and how
long the POST took (`x-worker`), so the test can see responses reaching another worker than the one
waiting for them.
"""

from __future__ import annotations

import argparse
import json
import time
import traceback
import warnings
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from sdk_handshake import LATEST, sdk_initialize  # beside this script

warnings.simplefilter("ignore")


async def run(version: str, url: str, asks: int) -> dict[str, Any]:
    report: dict[str, Any] = {"steps": {}}
    levels: list[str] = []
    responses: list[dict[str, Any]] = []  # the client's responses to server requests: {id, worker, seconds}
    logged: list[Any] = []  # the data of every log message
    resumptions: list[dict[str, Any]] = []  # GETs with Last-Event-ID: {worker, status}

    sent: dict[int, dict[str, Any]] = {}  # id(request) -> its entry in `responses`

    async def on_request(request: httpx2.Request) -> None:
        if request.method == "GET" and "last-event-id" in request.headers:
            entry = {"worker": None, "status": None}
            resumptions.append(entry)
            sent[id(request)] = entry
        if request.method != "POST":
            return
        try:
            body = json.loads(request.content)
        except ValueError:
            return
        if isinstance(body, dict) and "method" not in body and ("result" in body or "error" in body):
            entry = {"id": body.get("id"), "worker": None, "status": None, "started": time.perf_counter()}
            responses.append(entry)
            sent[id(request)] = entry

    async def on_response(response: httpx2.Response) -> None:
        entry = sent.pop(id(response.request), None)
        if entry is not None:  # may come after the tool's answer: the worker answers 202 once it has handed it on
            entry["worker"] = response.headers.get("x-worker")
            entry["status"] = response.status_code
            if "started" in entry:
                entry["seconds"] = time.perf_counter() - entry.pop("started")

    http = httpx2.AsyncClient(
        timeout=httpx2.Timeout(30, read=300),
        limits=httpx2.Limits(max_keepalive_connections=0),  # a new connection per request: any worker
        event_hooks={"request": [on_request], "response": [on_response]},
    )

    async def elicitation(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"name": "Grace"})

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        levels.append(params.level)
        logged.append(params.data)

    async def step(name: str, coro: Any, seconds: float = 30) -> Any:
        try:
            with anyio.fail_after(seconds):
                value = await coro
            report["steps"][name] = value
            return value
        except Exception as exc:  # noqa: BLE001 - reported to the test
            report["steps"][name] = {"error": repr(exc), "traceback": traceback.format_exc()}
        return None

    async with (
        http,
        streamable_http_client(url, http_client=http) as (read_stream, write_stream),
        ClientSession(
            read_stream,
            write_stream,
            elicitation_callback=elicitation,
            logging_callback=on_log,
            client_info=types.Implementation(name="sdk-scaleout-client", version="2.3.0"),
        ) as session,
    ):

        async def initialize() -> Any:
            return (await sdk_initialize(session, version, "sdk-scaleout-client")).protocol_version

        if await step("initialize", initialize()) is None:
            return report

        async def call(name: str) -> str:
            result = await session.call_tool(name, {})
            if result.is_error:
                raise RuntimeError(f"{name}: {result.content}")
            return result.content[0].text  # type: ignore[union-attr]

        async def whoami() -> list[str]:
            """12 calls, then more (paced, bounded) until two workers answered: a loaded machine's
            kernel may hand a burst of new connections to one worker."""
            workers = [await call("whoami") for _ in range(12)]
            while len(set(workers)) < 2 and len(workers) < 60:
                await anyio.sleep(0.05)
                workers.append(await call("whoami"))
            return workers

        await step("whoami", whoami())

        async def logging(level: str) -> list[str]:
            await session.set_logging_level(level)  # type: ignore[arg-type]
            levels.clear()
            worker = await call("log")
            await anyio.sleep(0.3)  # the messages came before the answer, on its stream; nothing more follows
            return [worker, *levels]

        await step("log_warning", logging("warning"))
        await step("log_critical", logging("critical"))

        async def ask() -> list[dict[str, Any]]:
            rounds: list[dict[str, Any]] = []
            for _ in range(asks):
                before = len(responses)
                started = time.perf_counter()
                text = await call("ask")
                seconds = time.perf_counter() - started
                answered = responses[before:]
                rounds.append({"text": text, "seconds": seconds, "responses": answered})
            return rounds

        await step("ask", ask())
        await anyio.sleep(0.5)  # the last 202s

        async def resume(rounds: int) -> list[dict[str, Any]]:
            """A tool whose POST stream the server ends early (SEP-1699): the SDK resumes it with a
            GET and Last-Event-ID, on a new connection, so often through another worker."""
            await session.set_logging_level("info")
            done: list[dict[str, Any]] = []
            for n in range(rounds * 3):
                logged.clear()
                before = len(resumptions)
                worker = await call("countdown")
                done.append({"worker": worker, "logged": list(logged), "resumed": resumptions[before:]})
                relayed = any(r["worker"] != d["worker"] for d in done for r in d["resumed"])
                if n + 1 >= rounds and relayed:  # bounded: more rounds only until one was relayed
                    break
            return done

        if version >= "2025-11-25":  # the first version where a server may end a POST stream early
            await step("resume", resume(6), seconds=90)

        async def ping() -> str:
            await session.send_ping()
            return "ok"

        await step("ping", ping())
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", default=LATEST)
    parser.add_argument("--url", required=True)
    parser.add_argument("--asks", type=int, default=12)
    args = parser.parse_args()
    print(json.dumps(anyio.run(run, args.version, args.url, args.asks)))


if __name__ == "__main__":
    main()
