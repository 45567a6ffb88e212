"""The proxy's authorization server endpoints, as ASGI: metadata (RFC 8414) and keys, registration
(RFC 7591), the authorization request and its consent page, the upstream provider's callback, the
token endpoint and revocation (RFC 7009).

The sign-in, step by step: the MCP client sends the user to `/authorize` (its client id and redirect
URI checked first: a request that fails those is answered here, never redirected); the user sees the
consent page naming the client and its redirect URI, protected by a per-request CSRF token held both
in the form and in a `SameSite=Strict` cookie (a cross-site form post has neither); approving
redirects to the upstream provider with the proxy's own PKCE S256 pair; the provider's code comes
back to the callback and is exchanged there, server-side; the proxy then redirects to the client
with its own code (and `iss`, RFC 9207), which the client exchanges at `/token` for the proxy's
tokens."""

from __future__ import annotations

import base64
import hmac
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote_plus

import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from mcp_bindings.runtime.auth.discovery import origin_of
from mcp_bindings.runtime.auth.dpop import b64url_sha256
from mcp_bindings.runtime.auth.grants import pkce_pair, with_query
from mcp_bindings.runtime.auth.proxy.clients import ClientError, ClientRegistry, ProxyClient
from mcp_bindings.runtime.auth.proxy.pages import consent_page, error_page
from mcp_bindings.runtime.auth.proxy.store import SealedRecords
from mcp_bindings.runtime.auth.proxy.tokens import Grants, TokenError
from mcp_bindings.runtime.auth.proxy.upstream import UpstreamClient, UpstreamError
from mcp_bindings.runtime.rpc import logs

log = logs.logger("auth.proxy")

MAX_BODY_BYTES = 64 * 1024
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
Handler = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True)
class Site:
    """Where the proxy is: its issuer (the MCP server's origin), the MCP resource, the paths."""

    issuer: str
    resource: str
    callback_path: str
    server_name: str
    authorization_ttl_s: float
    authorizations_per_address: int = 60  # sign-ins started (pending consents) per address per authorization_ttl_s

    def url(self, path: str) -> str:
        return self.issuer + path

    @property
    def secure(self) -> bool:
        return self.issuer.startswith("https:")


class ProxyEndpoints:
    """The endpoints (`paths`) of one proxy; `__call__` serves a request for one of them."""

    def __init__(
        self,
        site: Site,
        *,
        upstream: UpstreamClient,
        clients: ClientRegistry,
        grants: Grants,
        records: SealedRecords,
        jwks: Mapping[str, Any],
        scopes: Callable[[], Sequence[str]],
        default_scopes: Sequence[str],
    ) -> None:
        self.site = site
        self.upstream = upstream
        self.clients = clients
        self.grants = grants
        self.records = records
        self.jwks = dict(jwks)
        self.scopes = scopes
        self.default_scopes = list(default_scopes)
        self.paths: dict[str, tuple[str, Handler]] = {
            "/.well-known/oauth-authorization-server": ("GET", self.metadata),
            "/jwks": ("GET", self.keys),
            "/register": ("POST", self.register),
            "/authorize": ("GET", self.authorize),
            "/consent": ("POST", self.consent),
            site.callback_path: ("GET", self.callback),
            "/token": ("POST", self.token),
            "/revoke": ("POST", self.revoke),
        }

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        method, handler = self.paths[scope["path"]]
        request = Request(scope, receive)
        if request.method != method and not (method == "GET" and request.method == "HEAD"):
            response: Response = Response(status_code=405, headers={"Allow": method})
        else:
            response = await handler(request)
        await response(scope, receive, send)

    # -- metadata ------------------------------------------------------------------------------

    def metadata_document(self) -> dict[str, Any]:
        url, methods = self.site.url, ["none", "client_secret_basic", "client_secret_post"]
        return {
            "issuer": self.site.issuer,
            "authorization_endpoint": url("/authorize"),
            "token_endpoint": url("/token"),
            "registration_endpoint": url("/register"),
            "revocation_endpoint": url("/revoke"),
            "jwks_uri": url("/jwks"),
            "scopes_supported": list(self.scopes()),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": methods,
            "revocation_endpoint_auth_methods_supported": methods,
            "client_id_metadata_document_supported": True,
            "authorization_response_iss_parameter_supported": True,
        }

    async def metadata(self, request: Request) -> Response:
        return JSONResponse(self.metadata_document(), headers={"Access-Control-Allow-Origin": "*"})

    async def keys(self, request: Request) -> Response:
        return JSONResponse(self.jwks, headers={"Access-Control-Allow-Origin": "*"})

    # -- registration --------------------------------------------------------------------------

    async def register(self, request: Request) -> Response:
        body = await _body(request)
        try:
            metadata = orjson.loads(body) if body is not None else None
        except orjson.JSONDecodeError:
            metadata = None
        address = request.client.host if request.client is not None else "unknown"
        try:
            answer = await self.clients.register(metadata, address)
        except ClientError as exc:
            headers = {**NO_STORE, **({"Retry-After": "60"} if exc.status == 429 else {})}
            error = {"error": exc.error, "error_description": exc.description}
            return JSONResponse(error, status_code=exc.status, headers=headers)
        return JSONResponse(answer, status_code=201, headers=NO_STORE)

    # -- the authorization request and consent -------------------------------------------------

    async def authorize(self, request: Request) -> Response:
        query = _first(request.query_params.multi_items())
        try:
            client, redirect_uri = await self._client_and_redirect(query)
        except ClientError as exc:
            return error_page(400, exc.description)
        state = query.get("state")
        try:
            scopes = self._checked_request(query)
            await self.upstream.resolved()  # the provider reachable before the user is asked anything
        except ClientError as exc:
            return _to_client(
                redirect_uri, {"error": exc.error, "error_description": exc.description}, state, self.site
            )
        except UpstreamError as exc:
            log.warning("authorization refused: %s", exc)
            failed = {"error": "temporarily_unavailable", "error_description": str(exc)}
            return _to_client(redirect_uri, failed, state, self.site)
        address = request.client.host if request.client is not None else "unknown"
        started = await self.records.count(f"authorizations:{address}", self.site.authorization_ttl_s)
        if started > self.site.authorizations_per_address:
            bound = f"{self.site.authorizations_per_address} per {int(self.site.authorization_ttl_s)} s"
            return error_page(
                429,
                f"too many sign-ins started from this address (at most {bound}; "
                "authorizations_per_address); try again later",
            )
        transaction, csrf = secrets.token_urlsafe(18), secrets.token_urlsafe(24)
        pending = {
            "client_id": client.client_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "code_challenge": query["code_challenge"],
            "scope": " ".join(scopes),
            "csrf": csrf,
        }
        await self.records.put(f"authorization:{transaction}", pending, self.site.authorization_ttl_s)
        page = consent_page(
            action=self.site.url("/consent"),
            transaction=transaction,
            csrf=csrf,
            client_name=client.client_name,
            client_id=client.client_id,
            redirect_uri=redirect_uri,
            scopes=scopes,
            provider=self.upstream.settings.display_name,
            server=self.site.server_name,
        )
        page.set_cookie(
            _cookie(transaction),
            csrf,
            max_age=int(self.site.authorization_ttl_s),
            path="/consent",
            secure=self.site.secure,
            httponly=True,
            samesite="strict",
        )
        return page

    async def _client_and_redirect(self, query: Mapping[str, str]) -> tuple[ProxyClient, str]:
        """The client and its redirect URI, both checked (a failure is shown here, never redirected)."""
        client_id = query.get("client_id")
        if not client_id:
            raise ClientError("invalid_request", "the authorization request has no client_id")
        client = await self.clients.find(client_id)
        redirect_uri = query.get("redirect_uri")
        if redirect_uri is None and len(client.redirect_uris) == 1:
            redirect_uri = client.redirect_uris[0]
        if redirect_uri is None:
            raise ClientError("invalid_request", "the authorization request has no redirect_uri")
        if not client.allows(redirect_uri):
            raise ClientError("invalid_request", f"redirect_uri {redirect_uri!r} is not registered for this client")
        return client, redirect_uri

    def _checked_request(self, query: Mapping[str, str]) -> list[str]:
        """The requested scopes, once the rest of the request is checked (`ClientError`: redirected)."""
        if query.get("response_type") != "code":
            raise ClientError("unsupported_response_type", "response_type must be code")
        if not query.get("code_challenge") or query.get("code_challenge_method") != "S256":
            raise ClientError("invalid_request", "PKCE is required: code_challenge with code_challenge_method=S256")
        resource = query.get("resource")
        if resource is not None and resource != self.site.resource:
            raise ClientError(
                "invalid_target", f"this authorization server issues tokens for {self.site.resource} only"
            )
        asked = (query.get("scope") or "").split() or self.default_scopes
        unknown = [s for s in asked if s not in self.scopes()]
        if unknown:
            raise ClientError("invalid_scope", f"unknown scope(s): {' '.join(unknown)}")
        return asked

    async def consent(self, request: Request) -> Response:
        form = await _form(request)
        origin = request.headers.get("origin")
        if origin is not None and origin != origin_of(self.site.issuer):
            return error_page(403, "consent refused: the form was posted from another site")
        transaction = form.get("transaction", "")
        pending = await self.records.get(f"authorization:{transaction}")
        if pending is None:
            return error_page(400, "this sign-in expired or was already answered; start again from the application")
        csrf = str(pending["csrf"]).encode()
        if not (
            hmac.compare_digest(form.get("csrf", "").encode(), csrf)
            and hmac.compare_digest(request.cookies.get(_cookie(transaction), "").encode(), csrf)
        ):
            return error_page(403, "consent refused: the form was not submitted from this server's page (CSRF check)")
        if await self.records.take(f"authorization:{transaction}") is None:
            return error_page(400, "this sign-in was already answered; start again from the application")
        if form.get("decision") != "approve":
            denied = {"error": "access_denied", "error_description": "the user denied access"}
            response = _to_client(str(pending["redirect_uri"]), denied, pending["state"], self.site)
        else:
            response = await self._to_upstream(pending)
        response.delete_cookie(_cookie(transaction), path="/consent")
        return response

    async def _to_upstream(self, pending: dict[str, Any]) -> Response:
        up = await self.upstream.resolved()
        verifier, challenge = pkce_pair()
        state, nonce = secrets.token_urlsafe(24), secrets.token_urlsafe(16)
        record = {**pending, "verifier": verifier, "nonce": nonce if up.openid else None}
        await self.records.put(f"upstream:{state}", record, self.site.authorization_ttl_s)
        params = {
            **up.params,
            "response_type": "code",
            "client_id": up.client_id,
            "redirect_uri": self.site.url(self.site.callback_path),
            "scope": " ".join(up.scopes),
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        if up.openid:
            params["nonce"] = nonce
        assert up.authorization_endpoint is not None
        return RedirectResponse(with_query(up.authorization_endpoint, params), status_code=303)

    # -- back from the upstream provider ---------------------------------------------------------

    async def callback(self, request: Request) -> Response:
        query = _first(request.query_params.multi_items())
        pending = await self.records.take(f"upstream:{query.get('state', '')}")
        if pending is None:
            return error_page(400, "unknown or expired sign-in (state); start again from the application")
        redirect_uri, state = str(pending["redirect_uri"]), pending["state"]
        if query.get("error") or not query.get("code"):
            said = query.get("error") or "no code"
            failed = {"error": "access_denied", "error_description": f"the sign-in provider answered: {said}"}
            return _to_client(redirect_uri, failed, state, self.site)
        try:
            up = await self.upstream.resolved()
            if "iss" in query and up.issuer and query["iss"] != up.issuer:
                raise UpstreamError(f"the sign-in response names issuer {query['iss']!r}, not {up.issuer!r}")
            tokens = await self.upstream.exchange(
                query["code"], self.site.url(self.site.callback_path), pending["verifier"]
            )
            identity = await self.upstream.identity(tokens, pending.get("nonce"))
        except UpstreamError as exc:
            log.warning("sign-in failed: %s", exc)
            failed = {"error": exc.error, "error_description": str(exc)}
            return _to_client(redirect_uri, failed, state, self.site)
        code = await self.grants.issue_code(pending, identity.subject, identity.claims, tokens)
        return _to_client(redirect_uri, {"code": code}, state, self.site)

    # -- tokens ------------------------------------------------------------------------------------

    async def token(self, request: Request) -> Response:
        form = await _form(request)
        try:
            client = await self._authenticated(request, form)
            grant_type = form.get("grant_type")
            if grant_type == "authorization_code":
                answer = await self.grants.redeem_code(form, client)
            elif grant_type == "refresh_token":
                answer = await self.grants.refresh(form, client)
            else:
                raise TokenError("unsupported_grant_type", f"grant_type {grant_type!r} is not supported here")
        except TokenError as exc:
            return _token_error(exc)
        return JSONResponse(answer, headers=NO_STORE)

    async def revoke(self, request: Request) -> Response:
        form = await _form(request)
        try:
            client = await self._authenticated(request, form)
        except TokenError as exc:
            return _token_error(exc)
        await self.grants.revoke(form.get("token", ""), client)
        return Response(status_code=200, headers=NO_STORE)

    async def _authenticated(self, request: Request, form: Mapping[str, str]) -> ProxyClient:
        client_id, secret = _basic(request.headers.get("authorization"))
        client_id = client_id or form.get("client_id")
        secret = secret or form.get("client_secret")
        if not client_id:
            raise TokenError("invalid_client", "no client_id (client authentication)", 401)
        try:
            client = await self.clients.find(client_id)
        except ClientError as exc:
            raise TokenError("invalid_client", exc.description, 401) from None
        if client.auth_method != "none" and not (
            secret and client.secret_digest and hmac.compare_digest(b64url_sha256(secret), client.secret_digest)
        ):
            raise TokenError("invalid_client", "client authentication failed", 401)
        return client


def _cookie(transaction: str) -> str:
    return f"mcp-consent-{transaction}"


def _first(items: Sequence[tuple[str, str]]) -> dict[str, str]:
    found: dict[str, str] = {}
    for key, value in items:
        found.setdefault(key, value)
    return found


async def _body(request: Request) -> bytes | None:
    """The request body, or None past `MAX_BODY_BYTES`."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            return None
    return bytes(body)


async def _form(request: Request) -> dict[str, str]:
    body = await _body(request)
    return _first(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)) if body else {}


def _basic(header: str | None) -> tuple[str | None, str | None]:
    if not header or not header.lower().startswith("basic "):
        return None, None
    try:
        decoded = base64.b64decode(header[6:].strip(), validate=True).decode()
    except ValueError:
        return None, None
    client_id, _, secret = decoded.partition(":")
    return unquote_plus(client_id), unquote_plus(secret)


def _to_client(redirect_uri: str, params: Mapping[str, Any], state: Any, site: Site) -> Response:
    """The redirect back to the MCP client with `params`, its `state` and the proxy's `iss`."""
    return RedirectResponse(with_query(redirect_uri, {**params, "state": state, "iss": site.issuer}), status_code=302)


def _token_error(exc: TokenError) -> Response:
    headers = {**NO_STORE, **({"WWW-Authenticate": "Basic"} if exc.status == 401 else {})}
    return JSONResponse({"error": exc.error, "error_description": exc.description}, exc.status, headers=headers)
