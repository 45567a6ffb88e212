"""Replaying a recorded client: drive a live server (stdio command or Streamable HTTP URL) with what
the client sent in a recording and report, message by message, where the server's answers differ
from the recorded ones.

The recorded client messages are sent in their order, each request waiting for its answer; a
request the server sends meanwhile (sampling, roots, elicitation) is answered with the client's
recorded answer to the matching recorded request. Answers are compared as JSON (`compare`), the
JSON-RPC id left out and any dotted path in `ignore` (e.g. `result.structuredContent.temperature`)
dropped from both sides."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, cast

import anyio

from mcp_bindings.runtime.recording.compare import (
    DEFAULT_RULES,
    Difference,
    MatchRules,
    differences,
    drop_path,
    first_message,
    what_is,
)
from mcp_bindings.runtime.recording.session_file import Entry, Recording
from mcp_bindings.runtime.recording.stdio_proxy import frames
from mcp_bindings.runtime.rpc.errors import METHOD_NOT_FOUND
from mcp_bindings.runtime.rpc.jsonrpc import encode_error
from mcp_bindings.runtime.rpc.transport import Transport
from mcp_bindings.runtime.stdio.connect import ChildEnv, spawn
from mcp_bindings.runtime.stdio.connect import shutdown_process as stop
from mcp_bindings.v2025_11_25 import names as v2025

ANSWER_SECONDS = 30.0


@dataclass(frozen=True)
class Mismatch:
    """One recorded request whose live answer differs (or never came)."""

    where: str  # file:line of the recorded request
    request: str  # `tools/call echo`
    differences: tuple[Difference, ...] = ()
    note: str = ""

    def text(self) -> str:
        if self.note:
            return f"{self.where} {self.request}: {self.note}"
        return "\n".join(f"{self.where} {self.request}: {d.describe()}" for d in self.differences)

    def to_json(self) -> dict[str, Any]:
        return {
            "where": self.where,
            "request": self.request,
            "differences": [d.to_json() for d in self.differences],
            "note": self.note,
        }


@dataclass
class ClientReplayReport:
    source: str
    checked: int = 0
    mismatches: list[Mismatch] = field(default_factory=lambda: [])

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def text(self) -> str:
        if self.ok:
            return f"{self.source}: all {self.checked} recorded answers match"
        lines = [m.text() for m in self.mismatches]
        lines.append(f"{len(self.mismatches)} of {self.checked} answers differ from {self.source}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "checked": self.checked, "mismatches": [m.to_json() for m in self.mismatches]}


def answer_body(message: Mapping[str, Any], ignore: Sequence[str] = ()) -> dict[str, Any]:
    """What of an answer is compared: its result or error, without the id and the ignored paths."""
    body: dict[str, Any] = {k: v for k, v in message.items() if k in ("result", "error")}
    for dotted in ignore:
        body = drop_path(body, dotted)
    return body


class _Driver:
    def __init__(self, recording: Recording, transport: Transport, rules: MatchRules) -> None:
        self.recording = recording
        self.transport = transport
        self.rules = rules
        self.answers: dict[Any, dict[str, Any]] = {}
        self.arrived: dict[Any, anyio.Event] = {}
        # The server's recorded requests, each with the client's recorded answer.
        self.server_requests: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
        answers = {e.id: e.message for e in recording.entries if e.dir == "client" and e.is_response}
        for entry in recording.entries:
            if entry.dir == "server" and entry.is_request and entry.message is not None:
                self.server_requests.append((entry.message, answers.get(entry.id)))

    async def read(self) -> None:
        async for frame in frames(self.transport):
            message = first_message(frame)
            if message and "method" not in message:
                self.answers[message.get("id")] = message
                event = self.arrived.get(message.get("id"))
                if event is not None:
                    event.set()
            elif "id" in message:
                await self._answer_server(message)
        for event in self.arrived.values():  # the server is gone: no answer is waited for any more
            event.set()

    async def _answer_server(self, request: dict[str, Any]) -> None:
        key = self.rules.key(request)
        for recorded, answer in self.server_requests:
            if answer is not None and self.rules.key(recorded) == key:
                await self.transport.send(json.dumps({**answer, "id": request["id"]}).encode())
                return
        text = f"the recording has no answer to the server's {what_is(request)}"
        await self.transport.send(encode_error(request["id"], METHOD_NOT_FOUND, text))

    async def ask(self, entry: Entry) -> dict[str, Any] | None:
        message = entry.message or {}
        self.arrived[entry.id] = anyio.Event()
        await self.transport.send(json.dumps(message).encode(), entry.id)
        with anyio.move_on_after(ANSWER_SECONDS):
            await self.arrived[entry.id].wait()
        answer = self.answers.get(entry.id)
        result = (answer or {}).get("result")
        if entry.method == v2025.INITIALIZE and isinstance(result, dict):
            version = cast("dict[str, Any]", result).get("protocolVersion")
            # Over HTTP, later requests carry it as MCP-Protocol-Version (stdio ignores it).
            self.transport.use_version(version if isinstance(version, str) else None, None)
        return answer


@asynccontextmanager
async def _server(
    target: Sequence[str], env: ChildEnv, cwd: str | None, headers: Mapping[str, str] | None
) -> AsyncIterator[Transport]:
    """A transport to the server: a Streamable HTTP URL, or a stdio command spawned for the replay."""
    if len(target) == 1 and target[0].startswith(("http://", "https://")):
        from mcp_bindings.runtime.client.http import StreamableHttpTransport

        async with StreamableHttpTransport(target[0], headers=headers) as transport:
            yield transport
        return
    process, transport = await spawn(target, env=env, cwd=cwd)
    try:
        yield transport
    finally:
        await stop(process)
        await transport.aclose()


async def replay_client(
    recording: Recording,
    target: Sequence[str],
    *,
    ignore: Sequence[str] = (),
    rules: MatchRules = DEFAULT_RULES,
    env: ChildEnv = None,
    cwd: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> ClientReplayReport:
    """Drive the server `target` (a stdio command, or one Streamable HTTP URL) with the recorded
    client side; what differed, request by request. A stdio server gets the safe variables of our
    environment and `env` (`connect_stdio`'s policy, `child_environment`; `env=INHERIT`: all)."""
    recorded_answers = {e.id: e for e in recording.entries if e.dir == "server" and e.is_response}
    report = ClientReplayReport(str(recording.path or "the recording"))
    async with _server(target, env, cwd, headers) as transport:
        driver = _Driver(recording, transport, rules)
        async with anyio.create_task_group() as group:
            group.start_soon(driver.read)
            for entry in recording.entries:
                if entry.dir != "client" or entry.message is None or entry.is_response:
                    continue
                expected = recorded_answers.get(entry.id)
                if entry.is_notification or expected is None:  # (a request never answered in the recording)
                    await transport.send(json.dumps(entry.message).encode())
                    continue
                report.checked += 1
                got = await driver.ask(entry)
                where, name = recording.where(entry), what_is(entry.message)
                if got is None:
                    report.mismatches.append(Mismatch(where, name, note=f"no answer within {ANSWER_SECONDS:g} s"))
                    continue
                diffs = differences(answer_body(expected.message or {}, ignore), answer_body(got, ignore))
                if diffs:
                    report.mismatches.append(Mismatch(where, name, tuple(diffs)))
            group.cancel_scope.cancel()
    return report
