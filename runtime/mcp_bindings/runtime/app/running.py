"""How an `App` runs: on stdio or Streamable HTTP (`run`), as an ASGI app to mount (`asgi`), and
in memory against a client of any version (`test_client`). A collaborator `App` holds (`app.core`)."""

from __future__ import annotations

import importlib
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from mcp_bindings.runtime.app.lifespan import Lifetime
from mcp_bindings.runtime.client.options import SessionArgs
from mcp_bindings.runtime.client.stub import ClientStub
from mcp_bindings.runtime.protocol import registry

if TYPE_CHECKING:
    from mcp_bindings.runtime.app.auth import ProtectedApp
    from mcp_bindings.runtime.app.core import App
    from mcp_bindings.runtime.http.app import StreamableHTTPApp
    from mcp_bindings.runtime.protocol.request_state import RequestStateSealer
    from mcp_bindings.runtime.server.host import ServerHost


__all__ = ["Running", "TestClientOptions"]

C = TypeVar("C", bound=ClientStub)


class TestClientOptions(SessionArgs, total=False):
    """`App.test_client`'s keyword arguments: the answers to what the app asks of its client, then
    `memory.connect_in_memory`'s (see `ClientOptions`)."""

    elicit: Callable[[str, dict[str, Any]], Any] | None
    sample: Callable[[dict[str, Any]], Any] | None
    roots: Sequence[str | Mapping[str, Any]] | None
    on_log: Callable[[dict[str, Any]], Any] | None
    on_notification: Callable[[str, Any], Any] | None
    supported_versions: list[str] | None
    request_state: RequestStateSealer | None
    host: ServerHost | None


class Running:
    """`App.run`, `App.asgi` and `App.test_client`: a collaborator the app holds (`app._running`)."""

    def __init__(self, app: App, lifetime: Lifetime) -> None:
        self.app, self.lifetime = app, lifetime

    def run(self, transport: str, address: tuple[str, int, str], options: Mapping[str, Any]) -> None:
        """Serve until interrupted: on stdin/stdout, or Streamable HTTP (and the legacy SSE transport)
        at http://host:port/path (`address`; printed on stderr once it listens). `options` go to
        `serve_stdio` / `serve_http`. The app's lifespan runs around it."""
        host, port, path = address
        if transport == "stdio":
            from mcp_bindings.runtime.stdio.serve import serve_stdio

            serve_stdio(self.app.server, lifespan=self.lifetime, **options)
        elif transport == "http":
            from mcp_bindings.runtime.http.serving import serve_http

            auth = self.app.auth

            def wrap(app: StreamableHTTPApp) -> Any:
                return app if auth is None else auth.protect(app, self.app.registries)

            serve_http(self.app.server, host=host, port=port, path=path, lifespan=self.lifetime, wrap=wrap, **options)
        else:
            raise ValueError(f"unknown transport {transport!r}: 'stdio' or 'http'")

    def asgi(self, **options: Any) -> StreamableHTTPApp | ProtectedApp:
        """The ASGI app (Streamable HTTP at `/mcp`), to mount in Starlette, FastAPI, ... at any prefix
        (`Mount("/api", app=mcp)`: `/api/mcp`; `path="/"` serves at the prefix itself). Its ASGI
        lifespan runs the app's; where the application does not run a mounted app's lifespan
        (Starlette, FastAPI), pass it on: `Starlette(..., lifespan=mcp.lifespan)`. `options` are
        `http_server.create_app`'s. With `App(auth=...)`, behind bearer auth (`ProtectedApp`; the
        Protected Resource Metadata is served at the root's well-known path: mount it at the root)."""
        from mcp_bindings.runtime.http.app import create_app

        app = create_app(self.app.server, lifespan=self.lifetime, **options)
        return app if self.app.auth is None else self.app.auth.protect(app, self.app.registries)

    @asynccontextmanager
    async def test_client(
        self, protocol_version: str | type[ClientStub] | None = None, **options: Any
    ) -> AsyncGenerator[Any]:
        """An in-memory client connected to the app: the generated `Client` of `protocol_version`
        (default: the app's version). A version string (`app.test_client("2025-11-25")`) or the `Client`
        class itself (`app.test_client(Client)`, from `mcp_bindings.v2025_11_25.client`) types the
        client as that version's `Client`, so a type checker sees a misspelled method or argument;
        its `protocol_version` is a `Literal` of the versions it speaks (a name that is not a known
        version gives the same client, untyped).
        `elicit(message, requested_schema)` answers elicitations (a dict of content accepts, a
        single value accepts a single-value form, None declines, a dict with "action" is sent as
        is), `sample(params)` sampling (a string is the model's text), `roots` roots/list;
        `on_log(params)` gets log messages, `on_notification(method, params)` every other
        notification. The other `options` (`TestClientOptions`) go to `memory.connect_in_memory`."""
        from mcp_bindings.runtime.app.testing import client_handlers
        from mcp_bindings.runtime.memory import connect_in_memory

        hooks = {name: options.pop(name, None) for name in ("elicit", "sample", "roots", "on_log", "on_notification")}
        handlers = options.pop("handlers", None)
        client_cls: type[ClientStub]
        if isinstance(protocol_version, type):
            client_cls = protocol_version
            version = client_cls.protocol.info.key
        else:
            version = protocol_version or self.app.protocol_version
            package = registry.load_version(version).__name__
            client_cls = importlib.import_module(f"{package}.client").Client
        if handlers is None and any(hook is not None for hook in hooks.values()):
            handlers = client_handlers(version, **hooks)
        async with (
            self.lifetime(),
            connect_in_memory(
                self.app.server, client_cls, handlers=handlers, protocol_version=version, **options
            ) as client,
        ):
            yield client
