"""Grants for machine clients (no browser, no user): pass one as `OAuthClientAuth(grant=...)`.

* `ClientCredentialsGrant(client)`: the OAuth client credentials grant (the MCP "OAuth client
  credentials" extension, SEP-1046), the client authenticating with `client_secret_basic`
  (`ClientSecretBasic`) or an RFC 7523 assertion (`PrivateKeyJwt`).
* `JwtBearerGrant(assertion)`: the RFC 7523 JWT bearer grant with a JWT someone else issued, e.g. the
  platform's workload identity token (workload identity federation, SEP-1933). `assertion` is a string
  or a (sync or async) callable returning a fresh one.
* `EnterpriseManagedGrant(...)`: enterprise-managed authorization (SEP-990): the enterprise IdP's
  identity assertion (an ID token) is exchanged at the IdP for an Identity Assertion JWT Authorization
  Grant (RFC 8693 token exchange, `requested_token_type` id-jag, `audience` the MCP server's
  authorization server, `resource` the MCP server), which is then the assertion of a JWT bearer grant.

Discovery, the `resource` parameter and scope selection are the core flow's (`OAuthClientAuth`). A grant
is repeated rather than refreshed when its token expires or is rejected; a refused grant raises
`TokenRequestError` and is not retried (the server's answer would not change).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Protocol, runtime_checkable

import httpx

from mcp_bindings.runtime.auth.client_auth import ClientAuthentication
from mcp_bindings.runtime.auth.discovery import Discovery
from mcp_bindings.runtime.auth.dpop import DPoPSigner
from mcp_bindings.runtime.auth.errors import TokenRequestError
from mcp_bindings.runtime.auth.grants import json_object_of, post_form, refused, token_request
from mcp_bindings.runtime.auth.storage import OAuthTokens
from mcp_bindings.runtime.rpc import logs

log = logs.logger("auth")

CLIENT_CREDENTIALS = "client_credentials"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"

TokenSource = str | Callable[[], "str | Awaitable[str]"]


async def resolve(source: TokenSource) -> str:
    """The current value of an assertion source (a string, or a callable returning one)."""
    if isinstance(source, str):
        return source
    value = source()
    if inspect.isawaitable(value):
        value = await value
    if not isinstance(value, str) or not value:
        raise TokenRequestError("the assertion source returned no token")
    return value


@runtime_checkable
class MachineGrant(Protocol):
    """Obtains tokens for `found.resource` without a user."""

    @property
    def client(self) -> ClientAuthentication | None: ...  # also used to revoke tokens

    async def obtain(
        self, http: httpx.AsyncClient, found: Discovery, scope: str | None, dpop: DPoPSigner | None
    ) -> OAuthTokens: ...


def _form(grant_type: str, found: Discovery, scope: str | None, **extra: str) -> dict[str, str]:
    form = {"grant_type": grant_type, "resource": found.resource, **extra}
    if scope:
        form["scope"] = scope
    return form


class ClientCredentialsGrant:
    def __init__(self, client: ClientAuthentication) -> None:
        self.client = client

    async def obtain(
        self, http: httpx.AsyncClient, found: Discovery, scope: str | None, dpop: DPoPSigner | None
    ) -> OAuthTokens:
        form = _form(CLIENT_CREDENTIALS, found, scope)
        return await token_request(http, found, self.client, form, requested_scope=scope, dpop=dpop)


class JwtBearerGrant:
    """`client`: how to authenticate (default: none; `client_id` is sent when given)."""

    def __init__(
        self, assertion: TokenSource, *, client: ClientAuthentication | None = None, client_id: str | None = None
    ) -> None:
        self.assertion = assertion
        self.client = client
        self.client_id = client_id

    async def obtain(
        self, http: httpx.AsyncClient, found: Discovery, scope: str | None, dpop: DPoPSigner | None
    ) -> OAuthTokens:
        extra = {"client_id": self.client_id} if self.client is None and self.client_id else {}
        form = _form(JWT_BEARER, found, scope, assertion=await resolve(self.assertion), **extra)
        return await token_request(http, found, self.client, form, requested_scope=scope, dpop=dpop)


class EnterpriseManagedGrant:
    """`identity_assertion`: the IdP-issued ID token (or a callable returning a fresh one);
    `idp_token_endpoint` and `idp_client`: where and as whom to exchange it; `client`: this client at
    the MCP server's authorization server."""

    def __init__(
        self,
        *,
        identity_assertion: TokenSource,
        idp_token_endpoint: str,
        idp_client: ClientAuthentication,
        client: ClientAuthentication,
        idp_issuer: str | None = None,
        subject_token_type: str = ID_TOKEN_TYPE,
    ) -> None:
        self.identity_assertion = identity_assertion
        self.idp_token_endpoint = idp_token_endpoint
        self.idp_client = idp_client
        self.idp_issuer = idp_issuer or idp_token_endpoint
        self.client = client
        self.subject_token_type = subject_token_type

    async def authorization_grant(self, http: httpx.AsyncClient, found: Discovery, scope: str | None) -> str:
        """Step 1: the RFC 8693 token exchange at the IdP; returns the ID-JAG."""
        form = _form(
            TOKEN_EXCHANGE,
            found,
            scope,
            requested_token_type=ID_JAG_TYPE,
            audience=found.issuer,
            subject_token=await resolve(self.identity_assertion),
            subject_token_type=self.subject_token_type,
        )
        url = self.idp_token_endpoint
        response = await post_form(http, url, form, self.idp_client, issuer=self.idp_issuer, what="token exchange")
        body = json_object_of(response)
        if response.status_code != 200 or body is None:
            raise refused("the IdP refused the token exchange", response, body)
        grant = body.get("access_token")
        issued = body.get("issued_token_type")
        if not isinstance(grant, str) or not grant:
            raise TokenRequestError("the IdP's token exchange response has no access_token (the ID-JAG)")
        if issued != ID_JAG_TYPE:
            raise TokenRequestError(f"the IdP issued a {issued!r}, not an identity assertion grant ({ID_JAG_TYPE})")
        return grant

    async def obtain(
        self, http: httpx.AsyncClient, found: Discovery, scope: str | None, dpop: DPoPSigner | None
    ) -> OAuthTokens:
        grant = await self.authorization_grant(http, found, scope)
        log.debug("got an identity assertion grant from the IdP for %s", found.issuer)
        form = _form(JWT_BEARER, found, scope, assertion=grant)
        return await token_request(http, found, self.client, form, requested_scope=scope, dpop=dpop)
