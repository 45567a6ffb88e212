"""The upstream identity provider the proxy signs users in with, as one pre-registered confidential
client: its endpoints (given, or read from its OpenID / RFC 8414 discovery document), the code
exchanged server-side with PKCE S256 and the client's secret, and who signed in (the verified
`id_token`'s claims, or the provider's user endpoint for OAuth-only providers such as GitHub).

Anything that goes wrong upstream (unreachable, an error answer, a body that is not what OAuth says)
is `UpstreamError` naming the provider and what it did: the proxy turns it into an error for the MCP
client and stores nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from mcp_bindings.runtime.auth.client_auth import ClientAuthentication, ClientSecretBasic, ClientSecretPost
from mcp_bindings.runtime.auth.discovery import fetch_authorization_server_metadata, require_secure
from mcp_bindings.runtime.auth.errors import OAuthError
from mcp_bindings.runtime.auth.grants import json_object_of, post_form
from mcp_bindings.runtime.auth.verifiers import InvalidTokenError, JWTVerifier, VerifierUnavailableError


class UpstreamError(Exception):
    """The upstream provider could not be used (down, refused, or answered garbage)."""

    error = "temporarily_unavailable"  # what the MCP client is told (RFC 6749 §4.1.2.1)


class IdentityRefused(UpstreamError):
    """The provider signed in a user this server does not accept (`Upstream.required_claims`)."""

    error = "access_denied"


@dataclass(frozen=True)
class Upstream:
    """One pre-registered client at an OAuth 2.0 / OpenID Connect provider. `issuer`: its issuer
    identifier; the endpoints left out are read from its discovery document (`/.well-known/
    openid-configuration` or RFC 8414). Users are identified by the verified `id_token` (OpenID) or,
    with `userinfo_endpoint` and no `id_token`, by that endpoint's `subject_field`. `params`: extra
    authorization request parameters (Google's `hd`, `prompt`, ...). `auth_method`:
    `client_secret_basic` or `client_secret_post`. `required_claims`: claims the user's identity must
    carry with these values (Google's `hd`: the `hd` parameter only preselects an account).
    An `issuer` naming `{tenantid}` is Entra's multi-tenant template (`verifiers.JWTVerifier`);
    `tenants`: the only tenants (`tid`) whose users may sign in (empty: any)."""

    client_id: str
    client_secret: str
    issuer: str | None = None
    authorization_endpoint: str | None = None
    token_endpoint: str | None = None
    jwks_uri: str | None = None
    userinfo_endpoint: str | None = None
    scopes: Sequence[str] = ("openid", "email", "profile")
    params: Mapping[str, str] = field(default_factory=dict[str, str])
    auth_method: str = "client_secret_basic"
    subject_field: str = "sub"
    required_claims: Mapping[str, str] = field(default_factory=dict[str, str])
    tenants: Sequence[str] = ()
    name: str | None = None  # shown on the consent page; default: the issuer's or endpoint's host
    timeout_s: float = 10.0

    def __post_init__(self) -> None:
        if not self.client_id or not self.client_secret:
            raise ValueError("Upstream: the provider's client_id and client_secret are both required")
        if self.issuer is None and (self.authorization_endpoint is None or self.token_endpoint is None):
            raise ValueError(
                "Upstream: give the provider's issuer (discovery) or its authorization and token endpoints"
            )
        if self.auth_method not in ("client_secret_basic", "client_secret_post"):
            raise ValueError(f"Upstream(auth_method={self.auth_method!r}): client_secret_basic or client_secret_post")

    @property
    def display_name(self) -> str:
        from urllib.parse import urlsplit

        return self.name or urlsplit(self.issuer or self.authorization_endpoint or "").netloc

    @property
    def openid(self) -> bool:
        return "openid" in self.scopes

    def client(self) -> ClientAuthentication:
        if self.auth_method == "client_secret_post":
            return ClientSecretPost(self.client_id, self.client_secret)
        return ClientSecretBasic(self.client_id, self.client_secret)


@dataclass(frozen=True)
class Identity:
    """Who signed in upstream: a stable subject and the claims to carry into the proxy's tokens."""

    subject: str
    claims: Mapping[str, Any]


# Claims copied from the upstream identity into the proxy's access tokens (`AccessToken.claims`).
CARRIED_CLAIMS = ("email", "email_verified", "name", "preferred_username", "login", "hd", "tid", "groups")


class UpstreamClient:
    """The proxy's side of one `Upstream`: discovery (once), the code exchange and the identity."""

    def __init__(self, settings: Upstream, *, allow_insecure_http: bool = False) -> None:
        self.settings = settings
        self.allow_insecure_http = allow_insecure_http
        self._resolved: Upstream | None = None if settings.issuer and not _complete(settings) else settings
        self._id_tokens: JWTVerifier | None = None

    def _http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=self.settings.timeout_s, follow_redirects=False)

    async def resolved(self) -> Upstream:
        """The settings with the endpoints the discovery document names filled in."""
        if self._resolved is not None:
            return self._resolved
        up = self.settings
        assert up.issuer is not None
        try:
            async with self._http() as http:
                found = await fetch_authorization_server_metadata(
                    http, up.issuer, allow_insecure_http=self.allow_insecure_http
                )
        except OAuthError as exc:
            raise UpstreamError(f"the sign-in provider {up.issuer} could not be discovered: {exc}") from None
        if found is None:
            raise UpstreamError(f"the sign-in provider {up.issuer} serves no discovery document")
        raw = found.raw
        self._resolved = replace(
            up,
            authorization_endpoint=up.authorization_endpoint or found.authorization_endpoint,
            token_endpoint=up.token_endpoint or found.token_endpoint,
            jwks_uri=up.jwks_uri or _str(raw.get("jwks_uri")),
            userinfo_endpoint=up.userinfo_endpoint or _str(raw.get("userinfo_endpoint")),
        )
        return self._resolved

    async def exchange(self, code: str, redirect_uri: str, verifier: str) -> dict[str, Any]:
        """The upstream token response for `code` (a JSON object with an `access_token`)."""
        up = await self.resolved()
        assert up.token_endpoint is not None
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
        }
        where = up.token_endpoint
        try:
            async with self._http() as http:
                response = await post_form(
                    http, where, form, up.client(), issuer=up.issuer or where, what="the upstream code exchange"
                )
        except OAuthError as exc:
            raise UpstreamError(f"the sign-in provider's token endpoint {where} did not answer: {exc}") from None
        body = json_object_of(response)
        error = body.get("error") if body else None
        if response.status_code != 200 or error is not None:  # GitHub answers its errors with 200
            raise UpstreamError(
                f"the sign-in provider's token endpoint {where} refused the code: HTTP {response.status_code}"
                + (f" {error}" if isinstance(error, str) else "")
            )
        if body is None or not isinstance(body.get("access_token"), str) or not body["access_token"]:
            raise UpstreamError(f"the sign-in provider's token endpoint {where} answered no JSON access_token")
        return body

    async def identity(self, tokens: Mapping[str, Any], nonce: str | None) -> Identity:
        """Who the upstream tokens speak for (see `Upstream`)."""
        up = await self.resolved()
        id_token = tokens.get("id_token")
        if up.openid and isinstance(id_token, str) and up.issuer:
            claims = await self._verified_id_token(up, id_token)
            if nonce is not None and claims.get("nonce") != nonce:
                raise UpstreamError("the sign-in provider's id_token carries another nonce than the one sent")
        elif up.userinfo_endpoint:
            claims = await self._userinfo(up, str(tokens["access_token"]))
        else:
            raise UpstreamError("the sign-in provider answered no id_token, and no userinfo endpoint is configured")
        subject = claims.get(up.subject_field)
        if not isinstance(subject, (str, int)) or isinstance(subject, bool) or subject == "":
            raise UpstreamError(f"the sign-in provider named no user ({up.subject_field!r} missing)")
        for claim, value in up.required_claims.items():
            if claims.get(claim) != value:
                raise IdentityRefused(f"this server accepts only users whose {claim!r} is {value!r}")
        if up.tenants and claims.get("tid") not in up.tenants:
            raise IdentityRefused(f"this server does not accept users of the tenant {claims.get('tid')!r}")
        return Identity(str(subject), {k: claims[k] for k in CARRIED_CLAIMS if k in claims})

    async def _verified_id_token(self, up: Upstream, id_token: str) -> Mapping[str, Any]:
        assert up.issuer is not None
        if self._id_tokens is None:
            self._id_tokens = JWTVerifier(issuer=up.issuer, jwks_uri=up.jwks_uri, audience=up.client_id)
        try:
            return (await self._id_tokens.verify(id_token, resource=up.client_id)).claims
        except (InvalidTokenError, VerifierUnavailableError) as exc:
            raise UpstreamError(f"the sign-in provider's id_token was refused: {exc}") from None

    async def _userinfo(self, up: Upstream, access_token: str) -> Mapping[str, Any]:
        assert up.userinfo_endpoint is not None
        require_secure(up.userinfo_endpoint, "userinfo endpoint", allow_insecure_http=self.allow_insecure_http)
        headers = {"Authorization": f"Bearer {access_token}", "Accept": "application/json"}
        try:
            async with self._http() as http:
                response = await http.get(up.userinfo_endpoint, headers=headers)
        except httpx.HTTPError as exc:
            raise UpstreamError(f"the sign-in provider's user endpoint {up.userinfo_endpoint} failed: {exc}") from None
        body = json_object_of(response)
        if response.status_code != 200 or body is None:
            raise UpstreamError(
                f"the sign-in provider's user endpoint {up.userinfo_endpoint} answered HTTP {response.status_code}"
                + ("" if body is not None else ", not a JSON object")
            )
        return body


def _complete(up: Upstream) -> bool:
    return bool(up.authorization_endpoint and up.token_endpoint and (not up.openid or up.jwks_uri))


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
