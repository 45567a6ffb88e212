"""Await a coroutine in the current task, paying for what only a waiting coroutine needs only when
it waits.

Most HTTP requests complete without ever suspending: the handler awaits nothing that blocks. What
guards a wait (a task watching for the client's disconnect while a stateless request runs: one
created, started and cancelled per request) is wasted on them. `when_suspended(coroutine, arm)`
runs the coroutine's first step at once; only if it suspends is `arm()` called, before the task
yields to the event loop, so the guard is in place before anything else can happen. From then on
it is `await coroutine`: what the event loop sends or throws in (cancellation included) goes on
to the coroutine. It costs about a microsecond itself (the StopIteration of the first step), so
it pays only where the guard costs more (a task does; a dict entry does not).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Coroutine, Generator
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["when_suspended"]


@types.coroutine
def when_suspended(coroutine: Coroutine[Any, Any, T], arm: Callable[[], object]) -> Generator[Any, Any, T]:
    """`await when_suspended(coroutine, arm)`: `await coroutine`, calling `arm()` once, just before it
    first suspends (never, if it completes without waiting)."""
    try:
        waiting_on = coroutine.send(None)
    except StopIteration as done:
        return done.value
    arm()
    while True:  # the rest of `await coroutine`: what the event loop sends or throws in goes on to it
        try:
            sent = yield waiting_on
        except GeneratorExit:
            coroutine.close()
            raise
        except BaseException as exc:  # noqa: BLE001 - cancellation included: the coroutine decides
            try:
                waiting_on = coroutine.throw(exc)
            except StopIteration as done:
                return done.value
        else:
            try:
                waiting_on = coroutine.send(sent)
            except StopIteration as done:
                return done.value
