"""What runs around an `App`'s requests: its middleware (`@app.middleware`, `App(middleware=[...])`),
installed on the dispatch seam of its server when the server is built (`middleware.chain`). An app
without middleware installs nothing. A collaborator `App` holds (`app.core`)."""

from __future__ import annotations

from typing import TypeVar

from mcp_bindings.runtime.app.errors import AppDefinitionError
from mcp_bindings.runtime.app.lifespan import Lifetime, started_value
from mcp_bindings.runtime.middleware.chain import Middleware, MiddlewareFeature
from mcp_bindings.runtime.server.host import host_for
from mcp_bindings.runtime.server.stubs import ServerStub

__all__ = ["Around"]

M = TypeVar("M", bound=Middleware)


class Around:
    """`App.middleware`: the app's middleware, a collaborator the app holds (`app._around`)."""

    def __init__(self, lifetime: Lifetime) -> None:
        self.lifetime = lifetime
        self.chain: list[Middleware] = []

    def add(self, middleware: M, *, serving: bool) -> M:
        """Run `middleware` around every request the app's handlers serve (after those registered
        before it); refused once the app serves."""
        if serving:
            raise AppDefinitionError(
                "app.middleware: the app is already serving; register middleware before it starts "
                "(or pass App(middleware=[...]))"
            )
        if not callable(middleware):
            raise AppDefinitionError(f"app.middleware: {middleware!r} is not callable (call, call_next) -> result")
        self.chain.append(middleware)
        return middleware

    def install(self, server: ServerStub) -> None:
        """On the app's server, once built: the chain on its dispatch seam (nothing without middleware)."""
        if self.chain:
            lifetime = self.lifetime
            host_for(server).use(MiddlewareFeature(self.chain, lambda: started_value(lifetime.value)))
