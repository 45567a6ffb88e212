"""`Depends`: a parameter of a tool, resource, prompt or completion function that the app provides,
not the client. `db: Annotated[Database, Depends(open_db)]`: the client never sees `db` (it is not
in the inputSchema); the app calls `open_db` for each request (or once, `scope="app"`) and passes
its value. The provider may be a function or a coroutine function returning the value, or a
generator / async generator yielding it once (what follows the `yield` is its clean-up, run after
the request, or when the app stops for `scope="app"`). Its own parameters may be the `Context`
(request scope only) and other dependencies, `Annotated[..., Depends(...)]`."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Generic, Literal, TypeVar

__all__ = ["DependencyKind", "Depends", "Scope"]

T = TypeVar("T")
Scope = Literal["request", "app"]
DependencyKind = Literal["value", "coroutine", "generator", "async_generator"]


class Depends(Generic[T]):
    """A provided parameter: `Annotated[T, Depends(provider)]` (see the module)."""

    __slots__ = ("context", "fn", "kind", "needs", "scope")

    def __init__(self, fn: Callable[..., T] | Callable[..., Any], *, scope: Scope = "request") -> None:
        if scope not in ("request", "app"):
            raise ValueError(f"Depends(scope={scope!r}): 'request' (each call) or 'app' (once while serving)")
        self.fn = fn
        self.scope: Scope = scope
        self.kind: DependencyKind = (
            "async_generator"
            if inspect.isasyncgenfunction(fn)
            else "generator"
            if inspect.isgeneratorfunction(fn)
            else "coroutine"
            if inspect.iscoroutinefunction(fn)
            else "value"
        )
        # Filled when a function using it is registered (`signature.analyse`): the parameter that
        # gets the Context (None: none), and the provider's own dependencies.
        self.context: str | None = None
        self.needs: dict[str, Depends[Any]] | None = None

    def __repr__(self) -> str:
        return f"Depends({getattr(self.fn, '__qualname__', self.fn)!r}, scope={self.scope!r})"
