"""Asking a client from a stateless request (2026-07-28), by deterministic replay: the record of a
request's asks across its rounds (`Replay`) and the exceptions that unwind a handler.

A stateless request cannot carry requests to its client: there the ask rides a multi-round-trip
request. The first time the handler asks, the ask is recorded and the handler is unwound
(`Suspend`, a `BaseException`, so an `except Exception` in the handler does not swallow it); the
app answers with an `InputRequiredResult` holding the ask, and a `requestState` (sealed by the
runtime) recording every ask so far with the answers already given. The client answers and
retries; the handler runs again from the top, and its asks are answered in order from the record,
until it asks something new (the next round) or returns. Asks started concurrently
(`asyncio.gather`, a task group) before the handler is unwound go out in the same round.

What that asks of a handler: up to its last ask, it must ask the same things in the same order
on every run (an ask that differs from the record is an internal error naming it); side effects
before an ask run once per round. Logs and progress sent while replaying recorded asks are not
sent again. `Context` (`app.context`) asks through a `Replay` where the request is stateless.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

import orjson
from pydantic import ValidationError

from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.spec import ProtocolTables
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError

__all__ = ["STATE_KEY", "Boundary", "Replay", "StartTask", "Suspend", "ask_digest"]

STATE_KEY = "mcp-bindgen/app"  # marks a requestState as the replay record of this layer


class Suspend(BaseException):
    """An ask without an answer yet, on a stateless request: unwinds the handler (see the module doc)."""


class StartTask(BaseException):
    """`ctx.start_task()` reached by a call that asked its input first: unwinds the handler, which
    starts the task; the task runs the function again from the top, its asks answered from the record."""


# Where a tool declared `input_first=True` calls `ctx.start_task()`, what happens (`Context.boundary`):
#   "unwind": the call's input rounds are over; unwind the handler (`StartTask`) to start the task;
#   "pass":   the task's run: the asks before it were answered from the record; later asks are live;
#   "stay":   nothing (the call is a task from its start, or its work runs at once);
#   None:     the tool did not declare `input_first=True` (an error).
Boundary = Literal["unwind", "pass", "stay"] | None


def ask_digest(method: str, params: Any) -> str:
    import hashlib

    return hashlib.sha256(orjson.dumps([method, params], option=orjson.OPT_SORT_KEYS)).hexdigest()[:32]


class Replay:
    """The asks of one stateless request across its rounds: the record from `requestState`, the
    answers from `inputResponses`, and the asks of this run that have no answer yet."""

    __slots__ = ("answers", "asks", "pending", "position", "stub")

    def __init__(
        self, stub: ProtocolTables, request_state: str | None, input_responses: Mapping[str, Any] | None
    ) -> None:
        self.stub = stub
        self.asks: list[tuple[str, str, str]] = []  # (method, digest, key) of each answered ask, in order
        self.answers: list[Any] = []  # the answers (the stub's result JSON)
        self.pending: list[tuple[str, Any, str, str]] = []  # unanswered asks: (method, params, digest, key)
        self.position = 0
        if request_state is None:
            return
        record = self._record(request_state)
        asks = [(str(a[0]), str(a[1]), str(a[2])) for a in record["asks"]]
        answers: list[Any] = list(record["answers"])
        for index in range(len(answers), len(asks)):  # the last round's asks, answered now (in order)
            response = (input_responses or {}).get(asks[index][2])
            if response is None:
                break  # unanswered: asked again when the handler gets there
            answers.append(self._answer(asks[index][0], asks[index][2], response))
        self.asks, self.answers = asks[: len(answers)], answers

    @staticmethod
    def _record(request_state: str) -> dict[str, Any]:
        try:
            record = orjson.loads(request_state)
        except orjson.JSONDecodeError:
            record = None
        if (
            not isinstance(record, dict)
            or cast("dict[str, Any]", record).get(STATE_KEY) != 1
            or not isinstance(cast("dict[str, Any]", record).get("asks"), list)
            or not isinstance(cast("dict[str, Any]", record).get("answers"), list)
            or not all(
                isinstance(a, list) and len(cast("list[Any]", a)) == 3 for a in cast("dict[str, Any]", record)["asks"]
            )
        ):
            raise McpError(INVALID_PARAMS, "Invalid params: params.requestState was not issued by this server's app")
        return cast("dict[str, Any]", record)

    def _answer(self, method: str, key: str, response: Any) -> Any:
        spec = self.stub.input_requests.get(method)
        data = versions.dump(response)
        if spec is None:
            return data
        try:
            versions.validate(spec.result, data)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            raise McpError(
                INVALID_PARAMS,
                f"Invalid params: inputResponses.{key} is not a {method} result: {first['msg']}",
            ) from None
        return data

    @property
    def replaying(self) -> bool:
        """Whether the handler is still before its first unanswered ask (what it sends is a repeat)."""
        return self.position < len(self.answers)

    def ask(self, method: str, params: Any, key: str | None = None) -> Any:
        index = self.position
        self.position += 1
        digest = ask_digest(method, params)
        key = key if key is not None else f"ask{index}"
        if index < len(self.answers):
            if self.asks[index] != (method, digest, key):
                raise McpError(
                    INTERNAL_ERROR,
                    f"Internal error: ask #{index + 1} of this handler ({method}) differs from the one it made in "
                    f"the previous round ({self.asks[index][0]}); a handler that asks for input must ask the same "
                    "things in the same order on every run",
                )
            return self.answers[index]
        if any(k == key for *_, k in self.asks) or any(k == key for *_, k in self.pending):
            raise McpError(
                INTERNAL_ERROR,
                f"Internal error: two asks of this handler use the key {key!r}; give each ask its own key=",
            )
        self.pending.append((method, params, digest, key))
        raise Suspend

    def input_required(self) -> Any:
        """The InputRequiredResult (the stub's model) for this run's unanswered asks."""
        requests = {k: {"method": m, "params": p} if p is not None else {"method": m} for m, p, _, k in self.pending}
        record = {
            STATE_KEY: 1,
            "asks": [list(a) for a in self.asks] + [[m, d, k] for m, _, d, k in self.pending],
            "answers": self.answers,
        }
        model = self.stub.input_required_result
        assert model is not None
        return versions.validator(model)(
            {"inputRequests": requests, "requestState": orjson.dumps(record).decode()}, by_name=False
        )
