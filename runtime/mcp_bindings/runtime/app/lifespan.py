"""What lives as long as the app serves: the user's `App(lifespan=...)` (an async context manager
made from the app, entered when serving starts and left when it stops: a database pool, an HTTP
client) and the dependencies of scope "app" (`Depends(..., scope="app")`), made on first use and
cleaned up with it. Entered by `app.run`, `app.asgi()` (its ASGI lifespan, or the `lifespan=` of
the application it is mounted in) and `app.test_client()`; nested entries share one run. What a
feature of the app keeps running while it serves (`services`: the skills directory's watcher) is
entered with it, after the user's lifespan."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Hashable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any

import anyio

from mcp_bindings.runtime.app.errors import AppDefinitionError

__all__ = ["NOT_STARTED", "LifespanFactory", "Lifetime", "started_value"]

LifespanFactory = Callable[[Any], AbstractAsyncContextManager[Any]]


class _NotStarted:
    def __repr__(self) -> str:
        return "NOT_STARTED"


NOT_STARTED: Any = _NotStarted()


def started_value(value: Any) -> Any:
    """A lifespan's value as a handler (`ctx.lifespan`) or middleware (`call.lifespan`) reads it: an
    error saying how to start the lifespan where it has not started (not a `None`)."""
    if value is NOT_STARTED:
        raise AppDefinitionError(
            "the app's lifespan has not started: serve it with app.run(), app.asgi() (mounted: pass "
            "lifespan=mcp.lifespan to the application) or app.test_client()"
        )
    return value


class Lifetime:
    """One app's lifespan: its value while it runs, the app-scoped dependency values, and how many
    servings share it (the last one out leaves it)."""

    __slots__ = (
        "_entries",
        "_factory",
        "_lock",
        "_owner",
        "_shield",
        "_stack",
        "app_values",
        "children",
        "services",
        "value",
    )

    def __init__(self, owner: Any, factory: LifespanFactory | None) -> None:
        self._owner = owner
        self._factory = factory
        self._entries = 0
        self._stack: AsyncExitStack | None = None
        self._lock: anyio.Lock | None = None
        self._shield: anyio.CancelScope | None = None
        self.value: Any = NOT_STARTED  # the lifespan's value (None without a lifespan) while it runs
        self.app_values: dict[Hashable, Any] = {}  # app-scoped dependencies made so far
        self.children: list[Lifetime] = []  # of the apps mounted in this one (`app.mount`): run inside it
        # What the app's features run while it serves (each a function making an async context manager).
        self.services: list[Callable[[], AbstractAsyncContextManager[Any]]] = []

    @property
    def running(self) -> bool:
        return self._stack is not None

    @property
    def stack(self) -> AsyncExitStack:
        """Where app-scoped dependencies put their clean-up (left with the lifespan)."""
        if self._stack is None:
            raise RuntimeError("the app is not serving")
        return self._stack

    @asynccontextmanager
    async def __call__(self) -> AsyncGenerator[Any]:
        if self._lock is None:  # one per run: a lock belongs to the event loop it was made in
            self._lock = anyio.Lock()
        lock = self._lock
        async with lock:
            if self._entries == 0:
                stack = AsyncExitStack()
                await stack.__aenter__()
                try:
                    # Shielded when the run ends: the clean-up runs to its end, from the scopes it
                    # was entered in (a task group of the lifespan's, e.g. a proxy's connection).
                    self._shield = stack.enter_context(anyio.CancelScope())
                    value = None
                    if self._factory is not None:
                        value = await stack.enter_async_context(self._factory(self._owner))
                    for child in self.children:
                        await stack.enter_async_context(child())
                    for service in self.services:
                        await stack.enter_async_context(service())
                except BaseException:
                    await stack.aclose()
                    raise
                self._stack, self.value = stack, value
            self._entries += 1
        try:
            yield self.value
        finally:
            with anyio.CancelScope(shield=True):
                await lock.acquire()
            try:
                self._entries -= 1
                if self._entries == 0:
                    stack, self._stack, self._lock = self._stack, None, None
                    self.value = NOT_STARTED
                    self.app_values.clear()
                    if stack is not None:
                        # Not inside a scope of its own: a task group on the stack must be left
                        # from its own scope; the stack's first scope shields what it cleans up.
                        if self._shield is not None:
                            self._shield.shield = True
                        await stack.aclose()
            finally:
                lock.release()
