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

_MODULES = {  # where each name lives
    "client": ("OAuthClientAuth",),
    "grants": ("pkce_pair", "check_authorization_response"),
    "machine": ("ClientCredentialsGrant", "JwtBearerGrant", "EnterpriseManagedGrant", "MachineGrant"),
    "client_auth": ("ClientAuthentication", "ClientSecretBasic", "ClientSecretPost", "PrivateKeyJwt", "PublicClient"),
    "dpop": ("DPoPKey", "DPoPProofVerifier", "DPoPProofError", "ReplayCache", "NonceIssuer", "jwk_thumbprint"),
    "handlers": (  # the user-facing step
        "AuthorizationHandler",
        "AuthorizationResponse",
        "HeadlessAuthorizationHandler",
        "LoopbackAuthorizationHandler",
        "CallbackAuthorizationHandler",
    ),
    "storage": ("TokenStorage", "InMemoryTokenStorage", "JsonFileTokenStorage", "ClientCredentials", "OAuthTokens"),
    "discovery": (
        "discover",
        "Discovery",
        "ProtectedResourceMetadata",
        "AuthorizationServerMetadata",
        "protected_resource_metadata_urls",
        "authorization_server_metadata_urls",
        "canonical_server_url",
        "resource_matches",
    ),
    "challenge": ("Challenge", "parse_challenges", "bearer_challenge", "format_challenge"),
    "resource_server": (
        "require_bearer",
        "BearerAuthMiddleware",
        "RequestInfo",
        "protected_resource_metadata",
        "protected_resource_metadata_url",
    ),
    "verifiers": (
        "TokenVerifier",
        "JWTVerifier",
        "IntrospectionVerifier",
        "AccessToken",
        "InvalidTokenError",
        "VerifierUnavailableError",
    ),
    "errors": (
        "OAuthError",
        "DiscoveryError",
        "ResourceMismatchError",
        "IssuerMismatchError",
        "InsecureEndpointError",
        "PkceNotSupportedError",
        "RegistrationError",
        "AuthorizationError",
        "StateMismatchError",
        "IssuerParameterError",
        "AuthorizationDeniedError",
        "TokenRequestError",
        "AuthorizationLimitError",
        "InsufficientScopeError",
    ),
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names}

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
