"""`OAuthProxy`: the settings of the proxy, and `ProxyServer`, what one app runs of it (its store,
keys, endpoints and token verifier), built by `Auth(proxy=...)` when the app is served."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp_bindings.runtime.auth.discovery import origin_of
from mcp_bindings.runtime.auth.proxy.clients import ClientRegistry
from mcp_bindings.runtime.auth.proxy.endpoints import ProxyEndpoints, Site
from mcp_bindings.runtime.auth.proxy.store import (
    MemoryProxyStore,
    ProxyKeys,
    ProxyStore,
    RedisConnection,
    RedisProxyStore,
    SealedRecords,
    operator_key,
)
from mcp_bindings.runtime.auth.proxy.tokens import Grants, Lifetimes, ProxyVerifier
from mcp_bindings.runtime.auth.proxy.upstream import Upstream, UpstreamClient


@dataclass(frozen=True)
class OAuthProxy:
    """An authorization server in front of `upstream` (see the package docstring). `key`: the
    operator's key (32+ bytes; else `MCP_OAUTH_PROXY_KEY`; required with a shared store), which seals
    the store and derives the token signing key. `store`: default the app's Redis backend when it has
    one (`MCP_REDIS_URL`), else memory. `callback_path`: where the provider sends the user back (register
    `<origin><callback_path>` there). `registrations_per_address` per `registration_window_s`: the bound
    on Dynamic Client Registration from one address; `authorizations_per_address`: sign-ins started
    (each a pending consent in the store) from one address per `authorization_ttl_s`."""

    upstream: Upstream
    key: bytes | str | None = None
    store: ProxyStore | None = None
    callback_path: str = "/auth/callback"
    lifetimes: Lifetimes = field(default_factory=Lifetimes)
    registrations_per_address: int = 20
    registration_window_s: float = 3600.0
    registration_ttl_s: float = 90 * 86400.0
    authorization_ttl_s: float = 600.0
    authorizations_per_address: int = 60
    server_name: str | None = None

    def __post_init__(self) -> None:
        if not self.callback_path.startswith("/"):
            raise ValueError(f"OAuthProxy(callback_path={self.callback_path!r}) must start with /")

    def serve(
        self, resource: str, *, scopes_supported: Sequence[str], default_scopes: Sequence[str], backend: Any = None
    ) -> ProxyServer:
        """What an app serving `resource` runs (`Auth.protect` calls it); `backend`: the HTTP app's."""
        store = self.store
        if store is None:
            shared = isinstance(backend, RedisConnection) and getattr(backend, "shared", False)
            store = RedisProxyStore(backend) if shared else MemoryProxyStore()
        keys = ProxyKeys(operator_key(self.key, shared=bool(getattr(store, "shared", False))))
        return ProxyServer(self, resource, store, keys, list(scopes_supported), list(default_scopes))


class ProxyServer:
    """One app's proxy: `verifier` for its resource server, `wrap(app)` adds the endpoints."""

    def __init__(
        self,
        settings: OAuthProxy,
        resource: str,
        store: ProxyStore,
        keys: ProxyKeys,
        scopes_supported: list[str],
        default_scopes: list[str],
    ) -> None:
        self.issuer = origin_of(resource)
        self.store = store
        self.records = SealedRecords(store, keys)
        site = Site(
            issuer=self.issuer,
            resource=resource,
            callback_path=settings.callback_path,
            server_name=settings.server_name or self.issuer,
            authorization_ttl_s=settings.authorization_ttl_s,
            authorizations_per_address=settings.authorizations_per_address,
        )
        clients = ClientRegistry(
            self.records,
            registration_ttl_s=settings.registration_ttl_s,
            registrations_per_address=settings.registrations_per_address,
            registration_window_s=settings.registration_window_s,
        )
        grants = Grants(self.records, keys, issuer=self.issuer, resource=resource, ttl=settings.lifetimes)
        self.endpoints = ProxyEndpoints(
            site,
            upstream=UpstreamClient(settings.upstream),
            clients=clients,
            grants=grants,
            records=self.records,
            jwks=keys.jwks,
            scopes=lambda: scopes_supported,
            default_scopes=default_scopes,
        )
        self.verifier = ProxyVerifier(keys, self.records, self.issuer)

    def wrap(self, app: Any, guard: Guard | None = None) -> ProxyRouter:
        """`app` with the endpoints beside it; `guard`: the app's Host / Origin check, theirs too."""
        return ProxyRouter(self.endpoints, app, guard)


# The app's Host / Origin check (DNS-rebinding protection): (scope, receive) -> the refusal, or None.
Guard = Callable[[Any, Any], Any]
# Public documents, fetched from any site (CORS `*`) and holding nothing to protect (as the
# Protected Resource Metadata): outside the Host / Origin check.
PUBLIC = frozenset({"/.well-known/oauth-authorization-server", "/jwks"})


class ProxyRouter:
    """The proxy's endpoints beside the protected app: their paths go to the proxy, the rest on.
    A request to one of them that the app's `guard` refuses (a Host not naming this server, an
    Origin of another site) is answered with the app's refusal."""

    def __init__(self, endpoints: ProxyEndpoints, app: Any, guard: Guard | None = None) -> None:
        self.endpoints = endpoints
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path")
        if scope.get("type") != "http" or path not in self.endpoints.paths:
            await self.app(scope, receive, send)
            return
        refusal = None if self.guard is None or path in PUBLIC else self.guard(scope, receive)
        if refusal is not None:
            await refusal(scope, receive, send)
        else:
            await self.endpoints(scope, receive, send)
