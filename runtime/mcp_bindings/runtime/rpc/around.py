"""The one shape of what runs around a message, on both sides: `async def __call__(call, next)`.

`call` is the typed call object of its side: on the server a `server.calls.ServerCall` (a request
a handler serves: the method, its params typed in the server's version and as received, the
context, the method's spec) or a `server.calls.NoticeCall` (a notification); on the client a
`client.seam.OutgoingCall` (a typed request or notification on its way out). `next(call)` runs the
rest of the chain and the end of it (the handler; the send), and returns its answer. An around may
act before `next` (refuse by raising, change the call), instead of it (answer itself), or after it
(look at or replace the answer). One with a `methods` attribute (a collection of method names) runs
for those methods only (`wants`); the chain of a method is built once, so a method nothing wants
pays nothing. Notifications reach a user's around only where its `methods` names them (`names`).

On the server, the runtime's features put arounds on a method's plan (`server.seam`: tool schema
checks, tasks, MCP Apps' visibility), and user middleware (`middleware.chain`) and tracing
(`middleware.tracing`) are arounds; on the client, the user's hooks are (`client.seam`).
docs/architecture.md, "One around shape", has a worked plug-in.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Iterable
from typing import Protocol, TypeVar

__all__ = ["Around", "Next", "chain", "link", "names", "wants"]

C = TypeVar("C")  # the call object's type: `ServerCall` or `OutgoingCall`
R = TypeVar("R")  # what the chain answers

# The rest of a chain: runs `call` through what is inside and returns the answer.
Next = Callable[[C], Awaitable[R]]


class Around(Protocol[C, R]):
    """What runs around one message: `async def __call__(self, call, next)` (a plain `async def`
    function of `(call, next)` is one too)."""

    def __call__(self, call: C, next: Next[C, R], /) -> Awaitable[R]: ...


def wants(around: object, method: str) -> bool:
    """Whether `around` runs for `method`: always, unless it names its methods (`around.methods`)."""
    methods: Collection[str] | None = getattr(around, "methods", None)
    return methods is None or method in methods


def names(around: object, method: str) -> bool:
    """Whether `around` names `method` in its `methods`: how one opts in to notifications, which an
    around without `methods` (every request) does not see."""
    methods: Collection[str] | None = getattr(around, "methods", None)
    return methods is not None and method in methods


def link(around: Around[C, R], inner: Next[C, R]) -> Next[C, R]:
    """`around` in front of `inner`: one step of a chain."""

    def step(call: C) -> Awaitable[R]:
        return around(call, inner)

    return step


def chain(arounds: Iterable[Around[C, R]], end: Next[C, R]) -> Next[C, R]:
    """`arounds` (outermost first) around `end`."""
    run = end
    for around in reversed(list(arounds)):
        run = link(around, run)
    return run
