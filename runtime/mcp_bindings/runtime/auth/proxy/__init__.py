"""An OAuth proxy: the MCP server acts as the authorization server its MCP clients see (metadata,
Dynamic Client Registration and Client ID Metadata Documents, PKCE S256, a consent page) and signs the
user in at an upstream OpenID Connect / OAuth provider (GitHub, Google, Entra ID, Auth0, Okta,
WorkOS, Keycloak, ...) with one pre-registered client:

    app = App("notes", auth=Auth(
        resource="https://notes.example.com/mcp",
        proxy=OAuthProxy(oidc("https://idp.example.com", client_id="...", client_secret="...")),
    ))

The MCP clients get the proxy's own tokens, bound to this server (`aud`), never the upstream's; the
upstream tokens and the registrations go to a sealed store (`store`). docs/auth.md is the guide;
`presets` has the providers' quirks.
"""

from __future__ import annotations

from mcp_bindings.runtime.auth.proxy.presets import auth0, entra, github, google, keycloak, oidc, okta, workos
from mcp_bindings.runtime.auth.proxy.settings import OAuthProxy, ProxyServer
from mcp_bindings.runtime.auth.proxy.store import KEY_ENV, MemoryProxyStore, ProxyStore, RedisProxyStore
from mcp_bindings.runtime.auth.proxy.tokens import Lifetimes
from mcp_bindings.runtime.auth.proxy.upstream import Upstream, UpstreamError

__all__ = [
    "KEY_ENV",
    "Lifetimes",
    "MemoryProxyStore",
    "OAuthProxy",
    "ProxyServer",
    "ProxyStore",
    "RedisProxyStore",
    "Upstream",
    "UpstreamError",
    "auth0",
    "entra",
    "github",
    "google",
    "keycloak",
    "oidc",
    "okta",
    "workos",
]
