"""Auth in one argument: `App(auth=Auth(resource=..., issuer=..., jwks_uri=...))` serves the app over
HTTP as an OAuth 2.1 resource server (the runtime's `auth.resource_server`: bearer tokens verified,
the Protected Resource Metadata served, 401 / 403 challenges), with the scopes every request needs
(`scopes`) and those a tool, resource, template or prompt needs on top (`scopes=[...]`, asked for
with a 403 `insufficient_scope` challenge: step-up; `app.access`). The principal reaches the
functions as `ctx.principal`, a typed `Principal`."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_bindings.runtime.app.access import named_scopes, required_scopes

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

    from mcp_bindings.runtime.app.registries import Registries
    from mcp_bindings.runtime.auth.proxy import OAuthProxy
    from mcp_bindings.runtime.auth.resource_server import RequestInfo
    from mcp_bindings.runtime.auth.verifiers import TokenVerifier
    from mcp_bindings.runtime.http.app import StreamableHTTPApp

__all__ = ["Auth", "ProtectedApp"]


@dataclass(frozen=True)
class Auth:
    """The resource-server settings of an app. `resource`: the MCP endpoint's URL (tokens must be
    issued for it, RFC 8707). Tokens are JWTs from `issuer`, checked with `jwks` or `jwks_uri` (else
    the issuer's metadata names it), for `audience` (default: `resource`); or give any `verifier`
    (`IntrospectionVerifier`, ...). `authorization_servers` (default: the issuer) and
    `scopes_supported` (default: every scope named here and on tools) go into the metadata.
    `dpop=DPoPProofVerifier()` takes DPoP-bound tokens (`dpop_required`: only those). `options`: the
    rest of `require_bearer`'s (`scope_hierarchy`, `resource_name`, ...). `proxy=OAuthProxy(...)`: this
    server is also the authorization server, signing users in at an upstream provider (its tokens
    verified here; `auth.proxy`)."""

    resource: str
    issuer: str | None = None
    jwks: Mapping[str, Any] | None = None
    jwks_uri: str | None = None
    audience: str | Sequence[str] | None = None
    verifier: TokenVerifier | None = None
    authorization_servers: Sequence[str] = ()
    scopes: Sequence[str] = ()
    scopes_supported: Sequence[str] | None = None
    dpop: Any = None
    dpop_required: bool = False
    options: Mapping[str, Any] = field(default_factory=dict[str, Any])
    proxy: OAuthProxy | None = None

    def __post_init__(self) -> None:
        if self.verifier is None and self.issuer is None and self.proxy is None:
            raise ValueError("Auth: name the token issuer (issuer=..., with jwks or jwks_uri) or give a verifier=")
        if isinstance(self.scopes, str):
            raise ValueError(f"Auth(scopes={self.scopes!r}) is one string; give a list: scopes=[{self.scopes!r}]")

    def protect(self, app: StreamableHTTPApp, entries: Registries) -> ProtectedApp:
        """`app` behind bearer auth; `entries`: the app's tables, whose entries' own scopes a request
        naming one needs (read per request)."""
        # Loaded here: an app without auth does not import the OAuth machinery (nor httpx, PyJWT).
        from mcp_bindings.runtime.auth.resource_server import require_bearer
        from mcp_bindings.runtime.auth.verifiers import JWTVerifier

        verifier = self.verifier
        if verifier is None and self.proxy is None:
            assert self.issuer is not None
            verifier = JWTVerifier(
                issuer=self.issuer, jwks=self.jwks, jwks_uri=self.jwks_uri, audience=self.audience or self.resource
            )
        every = list(self.scopes)

        def required(request: RequestInfo) -> list[str]:
            return [*every, *(s for s in required_scopes(entries, request.message) if s not in every)]

        supported = self.scopes_supported
        if supported is None:
            supported = list(dict.fromkeys([*every, *named_scopes(entries)]))
        servers, proxy = list(self.authorization_servers) or [self.issuer or self.resource], None
        if self.proxy is not None:  # the proxy's own tokens, and its endpoints beside the app
            backend = getattr(app, "backend", None)  # its Redis, if it has one, for the proxy's store
            proxy = self.proxy.serve(self.resource, scopes_supported=supported, default_scopes=every, backend=backend)
            verifier, servers = proxy.verifier, [proxy.issuer]
        assert verifier is not None
        asgi: Any = app  # an ASGI app (its own Scope / Receive / Send types)
        outer = require_bearer(
            asgi,
            verifier,
            resource=self.resource,
            authorization_servers=servers,
            scopes_supported=supported or None,
            required_scopes=required,
            dpop=self.dpop,
            dpop_required=self.dpop_required,
            open_paths=(app.options.health_path, app.options.ready_path),
            **self.options,
        )
        return ProtectedApp(app, outer if proxy is None else proxy.wrap(outer, guard=app.refuse_foreign))


class ProtectedApp:
    """An app's ASGI app behind bearer auth: `inner` is the Streamable HTTP app; `lifespan` as its."""

    def __init__(self, inner: StreamableHTTPApp, outer: Any) -> None:
        self.inner = inner
        self.outer = outer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.outer(scope, receive, send)

    @asynccontextmanager
    async def lifespan(self, parent: object = None) -> AsyncGenerator[None]:
        """See `StreamableHTTPApp.lifespan`."""
        async with self.inner.lifespan(parent):
            yield
