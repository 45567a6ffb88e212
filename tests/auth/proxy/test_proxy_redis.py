"""The OAuth proxy on two workers sharing Redis (the scale-out plug-in's `RedisBackend`): a sign-in
started on one worker finishes on the other, a code redeemed on one is spent on both, a refresh token
rotated on one is a replay on the other; and the store's settings: the app's own Redis backend is the
default store when `MCP_REDIS_URL` is set, and a shared store without an operator key is refused."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from mcp_bindings.runtime.app import App, Auth
from mcp_bindings.runtime.app.auth import ProtectedApp
from mcp_bindings.runtime.auth.proxy import MemoryProxyStore, OAuthProxy, RedisProxyStore
from mcp_bindings.runtime.auth.proxy.settings import ProxyRouter
from mcp_bindings.runtime.protocol.request_state import SecretError
from mcp_bindings.runtime.scaleout.backends.redis import RedisBackend
from tests.peers.redis_server import RedisServer
from tests.support.oidc import OidcProvider

from .conftest import KEY, Sockets, proxied, redeem, sign_in, upstream_of, whoami

pytestmark = [pytest.mark.anyio, pytest.mark.interop]


async def test_two_workers_share_sign_ins_codes_and_refresh_tokens(
    sockets: Sockets, provider: OidcProvider, redis_server: RedisServer
) -> None:
    upstream = upstream_of(provider)
    first, second = RedisBackend(redis_server.url, prefix="proxy:"), RedisBackend(redis_server.url, prefix="proxy:")
    async with (
        proxied(sockets, upstream, store=RedisProxyStore(first)) as a,
        proxied(sockets, upstream, store=RedisProxyStore(second), resource=a.resource) as b,
        httpx.AsyncClient() as http,
    ):
        signed = await sign_in(http, b, login="bob")  # registered and authorized on b, consent and callback on a
        tokens = await redeem(http, b, signed)
        assert tokens.status_code == 200, tokens.text
        assert (await whoami(http, a, tokens.json()["access_token"])).status_code == 200
        refresh = {"grant_type": "refresh_token", "client_id": signed.client_id}
        old = tokens.json()["refresh_token"]
        rotated = await http.post(f"{b.base}/token", data={**refresh, "refresh_token": old})
        assert rotated.status_code == 200
        replay = await http.post(f"{a.base}/token", data={**refresh, "refresh_token": old})
        assert replay.json()["error_description"] == "the refresh token was already used; the grant is revoked"
        assert (await whoami(http, b, rotated.json()["access_token"])).status_code == 401
        spent = await redeem(http, a, signed)  # the code, redeemed on b, is spent on a too
        assert spent.json()["error_description"] == "the authorization code was already used; its tokens are revoked"
        redis: Any = first.client
        stored = [await redis.get(key) for key in await redis.keys("proxy:oauth:*")]
        assert stored and not any(b"bob" in value for value in stored)  # sealed at rest
    await first.aclose()
    await second.aclose()


def test_the_apps_redis_backend_is_the_default_store(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_REDIS_URL", redis_server.url)
    monkeypatch.delenv("MCP_OAUTH_PROXY_KEY", raising=False)
    upstream = upstream_of_fake()
    app = App("notes", auth=Auth(resource="http://127.0.0.1:9/mcp", proxy=OAuthProxy(upstream)))
    with pytest.raises(SecretError, match="set MCP_OAUTH_PROXY_KEY"):
        app.asgi()
    monkeypatch.setenv("MCP_OAUTH_PROXY_KEY", KEY)
    assert isinstance(_store_of(app), RedisProxyStore)
    monkeypatch.delenv("MCP_REDIS_URL")
    assert isinstance(_store_of(app), MemoryProxyStore)


def _store_of(app: App) -> object:
    protected = app.asgi()
    assert isinstance(protected, ProtectedApp) and isinstance(protected.outer, ProxyRouter)
    return protected.outer.endpoints.records.store


def upstream_of_fake() -> Any:
    from mcp_bindings.runtime.auth.proxy import Upstream

    return Upstream("proxy", "secret", issuer="https://idp.example.com")
