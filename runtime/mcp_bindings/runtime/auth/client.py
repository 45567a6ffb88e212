"""OAuth 2.1 for the MCP HTTP transports, client side: an `httpx.Auth`.

    auth = OAuthClientAuth(LoopbackAuthorizationHandler(), storage=JsonFileTokenStorage("~/.mcp/oauth.json"))
    async with connect_http("https://mcp.example.com/mcp", Client, auth=auth) as client:
        ...

Every request to the MCP server's origin carries `Authorization: Bearer <token>` once there is one. On
`401` the flow runs (MCP authorization spec, 2025-11-25 and 2026-07-28):

1. discovery (`discovery.discover`): Protected Resource Metadata, its `resource` checked against the
   server URL, then the authorization server's metadata with its `issuer` checked and PKCE S256 required;
2. a refresh token of the same issuer is tried first; otherwise
3. registration, in the spec's order: pre-registered credentials (`client=`), stored credentials for
   this issuer, a Client ID Metadata Document URL (`client_metadata_url=`) when the server advertises
   `client_id_metadata_document_supported`, then Dynamic Client Registration (with `application_type`);
4. authorization code + PKCE S256 through the `AuthorizationHandler`, with `state`, the `resource`
   parameter (RFC 8707) and the selected scope (the challenge's `scope`, else the PRM's
   `scopes_supported`, else none; plus `offline_access` when the authorization server offers it and
   the refresh_token grant); the response's `iss` is checked against the recorded issuer (RFC 9207);
5. the token request (`client_secret_basic`, `client_secret_post` or `none`, as registered or
   advertised), then the original request again.

On `403` with `error="insufficient_scope"` it re-authorizes with the union of the scopes asked for so
far and the challenged ones (step-up). At most `max_authorizations` authorizations run back to back
without a request getting through; after that a 403 raises `InsufficientScopeError` and a 401
`AuthorizationLimitError` (both end the HTTP request; the MCP transports report them as the failure of
the MCP request), until a request gets through again or `reset()` is called.

Credentials are bound to the issuer that issued them: when the PRM names a different authorization
server, tokens of the old one are dropped (never sent) and the client registers again with the new one.

Machine clients pass `grant=` (`machine.ClientCredentialsGrant`, `JwtBearerGrant`,
`EnterpriseManagedGrant`): discovery and scope selection stay as above (PKCE is not required of the
authorization server then); registration and the authorization code flow are replaced by the grant,
which is repeated when its token expires or is rejected. With DPoP (`dpop=`, RFC 9449) token requests
carry a proof, DPoP-bound tokens go out as `Authorization: DPoP` with a fresh proof per request, and a
`use_dpop_nonce` answer of either server is retried once with its `DPoP-Nonce`. `logout()` (also
`aclose()` and the end of `async with auth:`) revokes the tokens (RFC 7009) where advertised.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx

from mcp_bindings.runtime.auth.challenge import Challenge, parse_challenges
from mcp_bindings.runtime.auth.client_auth import ClientAuthentication
from mcp_bindings.runtime.auth.discovery import (
    Discovery,
    canonical_server_url,
    discover,
    origin_of,
    require_secure,
)
from mcp_bindings.runtime.auth.dpop import DPoPKey, DPoPSigner
from mcp_bindings.runtime.auth.errors import (
    AuthorizationLimitError,
    InsecureEndpointError,
    InsufficientScopeError,
    TokenRequestError,
)
from mcp_bindings.runtime.auth.grants import (
    authorization_code_grant,
    client_authentication,
    revoke_token,
    token_request,
)
from mcp_bindings.runtime.auth.handlers import AuthorizationHandler, HeadlessAuthorizationHandler
from mcp_bindings.runtime.auth.machine import MachineGrant
from mcp_bindings.runtime.auth.registration import ClientRegistrar
from mcp_bindings.runtime.auth.scopes import select_scope
from mcp_bindings.runtime.auth.storage import ClientCredentials, InMemoryTokenStorage, OAuthTokens, TokenStorage
from mcp_bindings.runtime.rpc import logs

log = logs.logger("auth")


class OAuthClientAuth(httpx.Auth):
    """An `httpx.Auth` running the MCP authorization flow; pass it as `connect_http(..., auth=...)`.

    handler: the user-facing step (default: `HeadlessAuthorizationHandler()`).
    server_url: the MCP endpoint; default: the URL of the first request. Tokens are only sent to its origin.
    storage: where registrations and tokens live (default: in memory).
    client: pre-registered credentials (used first; bound to `client.issuer`, or to the first issuer).
    client_metadata_url: an https URL with a path whose document describes this client (CIMD); used
        as the client_id when the authorization server supports it. Host `client_metadata_document()`.
    client_name, client_uri, application_type, extra_client_metadata: what registration sends
        (`application_type` default: "native" for loopback/custom-scheme redirect URIs, else "web").
    scope: ask for exactly these scopes (space-separated) instead of the spec's scope selection.
    request_offline_access: add `offline_access` where the authorization server offers it.
    max_authorizations: authorizations in a row that the server may reject before the flow gives up.
    timeout: seconds for each request to the authorization server / metadata endpoints.
    http_client: the client for those requests (default: a fresh one per flow).
    allow_insecure_http: accept http:// authorization servers on non-loopback hosts (never in production).
    grant: a machine grant (`ClientCredentialsGrant`, `JwtBearerGrant`, `EnterpriseManagedGrant`) used
        instead of registration and the authorization code flow; `handler` is then unused.
    dpop: DPoP (RFC 9449) sender-constrained tokens: a `DPoPKey` (always), True (always, a fresh key),
        False (never), or None (default: when the authorization server advertises the key's algorithm
        in `dpop_signing_alg_values_supported`). DPoP-bound tokens go out as `Authorization: DPoP`
        with a fresh proof per request; `DPoP-Nonce` challenges are answered by one retry.
    revoke_on_logout: `logout()` revokes the tokens (RFC 7009) when the server advertises a
        `revocation_endpoint`.
    """

    requires_request_body = False
    requires_response_body = False

    def __init__(
        self,
        handler: AuthorizationHandler | None = None,
        *,
        server_url: str | None = None,
        storage: TokenStorage | None = None,
        client: ClientCredentials | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "MCP client",
        client_uri: str | None = None,
        application_type: str | None = None,
        extra_client_metadata: Mapping[str, Any] | None = None,
        scope: str | None = None,
        request_offline_access: bool = True,
        max_authorizations: int = 3,
        timeout: float = 30.0,
        http_client: httpx.AsyncClient | None = None,
        allow_insecure_http: bool = False,
        refresh_skew: float = 30.0,
        grant: MachineGrant | None = None,
        dpop: DPoPKey | bool | None = None,
        revoke_on_logout: bool = True,
    ) -> None:
        _check_options(client_metadata_url, max_authorizations)
        self.handler: AuthorizationHandler = handler or HeadlessAuthorizationHandler()
        self.server_url = canonical_server_url(server_url) if server_url else None
        self.storage: TokenStorage = storage or InMemoryTokenStorage()
        self.registrar = ClientRegistrar(
            handler=self.handler,
            storage=self.storage,
            preregistered=client,
            client_metadata_url=client_metadata_url,
            client_name=client_name,
            client_uri=client_uri,
            application_type=application_type,
            extra_client_metadata=extra_client_metadata,
        )
        self.scope = scope
        self.request_offline_access = request_offline_access
        self.max_authorizations = max_authorizations
        self.timeout = timeout
        self.allow_insecure_http = allow_insecure_http
        self.refresh_skew = refresh_skew
        self._http = http_client
        self._tokens: OAuthTokens | None = None
        self._loaded = False
        self._generation = 0  # bumped whenever the tokens change
        self._consecutive = 0  # authorizations since a request last got through
        self._discovery: Discovery | None = None
        self._lock: anyio.Lock | None = None
        self.grant = grant
        self.dpop = dpop
        self.revoke_on_logout = revoke_on_logout
        self._signer: DPoPSigner | None = DPoPSigner(dpop if isinstance(dpop, DPoPKey) else DPoPKey()) if dpop else None

    # -- public helpers --------------------------------------------------------------------------

    @property
    def tokens(self) -> OAuthTokens | None:
        return self._tokens

    @property
    def discovery(self) -> Discovery | None:
        """What the last discovery found (None before the first 401)."""
        return self._discovery

    def reset(self) -> None:
        """Allow `max_authorizations` more authorizations (after the flow gave up)."""
        self._consecutive = 0

    async def logout(self) -> None:
        """Forget this server's tokens (the registration stays); revoke them first (RFC 7009) when
        `revoke_on_logout` and the authorization server advertises a `revocation_endpoint`. A failed
        revocation is logged, not raised: the tokens are forgotten either way."""
        await self._ensure_loaded()
        if self.server_url is None:
            return
        tokens, found = self._tokens, self._discovery
        if self.revoke_on_logout and tokens is not None and found is not None and found.issuer == tokens.issuer:
            await self._revoke(found, tokens)
        await self._drop_tokens()

    async def aclose(self) -> None:
        """End of use: `logout()` (revoking the tokens where advertised)."""
        await self.logout()

    async def __aenter__(self) -> OAuthClientAuth:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """`async with OAuthClientAuth(...) as auth:` logs out (and revokes) at the end."""
        await self.aclose()

    def client_metadata_document(self) -> dict[str, Any]:
        """The JSON document to host at `client_metadata_url` (CIMD)."""
        return self.registrar.metadata_document()

    # -- the httpx.Auth flow ---------------------------------------------------------------------

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        if not self._applies_to(request):
            yield request
            return
        await self._ensure_loaded()
        await self._refresh_if_expired()
        generation, sent_token = self._apply(request)
        response = yield request
        refresh_allowed = True
        nonce_retries = 2
        for _ in range(self.max_authorizations + 5):  # each round runs an authorization, refresh or retry
            status = response.status_code
            new_nonce = self._signer is not None and self._signer.remember(
                str(request.url), response.headers.get("dpop-nonce")
            )
            challenges = parse_challenges(response.headers.get_list("www-authenticate"))
            challenge = next((c for c in challenges if c.scheme in ("bearer", "dpop")), None)
            if status == 401:
                if challenges and challenge is None:
                    return  # another scheme than Bearer or DPoP: not ours to answer
                wants_nonce = any(c.scheme == "dpop" and c.error == "use_dpop_nonce" for c in challenges)
                if wants_nonce and new_nonce and sent_token and nonce_retries > 0:
                    nonce_retries -= 1  # RFC 9449 §9: the same request again, its proof with the nonce
                    log.debug("the resource server asked for a DPoP nonce; retrying with it")
                    generation, sent_token = self._apply(request)
                    response = yield request
                    continue
                refreshed = await self._on_unauthorized(challenge, generation, sent_token, refresh_allowed)
                refresh_allowed = refresh_allowed and not refreshed
            elif status == 403:
                if challenge is None or challenge.error != "insufficient_scope":
                    return
                if not await self._on_insufficient_scope(challenge, generation):
                    raise InsufficientScopeError(
                        f"the server still answers 403 insufficient_scope (needs {challenge.scope!r}) after "
                        f"{self.max_authorizations} authorizations; giving up",
                        scope=challenge.scope,
                        description=challenge.error_description,
                    )
            else:
                if sent_token:
                    self._consecutive = 0
                return
            generation, sent_token = self._apply(request)
            response = yield request

    def sync_auth_flow(self, request: httpx.Request) -> Any:
        raise RuntimeError("OAuthClientAuth is async only: use it with httpx.AsyncClient")

    # -- internals: tokens -----------------------------------------------------------------------

    def _get_lock(self) -> anyio.Lock:
        if self._lock is None:
            self._lock = anyio.Lock()
        return self._lock

    def _applies_to(self, request: httpx.Request) -> bool:
        url = str(request.url)
        if self.server_url is None:
            self.server_url = canonical_server_url(url)
        return origin_of(url) == origin_of(self.server_url)

    @property
    def _key(self) -> str:
        assert self.server_url is not None
        return self.server_url

    async def _ensure_loaded(self) -> None:
        if not self._loaded:
            self._loaded = True
            stored = await self.storage.get_tokens(self._key)
            if stored is not None and self._tokens is None:
                self._tokens = stored
                self._generation += 1

    def _apply(self, request: httpx.Request) -> tuple[int, bool]:
        tokens = self._tokens
        if tokens is not None and tokens.token_type == "DPoP":
            if self._signer is None:  # stored by another process: its key is gone
                return self._generation, False
            request.headers["Authorization"] = f"DPoP {tokens.access_token}"
            request.headers["DPoP"] = self._signer.proof(request.method, str(request.url), tokens.access_token)
        elif tokens is not None:
            request.headers["Authorization"] = f"Bearer {tokens.access_token}"
        return self._generation, tokens is not None

    def _dpop_for(self, found: Discovery) -> DPoPSigner | None:
        """The signer for token requests to `found`'s authorization server (see `dpop`)."""
        if self._signer is None and self.dpop is None:
            advertised = found.metadata.raw.get("dpop_signing_alg_values_supported")
            if isinstance(advertised, list) and "ES256" in advertised:
                self._signer = DPoPSigner(DPoPKey())
        return self._signer if self.dpop is not False else None

    def _client_auth(self, found: Discovery, client: ClientCredentials | None) -> ClientAuthentication | None:
        if self.grant is not None:
            return self.grant.client
        return client_authentication(client, found.metadata) if client is not None else None

    async def _set_tokens(self, tokens: OAuthTokens) -> None:
        self._tokens = tokens
        self._generation += 1
        await self.storage.set_tokens(self._key, tokens)

    async def _drop_tokens(self) -> None:
        self._tokens = None
        self._generation += 1
        await self.storage.delete_tokens(self._key)

    @asynccontextmanager
    async def _client(self) -> AsyncGenerator[httpx.AsyncClient, None]:
        if self._http is not None:
            yield self._http
            return
        async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as client:
            yield client

    async def _refresh_if_expired(self) -> None:
        tokens, found = self._tokens, self._discovery
        if tokens is None or not tokens.expired(self.refresh_skew):
            return
        if self.grant is not None and found is not None and found.issuer == tokens.issuer:
            async with self._get_lock():  # a machine grant is simply repeated
                if self._tokens is tokens:
                    async with self._client() as http:
                        await self._authorize(http, found, tokens.requested_scope)
            return
        if not tokens.refresh_token:
            return
        if found is None or found.issuer != tokens.issuer:
            return  # the server's 401 will start discovery (and then the refresh)
        async with self._get_lock():
            if self._tokens is tokens:
                async with self._client() as http:
                    await self._refresh(http, found, tokens)

    # -- internals: reacting to 401 / 403 --------------------------------------------------------

    async def _on_unauthorized(
        self, challenge: Challenge | None, generation: int, sent_token: bool, refresh_allowed: bool
    ) -> bool:
        """Get a (new) token; True if that was done by refreshing."""
        async with self._get_lock():
            if self._generation != generation:
                return False  # another request already replaced the token: retry with it
            async with self._client() as http:
                found, tokens = await self._found(http, challenge)
                can_refresh = refresh_allowed and sent_token and tokens is not None and tokens.refresh_token
                if can_refresh and tokens is not None and await self._refresh(http, found, tokens):
                    return True
                previous = tokens.requested_scope if tokens is not None else None
                await self._authorize(http, found, self._scope(found, challenge, previous))
                return False

    async def _on_insufficient_scope(self, challenge: Challenge, generation: int) -> bool:
        """Step-up; False once the bounded number of authorizations is used up."""
        async with self._get_lock():
            if self._generation != generation:
                return True
            if self._consecutive >= self.max_authorizations:
                return False
            async with self._client() as http:
                found, tokens = await self._found(http, challenge)
                previous = (tokens.requested_scope or tokens.scope) if tokens is not None else None
                await self._authorize(http, found, self._scope(found, challenge, previous, step_up=True))
                return True

    async def _found(
        self, http: httpx.AsyncClient, challenge: Challenge | None
    ) -> tuple[Discovery, OAuthTokens | None]:
        """Discovery, and the tokens still held: those of another authorization server are dropped."""
        found = await self._discover(http, challenge)
        tokens = self._tokens
        if tokens is not None and tokens.issuer != found.issuer:
            log.info("authorization server changed from %s to %s: dropping its tokens", tokens.issuer, found.issuer)
            await self._drop_tokens()
            tokens = None
        return found, tokens

    def _scope(
        self, found: Discovery, challenge: Challenge | None, previous: str | None, *, step_up: bool = False
    ) -> str | None:
        offline = self.request_offline_access
        return select_scope(found, challenge, previous, configured=self.scope, offline_access=offline, step_up=step_up)

    async def _discover(self, http: httpx.AsyncClient, challenge: Challenge | None) -> Discovery:
        preferred = [t.issuer for t in (self._tokens,) if t is not None]
        if self.registrar.preregistered_issuer:
            preferred.append(self.registrar.preregistered_issuer)
        found = await discover(
            http,
            self._key,
            resource_metadata_url=challenge.resource_metadata if challenge is not None else None,
            preferred_issuers=preferred,
            allow_insecure_http=self.allow_insecure_http,
            require_pkce=self.grant is None,
        )
        self._discovery = found
        return found

    # -- internals: authorization and tokens -----------------------------------------------------

    async def _authorize(self, http: httpx.AsyncClient, found: Discovery, scope: str | None) -> None:
        if self._consecutive >= self.max_authorizations:
            raise AuthorizationLimitError(
                f"the server rejected the tokens of {self._consecutive} authorizations in a row; giving up"
            )
        self._consecutive += 1
        dpop = self._dpop_for(found)
        if self.grant is not None:
            await self._set_tokens(await self.grant.obtain(http, found, scope, dpop))
            return
        client = await self.registrar.client_for(http, found)
        assert client is not None
        try:
            tokens = await authorization_code_grant(http, found, client, self.handler, scope, dpop)
        except TokenRequestError as exc:
            if exc.error == "invalid_client":
                await self.registrar.forget(found.issuer, client)
            raise
        await self._set_tokens(tokens)

    async def _refresh(self, http: httpx.AsyncClient, found: Discovery, tokens: OAuthTokens) -> bool:
        assert tokens.refresh_token is not None
        client = await self.registrar.client_for(http, found, register=False) if self.grant is None else None
        auth = self._client_auth(found, client)
        if auth is None:
            return False
        data = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token, "resource": found.resource}
        try:
            fresh = await token_request(
                http, found, auth, data, requested_scope=tokens.requested_scope, dpop=self._dpop_for(found)
            )
        except TokenRequestError as exc:
            log.info("refresh failed (%s); a new authorization follows", exc)
            await self._set_tokens(tokens.with_(refresh_token=None))
            return False
        await self._set_tokens(
            fresh.with_(
                refresh_token=fresh.refresh_token or tokens.refresh_token,  # not rotated: keep the old one
                scope=fresh.scope or tokens.scope,
            )
        )
        return True

    async def _revoke(self, found: Discovery, tokens: OAuthTokens) -> None:
        endpoint = _revocation_endpoint(found, self.allow_insecure_http)
        if endpoint is None:
            return
        async with self._client() as http:
            client = None if self.grant is not None else await self.registrar.client_for(http, found, register=False)
            await _revoke_each(http, endpoint, tokens, self._client_auth(found, client), found.issuer)


def _check_options(client_metadata_url: str | None, max_authorizations: int) -> None:
    if client_metadata_url is not None:
        parts = urlsplit(client_metadata_url)
        if parts.scheme != "https" or parts.path in ("", "/") or parts.fragment:
            raise ValueError("client_metadata_url must be an https URL with a path (and no fragment)")
    if max_authorizations < 1:
        raise ValueError("max_authorizations must be at least 1")


def _revocation_endpoint(found: Discovery, allow_insecure_http: bool) -> str | None:
    """The authorization server's `revocation_endpoint` (RFC 7009), if it advertises a usable one."""
    endpoint = found.metadata.raw.get("revocation_endpoint")
    if not isinstance(endpoint, str) or not endpoint:
        return None
    try:
        require_secure(endpoint, "revocation_endpoint", allow_insecure_http=allow_insecure_http)
    except InsecureEndpointError as exc:
        log.warning("not revoking: %s", exc)
        return None
    return endpoint


async def _revoke_each(
    http: httpx.AsyncClient, endpoint: str, tokens: OAuthTokens, auth: ClientAuthentication | None, issuer: str
) -> None:
    """Revoke the refresh token, then the access token; a failure is logged, not raised."""
    pairs = [(tokens.refresh_token, "refresh_token"), (tokens.access_token, "access_token")]
    for token, hint in pairs:  # the refresh token first: revoking it may revoke the rest
        if token:
            try:
                await revoke_token(http, endpoint, token, hint, auth, issuer=issuer)
            except TokenRequestError as exc:
                log.warning("could not revoke the %s: %s", hint, exc)
