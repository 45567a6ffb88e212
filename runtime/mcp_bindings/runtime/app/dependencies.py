"""Providing a call's dependencies (`Depends`): each made once per request (or once while the app
serves, `scope="app"`), nested ones first, with the clean-up of generator providers registered on
the request's exit stack (or the app's lifetime). A provider that fails is the request's failure,
reported as the function's own would be (a tool: `isError`, logged with its traceback)."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from typing import Any

from mcp_bindings.runtime.app.depends import Depends
from mcp_bindings.runtime.app.lifespan import Lifetime
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, McpError

__all__ = ["provide"]


async def provide(
    dependencies: Mapping[str, Depends[Any]], context: Any, stack: AsyncExitStack, lifetime: Lifetime
) -> dict[str, Any]:
    """The values of `dependencies` by parameter name. `context`: the request's Context (or None)."""
    made: dict[Any, Any] = {}  # provider -> its value in this request
    return {name: await _value(dep, context, stack, lifetime, made) for name, dep in dependencies.items()}


async def _value(
    dep: Depends[Any], context: Any, stack: AsyncExitStack, lifetime: Lifetime, made: dict[Any, Any]
) -> Any:
    if dep.fn in made:
        return made[dep.fn]
    if dep.scope == "app":
        key = dep.fn
        if key in lifetime.app_values:
            return lifetime.app_values[key]
        if not lifetime.running:
            raise McpError(
                INTERNAL_ERROR,
                f"{dep!r} lives as long as the app serves, and the app's lifespan has not started: serve it with "
                "app.run(), app.asgi() (mounted: pass lifespan=mcp.lifespan to the application) or app.test_client()",
            )
        stack = lifetime.stack
    kwargs: dict[str, Any] = {}
    for name, inner in (dep.needs or {}).items():
        kwargs[name] = await _value(inner, context, stack, lifetime, made)
    if dep.context is not None:
        kwargs[dep.context] = context
    value: Any
    if dep.kind == "async_generator":
        value = await stack.enter_async_context(asynccontextmanager(dep.fn)(**kwargs))
    elif dep.kind == "generator":
        value = stack.enter_context(contextmanager(dep.fn)(**kwargs))
    elif dep.kind == "coroutine":
        value = await dep.fn(**kwargs)
    else:
        value = dep.fn(**kwargs)
    if dep.scope == "app":
        lifetime.app_values[dep.fn] = value
    made[dep.fn] = value
    return value
