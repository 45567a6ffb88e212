"""OAuth 2.1 for the MCP HTTP transports (MCP authorization, 2025-11-25 and 2026-07-28).

Client: `OAuthClientAuth` is an `httpx.Auth`; pass it to `connect_http(url, Client, auth=...)` or
`connect_sse(...)`. The user-facing step is an `AuthorizationHandler` (`HeadlessAuthorizationHandler`,
`LoopbackAuthorizationHandler`, `CallbackAuthorizationHandler`); registrations and tokens live in a
`TokenStorage` (`InMemoryTokenStorage`, `JsonFileTokenStorage`).

Machine clients (no browser): `OAuthClientAuth(grant=...)` with `ClientCredentialsGrant(ClientSecretBasic
| PrivateKeyJwt)`, `JwtBearerGrant` (workload identity) or `EnterpriseManagedGrant` (IdP token exchange,
then JWT bearer). DPoP (RFC 9449): `OAuthClientAuth(dpop=DPoPKey())` (default: when advertised).

Server: `require_bearer(app, verifier, resource=..., authorization_servers=[...])` wraps an ASGI app;
verifiers: `JWTVerifier` (needs PyJWT[crypto]), `IntrospectionVerifier`; `dpop=DPoPProofVerifier()`
also accepts DPoP-bound tokens.

Names load on first use, so importing this package costs next to nothing.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from mcp_bindings.runtime.rpc.extras import require

require("MCP authorization (mcp_bindings.runtime.auth)", "http", "httpx", "jwt")

_EXPORTS = {
    # client
    "OAuthClientAuth": "client",
    "pkce_pair": "grants",
    "check_authorization_response": "grants",
    # machine clients
    "ClientCredentialsGrant": "machine",
    "JwtBearerGrant": "machine",
    "EnterpriseManagedGrant": "machine",
    "MachineGrant": "machine",
    "ClientAuthentication": "client_auth",
    "ClientSecretBasic": "client_auth",
    "ClientSecretPost": "client_auth",
    "PrivateKeyJwt": "client_auth",
    "PublicClient": "client_auth",
    # DPoP
    "DPoPKey": "dpop",
    "DPoPProofVerifier": "dpop",
    "DPoPProofError": "dpop",
    "ReplayCache": "dpop",
    "NonceIssuer": "dpop",
    "jwk_thumbprint": "dpop",
    # user-facing step
    "AuthorizationHandler": "handlers",
    "AuthorizationResponse": "handlers",
    "HeadlessAuthorizationHandler": "handlers",
    "LoopbackAuthorizationHandler": "handlers",
    "CallbackAuthorizationHandler": "handlers",
    # storage
    "TokenStorage": "storage",
    "InMemoryTokenStorage": "storage",
    "JsonFileTokenStorage": "storage",
    "ClientCredentials": "storage",
    "OAuthTokens": "storage",
    # discovery
    "discover": "discovery",
    "Discovery": "discovery",
    "ProtectedResourceMetadata": "discovery",
    "AuthorizationServerMetadata": "discovery",
    "protected_resource_metadata_urls": "discovery",
    "authorization_server_metadata_urls": "discovery",
    "canonical_server_url": "discovery",
    "resource_matches": "discovery",
    # challenges
    "Challenge": "challenge",
    "parse_challenges": "challenge",
    "bearer_challenge": "challenge",
    "format_challenge": "challenge",
    # resource server
    "require_bearer": "resource_server",
    "BearerAuthMiddleware": "resource_server",
    "TokenVerifier": "verifiers",
    "JWTVerifier": "verifiers",
    "IntrospectionVerifier": "verifiers",
    "AccessToken": "verifiers",
    "RequestInfo": "resource_server",
    "InvalidTokenError": "verifiers",
    "VerifierUnavailableError": "verifiers",
    "protected_resource_metadata": "resource_server",
    "protected_resource_metadata_url": "resource_server",
    # errors
    "OAuthError": "errors",
    "DiscoveryError": "errors",
    "ResourceMismatchError": "errors",
    "IssuerMismatchError": "errors",
    "InsecureEndpointError": "errors",
    "PkceNotSupportedError": "errors",
    "RegistrationError": "errors",
    "AuthorizationError": "errors",
    "StateMismatchError": "errors",
    "IssuerParameterError": "errors",
    "AuthorizationDeniedError": "errors",
    "TokenRequestError": "errors",
    "AuthorizationLimitError": "errors",
    "InsufficientScopeError": "errors",
}

__all__ = [
    "AccessToken",
    "AuthorizationDeniedError",
    "AuthorizationError",
    "AuthorizationHandler",
    "AuthorizationLimitError",
    "AuthorizationResponse",
    "AuthorizationServerMetadata",
    "BearerAuthMiddleware",
    "CallbackAuthorizationHandler",
    "Challenge",
    "ClientAuthentication",
    "ClientCredentials",
    "ClientCredentialsGrant",
    "ClientSecretBasic",
    "ClientSecretPost",
    "DPoPKey",
    "DPoPProofError",
    "DPoPProofVerifier",
    "Discovery",
    "DiscoveryError",
    "EnterpriseManagedGrant",
    "HeadlessAuthorizationHandler",
    "InMemoryTokenStorage",
    "InsecureEndpointError",
    "InsufficientScopeError",
    "IntrospectionVerifier",
    "InvalidTokenError",
    "IssuerMismatchError",
    "IssuerParameterError",
    "JWTVerifier",
    "JsonFileTokenStorage",
    "JwtBearerGrant",
    "LoopbackAuthorizationHandler",
    "MachineGrant",
    "NonceIssuer",
    "OAuthClientAuth",
    "OAuthError",
    "OAuthTokens",
    "PkceNotSupportedError",
    "PrivateKeyJwt",
    "ProtectedResourceMetadata",
    "PublicClient",
    "RegistrationError",
    "ReplayCache",
    "RequestInfo",
    "ResourceMismatchError",
    "StateMismatchError",
    "TokenRequestError",
    "TokenStorage",
    "TokenVerifier",
    "VerifierUnavailableError",
    "authorization_server_metadata_urls",
    "bearer_challenge",
    "canonical_server_url",
    "check_authorization_response",
    "discover",
    "format_challenge",
    "jwk_thumbprint",
    "parse_challenges",
    "pkce_pair",
    "protected_resource_metadata",
    "protected_resource_metadata_url",
    "protected_resource_metadata_urls",
    "require_bearer",
    "resource_matches",
]

if TYPE_CHECKING:
    from mcp_bindings.runtime.auth.challenge import Challenge, bearer_challenge, format_challenge, parse_challenges
    from mcp_bindings.runtime.auth.client import OAuthClientAuth
    from mcp_bindings.runtime.auth.client_auth import (
        ClientAuthentication,
        ClientSecretBasic,
        ClientSecretPost,
        PrivateKeyJwt,
        PublicClient,
    )
    from mcp_bindings.runtime.auth.discovery import (
        AuthorizationServerMetadata,
        Discovery,
        ProtectedResourceMetadata,
        authorization_server_metadata_urls,
        canonical_server_url,
        discover,
        protected_resource_metadata_urls,
        resource_matches,
    )
    from mcp_bindings.runtime.auth.dpop import (
        DPoPKey,
        DPoPProofError,
        DPoPProofVerifier,
        NonceIssuer,
        ReplayCache,
        jwk_thumbprint,
    )
    from mcp_bindings.runtime.auth.errors import (
        AuthorizationDeniedError,
        AuthorizationError,
        AuthorizationLimitError,
        DiscoveryError,
        InsecureEndpointError,
        InsufficientScopeError,
        IssuerMismatchError,
        IssuerParameterError,
        OAuthError,
        PkceNotSupportedError,
        RegistrationError,
        ResourceMismatchError,
        StateMismatchError,
        TokenRequestError,
    )
    from mcp_bindings.runtime.auth.grants import check_authorization_response, pkce_pair
    from mcp_bindings.runtime.auth.handlers import (
        AuthorizationHandler,
        AuthorizationResponse,
        CallbackAuthorizationHandler,
        HeadlessAuthorizationHandler,
        LoopbackAuthorizationHandler,
    )
    from mcp_bindings.runtime.auth.machine import (
        ClientCredentialsGrant,
        EnterpriseManagedGrant,
        JwtBearerGrant,
        MachineGrant,
    )
    from mcp_bindings.runtime.auth.resource_server import (
        BearerAuthMiddleware,
        RequestInfo,
        protected_resource_metadata,
        protected_resource_metadata_url,
        require_bearer,
    )
    from mcp_bindings.runtime.auth.storage import (
        ClientCredentials,
        InMemoryTokenStorage,
        JsonFileTokenStorage,
        OAuthTokens,
        TokenStorage,
    )
    from mcp_bindings.runtime.auth.verifiers import (
        AccessToken,
        IntrospectionVerifier,
        InvalidTokenError,
        JWTVerifier,
        TokenVerifier,
        VerifierUnavailableError,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
