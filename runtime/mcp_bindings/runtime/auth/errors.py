"""Errors of the OAuth client flow.

They subclass `httpx.HTTPError`: raised inside an `httpx.Auth` flow, they end the HTTP request, and the
runtime's HTTP transports already report a failed HTTP request as the failure of the MCP request that
sent it (rather than tearing the connection down).
"""

from __future__ import annotations

import httpx


class OAuthError(httpx.HTTPError):
    """Base class: the client could not obtain (or keep) an access token."""


class DiscoveryError(OAuthError):
    """Protected Resource Metadata or authorization server metadata is missing or unusable."""


class ResourceMismatchError(DiscoveryError):
    """The Protected Resource Metadata names a `resource` that is not the server being accessed."""


class IssuerMismatchError(DiscoveryError):
    """Authorization server metadata whose `issuer` is not the issuer it was fetched for (RFC 8414 §3.3)."""


class InsecureEndpointError(DiscoveryError):
    """An authorization server endpoint that is not HTTPS (nor a loopback address)."""


class PkceNotSupportedError(DiscoveryError):
    """The authorization server does not advertise PKCE `S256`; the MCP spec says refuse to proceed."""


class RegistrationError(OAuthError):
    """No usable client registration: Dynamic Client Registration failed, or no way to register."""


class AuthorizationError(OAuthError):
    """The authorization step failed (the handler, or the authorization response)."""


class StateMismatchError(AuthorizationError):
    """The authorization response's `state` is missing or is not the one sent."""


class IssuerParameterError(AuthorizationError):
    """The authorization response's `iss` (RFC 9207) is missing where required, or is not the issuer."""


class AuthorizationDeniedError(AuthorizationError):
    """The authorization server answered with an `error` (e.g. `access_denied`)."""

    def __init__(self, error: str, description: str | None = None) -> None:
        self.error = error
        self.description = description
        super().__init__(f"authorization failed: {error}" + (f" ({description})" if description else ""))


class TokenRequestError(OAuthError):
    """The token endpoint refused a request (RFC 6749 §5.2), or answered something unusable."""

    def __init__(
        self, message: str, *, error: str | None = None, description: str | None = None, status_code: int | None = None
    ) -> None:
        self.error = error
        self.description = description
        self.status_code = status_code
        super().__init__(message)


class AuthorizationLimitError(OAuthError):
    """The server kept rejecting freshly obtained tokens: the bounded number of authorizations ran out."""


class InsufficientScopeError(OAuthError):
    """Still `403 insufficient_scope` after the bounded number of step-up authorizations."""

    def __init__(self, message: str, *, scope: str | None = None, description: str | None = None) -> None:
        self.scope = scope
        self.description = description
        super().__init__(message)
