"""What runs around an `App`'s requests: its middleware (`@app.middleware`, `App(middleware=[...])`),
installed on the dispatch seam of its server when the server is built (`middleware.chain`). An app
without middleware installs nothing. A mixin of `App` (`app.core`)."""

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
    """`App.middleware`."""

    _middleware: list[Middleware]
    _server: ServerStub | None
    _lifetime: Lifetime

    def middleware(self, middleware: M) -> M:
        """Run `middleware` around every request the app's handlers serve (after those registered
        before it): `async def mw(call: Call, call_next: Next) -> result`; see
        `mcp_bindings.runtime.middleware`. `call.lifespan` is the app's lifespan value; `raise
        ToolError(...)` denies the request. Register it before the app serves."""
        if self._server is not None:
            raise AppDefinitionError(
                "app.middleware: the app is already serving; register middleware before it starts "
                "(or pass App(middleware=[...]))"
            )
        if not callable(middleware):
            raise AppDefinitionError(f"app.middleware: {middleware!r} is not callable (call, call_next) -> result")
        self._middleware.append(middleware)
        return middleware

    def _install_middleware(self, server: ServerStub) -> None:
        if self._middleware:
            lifetime = self._lifetime
            host_for(server).use(MiddlewareFeature(self._middleware, lambda: started_value(lifetime.value)))
