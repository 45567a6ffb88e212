"""The OAuth proxy's test stack: a real OpenID provider (`oidc-provider` on 127.0.0.1, node) and apps
behind `Auth(proxy=OAuthProxy(...))` on uvicorn, each on a socket bound before the provider started
(the provider knows their callback URIs, and no port can be taken in between)."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from mcp_bindings.runtime.app import App, Auth, Context
from mcp_bindings.runtime.auth.proxy import MemoryProxyStore, OAuthProxy, Upstream, oidc
from tests.peers.auth_harness import bind_local, serve
from tests.support.oidc import OidcProvider

POOL = 10
KEY = "k" * 40  # the operator's key of the tests (32+ bytes)


@dataclass
class Site:
    base: str
    app: App
    store: MemoryProxyStore

    @property
    def mcp_url(self) -> str:
        return f"{self.base}/mcp"


class Sockets:
    """Bound sockets, each taken once (a test's proxy serves on one)."""

    def __init__(self) -> None:
        self.free = [bind_local() for _ in range(POOL)]

    def take(self) -> tuple[socket.socket, str]:
        return self.free.pop()


@pytest.fixture(scope="module")
def sockets() -> Iterator[Sockets]:
    pool = Sockets()
    yield pool
    for sock, _ in pool.free:
        sock.close()


@pytest.fixture(scope="module")
def provider(sockets: Sockets) -> Iterator[OidcProvider]:
    peer = OidcProvider([f"{base}/auth/callback" for _, base in sockets.free])
    peer.start()
    try:
        yield peer
    finally:
        peer.stop()


def notes_app(base: str, upstream: Upstream, store: MemoryProxyStore, **options: Any) -> App:
    """The app of the tests: `whoami` answers the principal (issuer, subject, client id)."""
    proxy = OAuthProxy(upstream, key=KEY, store=store, **options)
    app = App("notes", auth=Auth(resource=f"{base}/mcp", scopes=["notes"], proxy=proxy))

    @app.tool
    def whoami(ctx: Context) -> str:
        return ctx.principal or "nobody"

    return app


def upstream_of(provider: OidcProvider) -> Upstream:
    return oidc(provider.issuer, client_id=provider.client_id, client_secret=provider.client_secret)


@asynccontextmanager
async def proxied(sockets: Sockets, upstream: Upstream, **options: Any) -> AsyncIterator[Site]:
    """An app behind the proxy (settings `options`) on one of the pool's sockets, while the block runs."""
    sock, base = sockets.take()
    store = MemoryProxyStore()
    app = notes_app(base, upstream, store, **options)
    async with serve(app.asgi(), sock):
        yield Site(base, app, store)
