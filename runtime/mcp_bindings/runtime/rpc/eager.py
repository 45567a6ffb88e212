"""Await a coroutine in the current task, paying for what only a waiting coroutine needs only when
it waits.

Most HTTP requests complete without ever suspending: the handler awaits nothing that blocks. What
guards a wait (a task watching for the client's disconnect while a stateless request runs: one
created, started and cancelled per request) is wasted on them. `when_suspended(coroutine, arm)`
runs the coroutine's first step at once; only if it suspends is `arm()` called, before the task
yields to the event loop, so the guard is in place before anything else can happen. From then on
it is `await coroutine`: what the event loop sends or throws in (cancellation included) goes on
to the coroutine. It costs about a microsecond itself (the StopIteration of the first step), so
it pays only where the guard costs more (a task does; a dict entry does not). `run_inline` is the
same for the session's reader (`rpc.session`), each request in a context of its own.
"""

from __future__ import annotations

import contextvars
import operator
import types
from collections.abc import Callable, Coroutine, Generator
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["run_inline", "when_suspended"]


@types.coroutine
def when_suspended(coroutine: Coroutine[Any, Any, T], arm: Callable[[], object]) -> Generator[Any, Any, T]:
    """`await when_suspended(coroutine, arm)`: `await coroutine`, calling `arm()` once, just before it
    first suspends (never, if it completes without waiting)."""
    try:
        waiting_on = coroutine.send(None)
    except StopIteration as done:
        return done.value
    arm()
    return (yield from _rest(coroutine, waiting_on, operator.call))


@types.coroutine
def run_inline(coroutine: Coroutine[Any, Any, None], on_wait: Callable[[], object]) -> Generator[Any, Any, bool]:
    """Run `coroutine` to its end in the current task, in a context of its own (as a task of its
    own would: context variables it sets stay its own). False: it never had to wait. The first time
    it waits, `on_wait()` is called and it carries on as an ordinary await in this task (True): so
    cancel scopes and locks it holds stay in the task that entered them (`rpc.session`'s reader)."""
    context = contextvars.copy_context()
    try:
        waiting_on = context.run(coroutine.send, None)
    except StopIteration:  # not bound: its value is not needed (binding it would cost its creation)
        return False
    on_wait()
    yield from _rest(coroutine, waiting_on, context.run)
    return True


def _rest(coroutine: Coroutine[Any, Any, T], waiting_on: Any, run: Callable[..., Any]) -> Generator[Any, Any, T]:
    """The rest of `await coroutine` once it first waited (on `waiting_on`): what the event loop
    sends or throws in goes on to it, each step through `run` (`context.run`, or a plain call)."""
    while True:
        try:
            sent = yield waiting_on
        except GeneratorExit:
            coroutine.close()
            raise
        except BaseException as exc:  # noqa: BLE001 - cancellation included: the coroutine decides
            try:
                waiting_on = run(coroutine.throw, exc)
            except StopIteration as done:
                return done.value
        else:
            try:
                waiting_on = run(coroutine.send, sent)
            except StopIteration as done:
                return done.value
