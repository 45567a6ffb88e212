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
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import secrets
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote_plus, urlencode, urlsplit, urlunsplit

import anyio
import httpx

from .challenge import Challenge, parse_challenges
from .discovery import (
    AuthorizationServerMetadata,
    Discovery,
    canonical_server_url,
    discover,
    is_loopback_host,
    origin_of,
)
from .errors import (
    AuthorizationDeniedError,
    AuthorizationError,
    AuthorizationLimitError,
    InsufficientScopeError,
    IssuerParameterError,
    OAuthError,
    RegistrationError,
    StateMismatchError,
    TokenRequestError,
)
from .handlers import AuthorizationHandler, AuthorizationResponse, HeadlessAuthorizationHandler
from .storage import ClientCredentials, InMemoryTokenStorage, OAuthTokens, TokenStorage

log = logging.getLogger("mcp_bindings.runtime.auth")

TOKEN_AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")
OFFLINE_ACCESS = "offline_access"


def pkce_pair() -> tuple[str, str]:
    """(code_verifier, S256 code_challenge), RFC 7636 §4.1-4.2: 64 unreserved characters from a CSPRNG,
    and BASE64URL(SHA256(verifier)) without padding."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def basic_credentials(client_id: str, client_secret: str) -> str:
    """`Basic ...` for client_secret_basic: id and secret form-urlencoded first (RFC 6749 §2.3.1)."""
    raw = f"{quote_plus(client_id)}:{quote_plus(client_secret)}".encode()
    return "Basic " + base64.b64encode(raw).decode("ascii")


def _union(*scope_lists: Sequence[str]) -> list[str]:
    seen: list[str] = []
    for scopes in scope_lists:
        for scope in scopes:
            if scope and scope not in seen:
                seen.append(scope)
    return seen


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
    ) -> None:
        if client_metadata_url is not None:
            parts = urlsplit(client_metadata_url)
            if parts.scheme != "https" or parts.path in ("", "/") or parts.fragment:
                raise ValueError("client_metadata_url must be an https URL with a path (and no fragment)")
        if max_authorizations < 1:
            raise ValueError("max_authorizations must be at least 1")
        self.handler: AuthorizationHandler = handler or HeadlessAuthorizationHandler()
        self.server_url = canonical_server_url(server_url) if server_url else None
        self.storage: TokenStorage = storage or InMemoryTokenStorage()
        self.preregistered = client
        self.client_metadata_url = client_metadata_url
        self.client_name = client_name
        self.client_uri = client_uri
        self.application_type = application_type
        self.extra_client_metadata = dict(extra_client_metadata or {})
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
        self._preregistered_issuer = client.issuer if client is not None else None
        self._lock: anyio.Lock | None = None

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
        """Forget this server's tokens (the registration stays)."""
        await self._ensure_loaded()
        if self.server_url is not None:
            await self._drop_tokens()

    def client_metadata_document(self) -> dict[str, Any]:
        """The JSON document to host at `client_metadata_url` (CIMD)."""
        if self.client_metadata_url is None:
            raise ValueError("no client_metadata_url configured")
        document: dict[str, Any] = {
            "client_id": self.client_metadata_url,
            "client_name": self.client_name,
            "redirect_uris": [self.handler.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": self._application_type(),
        }
        if self.client_uri:
            document["client_uri"] = self.client_uri
        return document

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
        for _ in range(self.max_authorizations + 3):  # each round runs an authorization, refresh or retry
            status = response.status_code
            if status == 401:
                challenges = parse_challenges(response.headers.get_list("www-authenticate"))
                challenge = next((c for c in challenges if c.scheme == "bearer"), None)
                if challenges and challenge is None:
                    return  # another scheme than Bearer: not ours to answer
                refreshed = await self._on_unauthorized(challenge, generation, sent_token, refresh_allowed)
                refresh_allowed = refresh_allowed and not refreshed
            elif status == 403:
                challenge = next(
                    (
                        c
                        for c in parse_challenges(response.headers.get_list("www-authenticate"))
                        if c.scheme == "bearer"
                    ),
                    None,
                )
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
        if tokens is not None:
            request.headers["Authorization"] = f"Bearer {tokens.access_token}"
        return self._generation, tokens is not None

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
        if tokens is None or not tokens.refresh_token or not tokens.expired(self.refresh_skew):
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
                found = await self._discover(http, challenge)
                tokens = self._tokens
                if tokens is not None and tokens.issuer != found.issuer:
                    log.info(
                        "authorization server changed from %s to %s: dropping its tokens", tokens.issuer, found.issuer
                    )
                    await self._drop_tokens()
                    tokens = None
                can_refresh = refresh_allowed and sent_token and tokens is not None and tokens.refresh_token
                if can_refresh and tokens is not None and await self._refresh(http, found, tokens):
                    return True
                previous = tokens.requested_scope if tokens is not None else None
                await self._authorize(http, found, self._select_scope(found, challenge, previous))
                return False

    async def _on_insufficient_scope(self, challenge: Challenge, generation: int) -> bool:
        """Step-up; False once the bounded number of authorizations is used up."""
        async with self._get_lock():
            if self._generation != generation:
                return True
            if self._consecutive >= self.max_authorizations:
                return False
            async with self._client() as http:
                found = await self._discover(http, challenge)
                tokens = self._tokens
                if tokens is not None and tokens.issuer != found.issuer:
                    await self._drop_tokens()
                    tokens = None
                previous = (tokens.requested_scope or tokens.scope) if tokens is not None else None
                await self._authorize(http, found, self._select_scope(found, challenge, previous, step_up=True))
                return True

    async def _discover(self, http: httpx.AsyncClient, challenge: Challenge | None) -> Discovery:
        preferred = [t.issuer for t in (self._tokens,) if t is not None]
        if self._preregistered_issuer:
            preferred.append(self._preregistered_issuer)
        found = await discover(
            http,
            self._key,
            resource_metadata_url=challenge.resource_metadata if challenge is not None else None,
            preferred_issuers=preferred,
            allow_insecure_http=self.allow_insecure_http,
        )
        self._discovery = found
        return found

    def _select_scope(
        self, found: Discovery, challenge: Challenge | None, previous: str | None, *, step_up: bool = False
    ) -> str | None:
        if self.scope is not None and not step_up:
            base = self.scope.split()
        elif challenge is not None and challenge.scopes:
            base = challenge.scopes  # authoritative for the current request
        elif found.protected_resource is not None and found.protected_resource.scopes_supported:
            base = list(found.protected_resource.scopes_supported)
        else:
            base = []
        scopes = _union((previous or "").split(), base)
        metadata = found.metadata
        if (
            self.request_offline_access
            and scopes
            and OFFLINE_ACCESS not in scopes
            and OFFLINE_ACCESS in (metadata.scopes_supported or ())
            and metadata.supports_grant("refresh_token")
        ):
            scopes.append(OFFLINE_ACCESS)
        return " ".join(scopes) or None

    # -- internals: registration -----------------------------------------------------------------

    def _application_type(self) -> str:
        if self.application_type:
            return self.application_type
        parts = urlsplit(self.handler.redirect_uri)
        native = parts.scheme not in ("http", "https") or is_loopback_host(parts.hostname)
        return "native" if native else "web"

    async def _client_for(
        self, http: httpx.AsyncClient, found: Discovery, *, register: bool = True
    ) -> ClientCredentials | None:
        issuer = found.issuer
        pre = self.preregistered
        if pre is not None:
            if self._preregistered_issuer is None:
                self._preregistered_issuer = issuer  # bound to the first issuer it is used with
            if self._preregistered_issuer == issuer:
                return pre
        stored = await self.storage.get_client(issuer)
        redirect_uri = self.handler.redirect_uri
        usable = stored is not None and stored.issuer in (None, issuer) and not stored.expired()
        if usable and stored is not None and (not stored.redirect_uris or redirect_uri in stored.redirect_uris):
            return stored
        if self.client_metadata_url and found.metadata.client_id_metadata_document_supported:
            return ClientCredentials(
                client_id=self.client_metadata_url, token_endpoint_auth_method="none", issuer=issuer
            )
        if not register:
            return None
        if found.metadata.registration_endpoint:
            client = await self._register(http, found.metadata)
            await self.storage.set_client(issuer, client)
            return client
        if pre is not None:
            raise RegistrationError(
                f"the pre-registered client is for {self._preregistered_issuer}, but the server's authorization "
                f"server is {issuer}, which offers no registration"
            )
        raise RegistrationError(
            f"no way to register with {issuer}: no pre-registered client, no Client ID Metadata Document support "
            "and no registration_endpoint"
        )

    def _registration_auth_method(self, metadata: AuthorizationServerMetadata) -> str:
        supported = metadata.token_endpoint_auth_methods_supported
        if supported is None:
            return "client_secret_basic"  # RFC 8414's default for an omitted list
        for method in ("none", "client_secret_basic", "client_secret_post"):
            if method in supported:
                return method
        return "client_secret_basic"

    async def _register(self, http: httpx.AsyncClient, metadata: AuthorizationServerMetadata) -> ClientCredentials:
        assert metadata.registration_endpoint is not None
        method = self._registration_auth_method(metadata)
        body: dict[str, Any] = {
            "client_name": self.client_name,
            "redirect_uris": [self.handler.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": self._application_type(),
        }
        if self.client_uri:
            body["client_uri"] = self.client_uri
        body.update(self.extra_client_metadata)
        try:
            response = await http.post(
                metadata.registration_endpoint, json=body, headers={"Accept": "application/json"}
            )
        except httpx.TransportError as exc:
            raise RegistrationError(
                f"dynamic client registration at {metadata.registration_endpoint} failed: {exc}"
            ) from exc
        data = _json_object(response)
        if response.status_code not in (200, 201):
            error = data.get("error") if data else None
            description = data.get("error_description") if data else None
            raise RegistrationError(
                f"dynamic client registration refused: HTTP {response.status_code}"
                + (f" {error}" if error else "")
                + (f": {description}" if description else "")
            )
        client_id = data.get("client_id") if data else None
        if not isinstance(client_id, str) or not client_id:
            raise RegistrationError("the registration response has no client_id")
        assert data is not None
        secret = data.get("client_secret")
        expires = data.get("client_secret_expires_at")
        redirect_uris = data.get("redirect_uris")
        granted_method = data.get("token_endpoint_auth_method")
        return ClientCredentials(
            client_id=client_id,
            client_secret=secret if isinstance(secret, str) and secret else None,
            token_endpoint_auth_method=granted_method if isinstance(granted_method, str) else method,
            issuer=metadata.issuer,
            redirect_uris=tuple(u for u in redirect_uris if isinstance(u, str))
            if isinstance(redirect_uris, list)
            else (self.handler.redirect_uri,),
            client_secret_expires_at=float(expires) if isinstance(expires, (int, float)) else None,
            registration=data,
        )

    # -- internals: authorization and tokens -----------------------------------------------------

    async def _authorize(self, http: httpx.AsyncClient, found: Discovery, scope: str | None) -> None:
        if self._consecutive >= self.max_authorizations:
            raise AuthorizationLimitError(
                f"the server rejected the tokens of {self._consecutive} authorizations in a row; giving up"
            )
        self._consecutive += 1
        metadata = found.metadata
        client = await self._client_for(http, found)
        assert client is not None
        verifier, code_challenge = pkce_pair()
        state = secrets.token_urlsafe(32)
        redirect_uri = self.handler.redirect_uri
        params = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": redirect_uri,
            "code_challenge": code_challenge,
            "code_challenge_method": "S256",
            "state": state,
            "resource": found.resource,
        }
        if scope:
            params["scope"] = scope
        url = _with_query(metadata.authorization_endpoint, params)
        log.debug("authorizing with %s (scope %r)", metadata.issuer, scope)
        response = await self.handler.authorize(url)
        check_authorization_response(response, expected_state=state, metadata=metadata)
        assert response.code is not None
        data = {
            "grant_type": "authorization_code",
            "code": response.code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
            "resource": found.resource,
        }
        try:
            tokens = await self._token_request(http, found, client, data, requested_scope=scope)
        except TokenRequestError as exc:
            if (
                exc.error == "invalid_client"
                and client is not self.preregistered
                and client.client_id != self.client_metadata_url
            ):
                await self.storage.delete_client(found.issuer)  # stale registration: register again next time
            raise
        await self._set_tokens(tokens)

    async def _refresh(self, http: httpx.AsyncClient, found: Discovery, tokens: OAuthTokens) -> bool:
        assert tokens.refresh_token is not None
        client = await self._client_for(http, found, register=False)
        if client is None:
            return False
        data = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token, "resource": found.resource}
        try:
            fresh = await self._token_request(http, found, client, data, requested_scope=tokens.requested_scope)
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

    def _token_auth_method(self, client: ClientCredentials, metadata: AuthorizationServerMetadata) -> str:
        method = client.token_endpoint_auth_method
        if method in ("client_secret_basic", "client_secret_post") and not client.client_secret:
            return "none"
        if method is not None:
            if method not in TOKEN_AUTH_METHODS:
                raise OAuthError(f"token endpoint auth method {method!r} is not supported by this client")
            return method
        if not client.client_secret:
            return "none"
        supported = metadata.token_endpoint_auth_methods_supported or ("client_secret_basic",)
        for candidate in ("client_secret_basic", "client_secret_post", "none"):
            if candidate in supported:
                return candidate
        return "client_secret_basic"

    async def _token_request(
        self,
        http: httpx.AsyncClient,
        found: Discovery,
        client: ClientCredentials,
        data: dict[str, str],
        *,
        requested_scope: str | None,
    ) -> OAuthTokens:
        metadata = found.metadata
        method = self._token_auth_method(client, metadata)
        form = dict(data)
        headers = {"Accept": "application/json"}
        if method == "client_secret_basic":
            assert client.client_secret is not None
            headers["Authorization"] = basic_credentials(client.client_id, client.client_secret)
        elif method == "client_secret_post":
            assert client.client_secret is not None
            form["client_id"] = client.client_id
            form["client_secret"] = client.client_secret
        else:
            form["client_id"] = client.client_id
        try:
            response = await http.post(metadata.token_endpoint, data=form, headers=headers)
        except httpx.TransportError as exc:
            raise TokenRequestError(f"token request to {metadata.token_endpoint} failed: {exc}") from exc
        body = _json_object(response)
        if response.status_code != 200:
            error = body.get("error") if body else None
            description = body.get("error_description") if body else None
            raise TokenRequestError(
                f"token endpoint refused the {data['grant_type']} grant: HTTP {response.status_code}"
                + (f" {error}" if error else "")
                + (f": {description}" if description else ""),
                error=error if isinstance(error, str) else None,
                description=description if isinstance(description, str) else None,
                status_code=response.status_code,
            )
        return parse_token_response(
            body, issuer=metadata.issuer, resource=found.resource, requested_scope=requested_scope
        )


def _with_query(url: str, params: Mapping[str, str]) -> str:
    parts = urlsplit(url)
    extra = urlencode(params)
    return urlunsplit(parts._replace(query=f"{parts.query}&{extra}" if parts.query else extra, fragment=""))


def _json_object(response: httpx.Response) -> dict[str, Any] | None:
    try:
        data = response.json()
    except ValueError:
        return None
    return data if isinstance(data, dict) else None  # pyright: ignore[reportUnknownVariableType]


def check_authorization_response(
    response: AuthorizationResponse, *, expected_state: str, metadata: AuthorizationServerMetadata
) -> None:
    """RFC 9207 first (MCP 2026-07-28 table; a mismatched response is discarded unread, `error`
    included), then `state`, then `error`, then `code`."""
    iss = response.iss
    if iss is not None:
        if iss != metadata.issuer:  # simple string comparison: no normalization of any kind
            raise IssuerParameterError(
                f"the authorization response's iss {iss!r} is not the recorded issuer {metadata.issuer!r}; discarded"
            )
    elif metadata.authorization_response_iss_parameter_supported:
        raise IssuerParameterError(
            f"{metadata.issuer} advertises authorization_response_iss_parameter_supported, "
            "but the authorization response has no iss; discarded"
        )
    state = response.state
    if state is None or not hmac.compare_digest(state.encode("utf-8"), expected_state.encode("utf-8")):
        raise StateMismatchError("the authorization response's state does not match the request's; discarded")
    if response.error:
        raise AuthorizationDeniedError(response.error, response.error_description)
    if not response.code:
        raise AuthorizationError("the authorization response has neither a code nor an error")


def parse_token_response(
    body: Mapping[str, Any] | None, *, issuer: str, resource: str, requested_scope: str | None
) -> OAuthTokens:
    if body is None:
        raise TokenRequestError("the token endpoint did not answer a JSON object")
    access_token = body.get("access_token")
    if not isinstance(access_token, str) or not access_token:
        raise TokenRequestError("the token response has no access_token")
    token_type = body.get("token_type") or "Bearer"
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise TokenRequestError(f"unsupported token_type {token_type!r} (this client uses Bearer tokens)")
    expires_in = body.get("expires_in")
    expires_at = None
    if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool) and expires_in > 0:
        expires_at = time.time() + float(expires_in)
    refresh_token = body.get("refresh_token")
    scope = body.get("scope")
    return OAuthTokens(
        access_token=access_token,
        issuer=issuer,
        resource=resource,
        token_type="Bearer",
        expires_at=expires_at,
        refresh_token=refresh_token if isinstance(refresh_token, str) and refresh_token else None,
        scope=scope if isinstance(scope, str) else requested_scope,
        requested_scope=requested_scope,
    )
