"""Sending a client request again when its connection failed before the answer arrived.

A stateless (2026-07-28) request can go to any worker, so when its exchange fails the client sends
it again, under a new id and on a new connection (which the listening socket or the load balancer
may hand to another worker), at most `ATTEMPTS` times with a short backoff, honouring a
`Retry-After` of up to `MAX_RETRY_AFTER_S`. What may be repeated depends on how far the failed
attempt got (`DeliveryFailed.stage`):

* never sent (connect error) or refused (HTTP 503): repeated, whatever the method;
* sent, then cut (the connection closed before the answer, a gateway's 502 / 504): it may have
  run, so it is repeated only when policy/retry.json says repeating it is safe (reads; a tools/call
  whose tool's annotations say readOnlyHint or idempotentHint), or when the client was connected
  with retry="always"; otherwise the caller gets `OutcomeUnknown` at once.

Handshake versions (up to 2025-11-25) keep a session on the worker that opened it, so only a
request that was never sent is repeated there. retry="never" repeats nothing.

The caller gets one answer: the failed attempts' ids are forgotten, so nothing they might still
produce reaches it. Progress goes to the caller's callback from whichever attempt runs, but never
backwards: after a retry, the new attempt's progress is passed on only once it exceeds what the
caller was already told. Log messages of a failed attempt were delivered as they arrived, and the
new attempt's are delivered too (the server logged both runs).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, TypeVar, cast, get_args

import anyio

from mcp_bindings.runtime.client.tool_catalog import ClientToolCatalog
from mcp_bindings.runtime.protocol.policies import policy_file
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.calls import ProgressCallback
from mcp_bindings.runtime.rpc.errors import DeliveryFailed, OutcomeUnknown

log = logs.logger("client")

POLICY_FILE = policy_file("retry.json")
RetryMode = Literal["safe", "always", "never"]
MODES: tuple[str, ...] = get_args(RetryMode)
ATTEMPTS = 3  # sends of one request in all (the first and two repeats)
BACKOFF_S = (0.1, 0.4)  # before the second and the third attempt (each scaled by a random 0.5 to 1)
MAX_RETRY_AFTER_S = 10.0  # a longer Retry-After ends the request with the server's request to wait

T = TypeVar("T")

# Set while a repeated attempt is being sent: the HTTP transport then sends it on a new connection.
_new_connection: ContextVar[bool] = ContextVar("mcp_new_connection", default=False)


def wants_new_connection() -> bool:
    """Whether the request being sent (by the current task) is a repeat, to go on a new connection."""
    return _new_connection.get()


@dataclass(frozen=True, slots=True)
class Rule:
    """One entry of policy/retry.json."""

    method: str
    repeatable: bool
    reason: str
    tool_hints: tuple[str, ...] = ()  # tools/call: repeatable only when one of these annotations is true


@cache
def rules() -> dict[str, Rule]:
    """The rules of policy/retry.json by method."""
    data = json.loads(POLICY_FILE.read_text(encoding="utf-8"))
    found: dict[str, Rule] = {}
    for section, repeatable in (("repeatable", True), ("not_repeatable", False)):
        for method, entry in cast("dict[str, dict[str, Any]]", data[section]).items():
            hints = tuple(cast("list[str]", entry.get("when_tool_annotations", ())))
            found[method] = Rule(method, repeatable, str(entry["reason"]), hints)
    return found


def check_mode(mode: str) -> RetryMode:
    if mode not in MODES:
        raise ValueError(f"retry must be one of {', '.join(repr(m) for m in MODES)}, not {mode!r}")
    return cast("RetryMode", mode)


class RetryPolicy:
    """A client's retry mode, and where it reads the listed tools' annotations (the client's catalog)."""

    def __init__(self, mode: str = "safe", tools: ClientToolCatalog | None = None) -> None:
        self.mode: RetryMode = check_mode(mode)
        self.tools = tools if tools is not None else ClientToolCatalog()

    def why_not_repeat(self, method: str, params: Any) -> str | None:
        """None when a request that may have run can be sent again (retry="safe"); else why not."""
        rule = rules().get(method)
        if rule is None:
            return f"policy/retry.json does not list {method} as safe to repeat"
        if not rule.repeatable:
            return f"{method} is not safe to repeat ({rule.reason})"
        if not rule.tool_hints:
            return None
        name = params.get("name") if isinstance(params, dict) else None
        listed = self.tools.tools.get(name) if isinstance(name, str) else None
        wanted = " or ".join(rule.tool_hints)
        if listed is None:
            return f"the tool's annotations are unknown (list the tools first; only a tool marked {wanted} is repeated)"
        if any(listed.annotations.get(hint) is True for hint in rule.tool_hints):
            return None
        return f"the tool is not marked {wanted}"


def _describe(method: str, params: Any) -> str:
    """The request, for messages: a tool call names its tool (a rule with tool hints is about tools)."""
    rule = rules().get(method)
    name = params.get("name") if isinstance(params, dict) and rule is not None and rule.tool_hints else None
    return f"{method} of tool {name!r}" if isinstance(name, str) else method


def _refusal(policy: RetryPolicy, method: str, params: Any, failure: DeliveryFailed, stateless: bool) -> str | None:
    """None when `failure` may be answered by sending the request again; else why not (for logs)."""
    if policy.mode == "never":
        return "retry='never'"
    if not stateless and failure.stage != "connect":
        return "a handshake session's request is repeated only when it was never sent"
    if failure.may_have_run and policy.mode == "safe":
        return policy.why_not_repeat(method, params)
    return None


def _delay(attempt: int, failure: DeliveryFailed) -> float:
    backoff = BACKOFF_S[min(attempt, len(BACKOFF_S)) - 1] * random.uniform(0.5, 1.0)
    return max(backoff, failure.retry_after or 0.0)


def _gave_up(failure: DeliveryFailed, attempts: int, started: float, why: str | None = None) -> DeliveryFailed:
    spent = time.monotonic() - started
    ending = why or f"gave up after {attempts} attempts in {spent:.1f} s, each on a new connection"
    return DeliveryFailed(
        failure.code,
        f"{failure.message}; {ending}",
        failure.data,
        stage=failure.stage,
        retry_after=failure.retry_after,
    )


async def send_with_retries(
    policy: RetryPolicy, method: str, params: Any, send: Callable[[], Awaitable[T]], *, stateless: bool
) -> T:
    """`await send()` (one attempt, a new id each time), repeated as this module describes."""
    started = time.monotonic()
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return await (send() if attempt == 1 else _on_new_connection(send))
        except DeliveryFailed as failure:
            refusal = _refusal(policy, method, params, failure, stateless)
            if refusal is not None:
                if failure.may_have_run and policy.mode == "safe" and stateless:
                    raise OutcomeUnknown(method, _describe(method, params), failure.message, refusal) from None
                raise
            if attempt == ATTEMPTS:
                raise _gave_up(failure, attempt, started) from None
            if failure.retry_after is not None and failure.retry_after > MAX_RETRY_AFTER_S:
                asked, bound = failure.retry_after, MAX_RETRY_AFTER_S
                why = f"the server asked to wait {asked:g} s (the client waits at most {bound:g} s)"
                raise _gave_up(failure, attempt, started, why) from None
            delay = _delay(attempt, failure)
            log.info(
                "%s: %s; sending it again on a new connection in %.2f s (attempt %d of %d)",
                _describe(method, params),
                failure.message,
                delay,
                attempt + 1,
                ATTEMPTS,
            )
            await anyio.sleep(delay)
    raise AssertionError("unreachable")  # the loop returns or raises


async def _on_new_connection(send: Callable[[], Awaitable[T]]) -> T:
    token = _new_connection.set(True)
    try:
        return await send()
    finally:
        _new_connection.reset(token)


class MonotonicProgress:
    """Passes progress on only when it exceeds what the caller was told, so a repeated attempt
    (which starts its progress again) never makes it go backwards."""

    __slots__ = ("_callback", "_highest")

    def __init__(self, callback: ProgressCallback) -> None:
        self._callback = callback
        self._highest: float | None = None

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        if self._highest is not None and progress <= self._highest:
            return
        self._highest = progress
        await self._callback(progress, total, message)


def monotonic(callback: ProgressCallback | None) -> ProgressCallback | None:
    return MonotonicProgress(callback) if callback is not None else None
