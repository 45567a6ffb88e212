"""The OAuth proxy's test stack: a real OpenID provider (`oidc-provider` on 127.0.0.1, node) and apps
behind `Auth(proxy=OAuthProxy(...))` on uvicorn, each on a socket bound before the provider started
(the provider knows their callback URIs, and no port can be taken in between)."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from mcp_bindings.runtime.app import App, Auth, Context
from mcp_bindings.runtime.auth import AuthorizationResponse, pkce_pair
from mcp_bindings.runtime.auth.proxy import MemoryProxyStore, OAuthProxy, ProxyStore, Upstream, oidc
from tests.peers.auth_harness import bind_local, serve
from tests.support.http import rpc, stateless, stateless_headers
from tests.support.oidc import FormSignIn, OidcProvider, free_port

POOL = 16  # sockets per test module: one per proxy a test starts
KEY = "k" * 40  # the operator's key of the tests (32+ bytes)
DOCS_SERVER = 'proxy=OAuthProxy(oidc(os.environ["OIDC_ISSUER"]))'  # marks docs/auth.md's proxied server


@dataclass
class Site:
    base: str
    app: App
    store: ProxyStore
    resource: str  # what its tokens are for (a second worker's is the first one's)

    @property
    def issuer(self) -> str:
        return self.resource.removesuffix("/mcp")

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


def notes_app(resource: str, upstream: Upstream, store: ProxyStore, **options: Any) -> App:
    """The app of the tests: `whoami` answers the principal (issuer, subject, client id)."""
    proxy = OAuthProxy(upstream, key=KEY, store=store, **options)
    app = App("notes", auth=Auth(resource=resource, scopes=["notes"], proxy=proxy))

    @app.tool
    def whoami(ctx: Context) -> str:
        return ctx.principal.key if ctx.principal else "nobody"

    return app


def upstream_of(provider: OidcProvider) -> Upstream:
    return oidc(provider.issuer, client_id=provider.client_id, client_secret=provider.client_secret)


@asynccontextmanager
async def proxied(
    sockets: Sockets, upstream: Upstream, store: ProxyStore | None = None, resource: str | None = None, **options: Any
) -> AsyncIterator[Site]:
    """An app behind the proxy (settings `options`) on one of the pool's sockets, while the block runs
    (`resource`: the MCP endpoint it serves, default its own `/mcp`: another worker's for a second worker)."""
    sock, base = sockets.take()
    store = store or MemoryProxyStore()
    resource = resource or f"{base}/mcp"
    app = notes_app(resource, upstream, store, **options)
    async with serve(app.asgi(), sock):
        yield Site(base, app, store, resource)


# -- the MCP client's side, step by step (for the hostile cases) ------------------------------------


async def register(http: httpx.AsyncClient, site: Site, redirect_uri: str, **extra: Any) -> dict[str, Any]:
    answer = await http.post(
        f"{site.base}/register", json={"client_name": "Test client", "redirect_uris": [redirect_uri], **extra}
    )
    assert answer.status_code == 201, answer.text
    registered: dict[str, Any] = answer.json()
    return registered


def authorization_url(site: Site, client_id: str, redirect_uri: str, challenge: str, **extra: str) -> str:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "client-state",
        "resource": site.resource,
        **extra,
    }
    return f"{site.base}/authorize?{urlencode(params)}"


@dataclass
class SignedIn:
    client_id: str
    redirect_uri: str
    verifier: str
    code: str


async def come_back(
    site: Site, client_id: str, redirect_uri: str, challenge: str, login: str = "alice", decision: str = "approve"
) -> tuple[AuthorizationResponse, list[str]]:
    """What the proxy redirects the client with after `login` went through the forms (answering the
    consent `decision`), and the HTML pages met on the way."""
    handler = FormSignIn(redirect_uri, login=login, decision=decision)
    try:
        return await handler.authorize(authorization_url(site, client_id, redirect_uri, challenge)), handler.pages
    finally:
        await handler.aclose()


async def sign_in(http: httpx.AsyncClient, site: Site, login: str = "alice") -> SignedIn:
    """A registered public client, and the code the proxy redirected it with after `login` signed in."""
    redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
    client = await register(http, site, redirect_uri)
    verifier, challenge = pkce_pair()
    response, _ = await come_back(site, client["client_id"], redirect_uri, challenge, login)
    assert response.code is not None, response.params
    assert response.state == "client-state" and response.iss == site.issuer
    return SignedIn(client["client_id"], redirect_uri, verifier, response.code)


async def redeem(http: httpx.AsyncClient, site: Site, signed: SignedIn, **changes: str) -> httpx.Response:
    form = {
        "grant_type": "authorization_code",
        "code": signed.code,
        "redirect_uri": signed.redirect_uri,
        "code_verifier": signed.verifier,
        "client_id": signed.client_id,
        "resource": site.resource,
        **changes,
    }
    return await http.post(f"{site.base}/token", data=form)


async def whoami(http: httpx.AsyncClient, site: Site, access_token: str) -> httpx.Response:
    """One stateless `tools/call whoami` with `access_token`."""
    headers = {**stateless_headers("tools/call", "whoami"), "Authorization": f"Bearer {access_token}"}
    return await http.post(site.mcp_url, json=rpc(1, "tools/call", stateless({"name": "whoami"})), headers=headers)
