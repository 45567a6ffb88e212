"""OAuth 2.1 for MCP servers (the resource-server side): an ASGI middleware and token verifiers.

    app = require_bearer(
        create_app(MyServer()),
        JWTVerifier(issuer="https://auth.example.com", jwks_uri="https://auth.example.com/jwks.json"),
        resource="https://mcp.example.com/mcp",
        authorization_servers=["https://auth.example.com"],
        scopes_supported=["mcp:read", "mcp:write"],
        required_scopes=["mcp:read"],
    )

The middleware
* serves the Protected Resource Metadata (RFC 9728) at `/.well-known/oauth-protected-resource<path>`
  (and, with `serve_root_metadata`, at the root well-known URL too);
* requires `Authorization: Bearer <token>` on everything else (CORS preflights excepted), verified by a
  pluggable `TokenVerifier` that binds the token to `resource` (its audience, RFC 8707);
* answers `401` with `WWW-Authenticate: Bearer resource_metadata="...", scope="..."` (plus
  `error="invalid_token"` for a bad token) and `403` with `error="insufficient_scope"` and every scope
  the operation needs (MCP "Scope Challenge Handling"); a token in the query string is refused (400);
* never passes the token on: the `Authorization` header is removed before the wrapped app runs, which
  finds the verified `AccessToken` (claims, scopes, client — not the token itself) in `scope["auth"]`.

With `dpop=DPoPProofVerifier(...)` it also takes DPoP-bound tokens (RFC 9449): `Authorization: DPoP
<token>` plus a `DPoP` proof, checked against this request's method and URL, the token (`ath`) and the
token's `cnf.jkt`, with replayed proofs refused; a bad proof gets `401` with `WWW-Authenticate: DPoP
error="invalid_dpop_proof"`, a missing or stale server nonce `error="use_dpop_nonce"` and a fresh
`DPoP-Nonce`. A DPoP-bound token presented as a Bearer token is refused (§7.2); `dpop_required` refuses
Bearer tokens altogether. The PRM then advertises `dpop_signing_alg_values_supported`.

`required_scopes` may be a callable of the request (`RequestInfo`: method, path, headers and the parsed
JSON-RPC body of a POST), so an MCP server can ask more for `tools/call` than for `tools/list`
(step-up authorization). `scope_hierarchy` lets a broad scope imply narrower ones.

Verifiers: `JWTVerifier` (signed JWT access tokens, keys from a JWKS; needs PyJWT with `cryptography`)
and `IntrospectionVerifier` (RFC 7662). Anything with `async verify(token, *, resource)` works.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from urllib.parse import parse_qsl, urlsplit

import anyio
import httpx

from mcp_bindings.runtime.auth.challenge import format_challenge
from mcp_bindings.runtime.auth.discovery import WELL_KNOWN_PRM, fetch_authorization_server_metadata, origin_of
from mcp_bindings.runtime.rpc import logs

if TYPE_CHECKING:
    from mcp_bindings.runtime.auth.dpop import DPoPProofVerifier

log = logs.logger("auth")

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True)
class AccessToken:
    """A verified access token, as the wrapped app sees it (`scope["auth"]`)."""

    scopes: tuple[str, ...] = ()
    client_id: str | None = None
    subject: str | None = None
    issuer: str | None = None
    audience: tuple[str, ...] = ()
    expires_at: float | None = None
    claims: Mapping[str, Any] = field(default_factory=dict)

    @property
    def principal(self) -> str:
        """Who the token speaks for, as one string (issuer, subject and client id): what the
        server binds per-principal state to (sealed `requestState`)."""
        return json.dumps([self.issuer, self.subject, self.client_id], separators=(",", ":"))


class InvalidTokenError(Exception):
    """The token is malformed, expired, revoked, for another resource, or otherwise not acceptable."""


class VerifierUnavailableError(Exception):
    """The verifier could not decide (JWKS or introspection endpoint unreachable): answered 503."""


@runtime_checkable
class TokenVerifier(Protocol):
    async def verify(self, token: str, *, resource: str) -> AccessToken: ...


def _scopes_of(claims: Mapping[str, Any]) -> tuple[str, ...]:
    value = claims.get("scope", claims.get("scp"))
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list):
        return tuple(str(v) for v in value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return ()


def _audience_of(claims: Mapping[str, Any]) -> tuple[str, ...]:
    value = claims.get("aud")
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(str(v) for v in value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return ()


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# -- verifiers -----------------------------------------------------------------------------------


class JWTVerifier:
    """JWT access tokens (RFC 9068 style) signed by `issuer` with a key of its JWKS.

    Checks the signature (only the asymmetric `algorithms` listed; never `none` or HMAC), `iss`, `exp`
    (with `leeway`), `nbf`, and that `aud` contains the resource (or `audience`). Keys come from `jwks`
    (a JWKS dict), else `jwks_uri`, else the `jwks_uri` of the issuer's metadata; a token signed with an
    unknown `kid` triggers one re-fetch (at most every `min_refetch_seconds`).
    """

    def __init__(
        self,
        *,
        issuer: str,
        jwks: Mapping[str, Any] | None = None,
        jwks_uri: str | None = None,
        audience: str | Sequence[str] | None = None,
        algorithms: Sequence[str] = (
            "RS256",
            "RS384",
            "RS512",
            "PS256",
            "PS384",
            "PS512",
            "ES256",
            "ES384",
            "ES512",
            "EdDSA",
        ),
        leeway: float = 30.0,
        require_typ: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        timeout: float = 10.0,
        jwks_max_age: float = 3600.0,
        min_refetch_seconds: float = 30.0,
    ) -> None:
        bad = [a for a in algorithms if a.lower() == "none" or a.upper().startswith("HS")]
        if bad:
            raise ValueError(f"refusing algorithms {bad}: JWT access tokens must be signed asymmetrically")
        self.issuer = issuer
        self.audience = audience
        self.algorithms = tuple(algorithms)
        self.leeway = leeway
        self.require_typ = require_typ
        self.jwks_uri = jwks_uri
        self.timeout = timeout
        self.jwks_max_age = jwks_max_age
        self.min_refetch_seconds = min_refetch_seconds
        self._http = http_client
        self._static = jwks is not None
        self._jwks: dict[str, Any] | None = dict(jwks) if jwks is not None else None
        self._fetched_at = 0.0

    async def _fetch_jwks(self) -> None:
        async with self._client() as http:
            try:
                if self.jwks_uri is None:
                    metadata = await fetch_authorization_server_metadata(http, self.issuer)
                    uri = metadata.raw.get("jwks_uri") if metadata is not None else None
                    if not isinstance(uri, str):
                        raise VerifierUnavailableError(f"no jwks_uri in the metadata of {self.issuer}")
                    self.jwks_uri = uri
                response = await http.get(self.jwks_uri, headers={"Accept": "application/json"})
            except httpx.HTTPError as exc:
                raise VerifierUnavailableError(f"could not fetch the JWKS of {self.issuer}: {exc}") from exc
        if response.status_code != 200:
            raise VerifierUnavailableError(f"JWKS at {self.jwks_uri}: HTTP {response.status_code}")
        try:
            data = response.json()
        except ValueError as exc:
            raise VerifierUnavailableError(f"JWKS at {self.jwks_uri} is not JSON") from exc
        if not isinstance(data, dict) or not isinstance(data.get("keys"), list):  # pyright: ignore[reportUnknownMemberType]
            raise VerifierUnavailableError(f"JWKS at {self.jwks_uri} has no `keys`")
        self._jwks = data  # pyright: ignore[reportUnknownMemberType]
        self._fetched_at = time.monotonic()

    def _client(self) -> Any:
        if self._http is not None:
            return _Borrowed(self._http)
        return httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)

    def _find_key(self, kid: str | None, alg: str) -> Any:
        import jwt

        keys = [k for k in (self._jwks or {}).get("keys", []) if isinstance(k, dict)]
        for jwk in keys:
            if jwk.get("use") not in (None, "sig"):
                continue
            if kid is not None and jwk.get("kid") != kid:
                continue
            if jwk.get("alg") not in (None, alg):
                continue
            try:
                return jwt.PyJWK.from_dict(jwk, algorithm=alg).key
            except jwt.PyJWTError:
                continue
        return None

    async def _key(self, kid: str | None, alg: str) -> Any:
        now = time.monotonic()
        if self._jwks is None or (not self._static and now - self._fetched_at > self.jwks_max_age):
            await self._fetch_jwks()
        key = self._find_key(kid, alg)
        if key is None and not self._static and now - self._fetched_at >= self.min_refetch_seconds:
            await self._fetch_jwks()  # key rotation
            key = self._find_key(kid, alg)
        if key is None:
            raise InvalidTokenError("the token is signed with an unknown key")
        return key

    async def verify(self, token: str, *, resource: str) -> AccessToken:
        import jwt

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise InvalidTokenError("malformed token") from exc
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise InvalidTokenError(f"token algorithm {alg!r} is not accepted")
        if self.require_typ is not None:
            typ = str(header.get("typ", "")).lower().removeprefix("application/")
            if typ != self.require_typ.lower().removeprefix("application/"):
                raise InvalidTokenError(f"token typ {header.get('typ')!r} is not {self.require_typ!r}")
        kid = header.get("kid")
        key = await self._key(kid if isinstance(kid, str) else None, alg)
        audience = self.audience if self.audience is not None else resource
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[alg],
                audience=audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.ExpiredSignatureError as exc:
            raise InvalidTokenError("the token has expired") from exc
        except jwt.InvalidAudienceError as exc:
            raise InvalidTokenError("the token was not issued for this resource") from exc
        except jwt.InvalidIssuerError as exc:
            raise InvalidTokenError("the token was issued by another authorization server") from exc
        except jwt.PyJWTError as exc:
            raise InvalidTokenError(f"invalid token: {exc}") from exc
        exp = claims.get("exp")
        return AccessToken(
            scopes=_scopes_of(claims),
            client_id=_str_or_none(claims.get("client_id", claims.get("azp"))),
            subject=_str_or_none(claims.get("sub")),
            issuer=_str_or_none(claims.get("iss")),
            audience=_audience_of(claims),
            expires_at=float(exp) if isinstance(exp, (int, float)) else None,
            claims=claims,
        )


class _Borrowed:
    """An injected client used as `async with` without closing it."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def __aenter__(self) -> httpx.AsyncClient:
        return self.client

    async def __aexit__(self, *exc: object) -> None:
        return None


class IntrospectionVerifier:
    """Token introspection (RFC 7662) at the authorization server, authenticated as a client
    (`client_secret_basic` or `client_secret_post`). The answer must be `active`, unexpired, from
    `issuer` (when given) and, unless `require_audience=False`, have the resource in `aud`.
    Positive answers are cached for `cache_seconds` (never past the token's `exp`)."""

    def __init__(
        self,
        introspection_endpoint: str,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        auth_method: str = "client_secret_basic",
        issuer: str | None = None,
        require_audience: bool = True,
        http_client: httpx.AsyncClient | None = None,
        timeout: float = 10.0,
        cache_seconds: float = 0.0,
        max_cache_entries: int = 10_000,
    ) -> None:
        if auth_method not in ("client_secret_basic", "client_secret_post", "none"):
            raise ValueError(f"unsupported auth_method {auth_method!r}")
        self.endpoint = introspection_endpoint
        self.client_id = client_id
        self.client_secret = client_secret
        self.auth_method = auth_method
        self.issuer = issuer
        self.require_audience = require_audience
        self.timeout = timeout
        self.cache_seconds = cache_seconds
        self.max_cache_entries = max_cache_entries
        self._http = http_client
        self._cache: dict[str, tuple[float, AccessToken]] = {}

    async def verify(self, token: str, *, resource: str) -> AccessToken:
        key = hashlib.sha256(f"{resource}\n{token}".encode()).hexdigest()
        now = time.time()
        cached = self._cache.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        claims = await self._introspect(token)
        if claims.get("active") is not True:
            raise InvalidTokenError("the token is not active")
        exp = claims.get("exp")
        if isinstance(exp, (int, float)) and exp <= now:
            raise InvalidTokenError("the token has expired")
        if self.issuer is not None and claims.get("iss") not in (None, self.issuer):
            raise InvalidTokenError("the token was issued by another authorization server")
        audience = _audience_of(claims)
        if self.require_audience and resource not in audience:
            raise InvalidTokenError("the token was not issued for this resource")
        info = AccessToken(
            scopes=_scopes_of(claims),
            client_id=_str_or_none(claims.get("client_id")),
            subject=_str_or_none(claims.get("sub")),
            issuer=_str_or_none(claims.get("iss")),
            audience=audience,
            expires_at=float(exp) if isinstance(exp, (int, float)) else None,
            claims=claims,
        )
        if self.cache_seconds > 0:
            until = now + self.cache_seconds
            if info.expires_at is not None:
                until = min(until, info.expires_at)
            if len(self._cache) >= self.max_cache_entries:
                self._cache.clear()
            self._cache[key] = (until, info)
        return info

    async def _introspect(self, token: str) -> dict[str, Any]:
        """The introspection answer (a JSON object) about `token`; VerifierUnavailableError when there is none."""
        data = {"token": token, "token_type_hint": "access_token"}
        headers = {"Accept": "application/json"}
        if self.auth_method == "client_secret_basic" and self.client_id is not None:
            from mcp_bindings.runtime.auth.grants import basic_credentials

            headers["Authorization"] = basic_credentials(self.client_id, self.client_secret or "")
        elif self.client_id is not None:
            data["client_id"] = self.client_id
            if self.auth_method == "client_secret_post" and self.client_secret is not None:
                data["client_secret"] = self.client_secret
        client = _Borrowed(self._http) if self._http is not None else httpx.AsyncClient(timeout=self.timeout)
        try:
            async with client as http:
                response = await http.post(self.endpoint, data=data, headers=headers)
        except httpx.HTTPError as exc:
            raise VerifierUnavailableError(f"introspection failed: {exc}") from exc
        if response.status_code != 200:
            raise VerifierUnavailableError(f"introspection endpoint answered HTTP {response.status_code}")
        try:
            body = response.json()
        except ValueError as exc:
            raise VerifierUnavailableError("introspection answer is not JSON") from exc
        if not isinstance(body, dict):
            raise VerifierUnavailableError("introspection answer is not a JSON object")
        answer: dict[str, Any] = body  # pyright: ignore[reportUnknownVariableType]
        return answer


# -- the middleware ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RequestInfo:
    """What a `required_scopes` callable sees."""

    method: str
    path: str
    headers: Mapping[str, str]
    message: Any = None  # the JSON body of a POST (a JSON-RPC message or batch), else None


ScopePolicy = Callable[[RequestInfo], "Sequence[str] | Awaitable[Sequence[str]]"]


def protected_resource_metadata_url(resource: str) -> str:
    """RFC 9728 §3.1: the well-known suffix inserted between the host and the path."""
    parts = urlsplit(resource)
    return origin_of(resource) + WELL_KNOWN_PRM + parts.path.rstrip("/")


def protected_resource_metadata(
    resource: str,
    authorization_servers: Sequence[str],
    *,
    scopes_supported: Sequence[str] | None = None,
    resource_name: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    document: dict[str, Any] = {
        "resource": resource,
        "authorization_servers": list(authorization_servers),
        "bearer_methods_supported": ["header"],
    }
    if scopes_supported is not None:
        document["scopes_supported"] = list(scopes_supported)
    if resource_name is not None:
        document["resource_name"] = resource_name
    document.update(extra or {})
    return document


class BearerAuthMiddleware:
    """See the module docstring; build it with `require_bearer(...)`."""

    def __init__(
        self,
        app: ASGIApp,
        verifier: TokenVerifier,
        *,
        resource: str,
        authorization_servers: Sequence[str],
        scopes_supported: Sequence[str] | None = None,
        required_scopes: Sequence[str] | ScopePolicy = (),
        scope_hierarchy: Mapping[str, Sequence[str]] | None = None,
        resource_name: str | None = None,
        serve_root_metadata: bool = False,
        extra_metadata: Mapping[str, Any] | None = None,
        max_body_bytes: int = 4 * 1024 * 1024,
        body_timeout_seconds: float = 60.0,
        dpop: DPoPProofVerifier | None = None,
        dpop_required: bool = False,
    ) -> None:
        if dpop_required and dpop is None:
            raise ValueError("dpop_required needs a dpop verifier (DPoPProofVerifier())")
        if not authorization_servers:
            raise ValueError("at least one authorization server is required (MCP: PRM authorization_servers)")
        parts = urlsplit(resource)
        if not parts.scheme or not parts.netloc or parts.fragment:
            raise ValueError(f"resource must be an absolute URI without a fragment: {resource!r}")
        self.app = app
        self.verifier = verifier
        self.resource = resource
        self.metadata_url = protected_resource_metadata_url(resource)
        self.metadata_paths = {urlsplit(self.metadata_url).path}
        if serve_root_metadata:
            self.metadata_paths.add(WELL_KNOWN_PRM)
        self.dpop = dpop
        self.dpop_required = dpop_required
        dpop_metadata: dict[str, Any] = {}
        if dpop is not None:
            dpop_metadata["dpop_signing_alg_values_supported"] = list(dpop.algorithms)
            dpop_metadata["dpop_bound_access_tokens_required"] = dpop_required
        self.metadata = protected_resource_metadata(
            resource,
            authorization_servers,
            scopes_supported=scopes_supported,
            resource_name=resource_name,
            extra={**dpop_metadata, **(extra_metadata or {})},
        )
        self._metadata_body = json.dumps(self.metadata).encode()
        self.required_scopes = required_scopes
        self.scope_hierarchy = {k: tuple(v) for k, v in (scope_hierarchy or {}).items()}
        self.max_body_bytes = max_body_bytes
        self.body_timeout_seconds = body_timeout_seconds  # a scope policy reads the body: not forever

    def set_authorization_servers(self, authorization_servers: Sequence[str]) -> None:
        """Point clients at other authorization servers (an authorization-server migration): the PRM
        changes at once; the verifier decides which issuers' tokens are still accepted."""
        if not authorization_servers:
            raise ValueError("at least one authorization server is required")
        self.metadata["authorization_servers"] = list(authorization_servers)
        self._metadata_body = json.dumps(self.metadata).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)  # lifespan and the like
            return
        method = scope.get("method", "GET") if kind == "http" else "GET"
        path = scope.get("path", "")
        if kind == "http" and path in self.metadata_paths:
            await _serve_metadata(send, method, self._metadata_body)
            return
        if kind == "http" and method == "OPTIONS":
            await self.app(scope, receive, send)  # CORS preflight: never carries credentials
            return
        headers = _headers(scope)
        query = scope.get("query_string", b"").decode("latin-1")
        if any(key == "access_token" for key, _ in parse_qsl(query, keep_blank_values=True)):
            await self._deny(kind, send, 400, "invalid_request", "access tokens are not accepted in the URI", None)
            return

        body: bytes | None = None
        message: Any = None
        if callable(self.required_scopes) and kind == "http" and method == "POST":
            body = await self._policy_body(receive, send)
            if body is None:
                return  # answered: 408 or 413
            try:
                message = json.loads(body) if body else None
            except ValueError:
                message = None
        required = await self._required(RequestInfo(method, path, headers, message))
        scope_param = " ".join(required) or None

        info = await self._authenticate(scope, headers, kind, method, send, scope_param)
        if info is None:
            return  # denied (401), or the verifier was unavailable (503)
        granted = self._effective(info.scopes)
        if any(s not in granted for s in required):
            await self._deny(
                kind, send, 403, "insufficient_scope", "the token lacks a scope this request needs", scope_param
            )
            return

        inner = dict(scope)
        inner["headers"] = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"authorization"]
        inner["auth"] = info
        inner.setdefault("state", {})
        await self.app(inner, _replay(body, receive) if body is not None else receive, send)

    async def _policy_body(self, receive: Receive, send: Send) -> bytes | None:
        """The request body, read for a scope policy (bounded in size and time); None once the request
        was answered (408: too slow, 413: too large)."""
        try:
            with anyio.fail_after(self.body_timeout_seconds):
                body = await _read_body(receive, self.max_body_bytes)
        except TimeoutError:
            slow = {"error": "invalid_request", "error_description": "request body too slow"}
            await _plain(send, 408, slow, [(b"connection", b"close")])
            return None
        if body is None:
            await _plain(send, 413, {"error": "invalid_request", "error_description": "request body too large"})
        return body

    async def _authenticate(
        self, scope: Scope, headers: Mapping[str, str], kind: str, method: str, send: Send, scope_param: str | None
    ) -> AccessToken | None:
        """The verified, unexpired access token of this request (with its DPoP proof, if so presented);
        None once the request was denied (401) or the verifier was unavailable (503, or a closed websocket)."""
        authorization = headers.get("authorization")
        if not authorization:
            await self._deny(kind, send, 401, None, None, scope_param)
            return None
        scheme, _, token = authorization.partition(" ")
        scheme, token = scheme.lower(), token.strip()
        accepted = ("dpop",) if self.dpop_required else ("bearer", "dpop") if self.dpop is not None else ("bearer",)
        if scheme not in accepted or not token:
            await self._deny(kind, send, 401, None, None, scope_param)  # RFC 6750 §3.1: no error code
            return None
        try:
            info = await self.verifier.verify(token, resource=self.resource)
            if scheme == "dpop":
                await self._check_dpop(scope, headers, method, token, info)
            elif _bound_jkt(info.claims) is not None:
                raise InvalidTokenError("a DPoP-bound token must be presented with the DPoP scheme and a proof")
        except InvalidTokenError as exc:
            denial = _dpop_denial(exc)
            await self._deny(
                kind,
                send,
                401,
                denial[0] if denial else "invalid_token",
                str(exc) or "invalid token",
                scope_param,
                nonce=denial[1] if denial else None,
            )
            return None
        except VerifierUnavailableError as exc:
            log.warning("token verification unavailable: %s", exc)
            if kind == "http":
                await _plain(send, 503, {"error": "temporarily_unavailable"})
            else:
                await _close(send)
            return None
        if info.expires_at is not None and info.expires_at <= time.time():
            await self._deny(kind, send, 401, "invalid_token", "the token has expired", scope_param)
            return None
        return info

    async def _check_dpop(
        self, scope: Scope, headers: Mapping[str, str], method: str, token: str, info: AccessToken
    ) -> None:
        """RFC 9449 §7.1: the proof of this request, by the key the token is bound to."""
        from mcp_bindings.runtime.auth.dpop import DPoPProofError

        assert self.dpop is not None
        jkt = _bound_jkt(info.claims)
        if jkt is None:
            raise InvalidTokenError("the token presented with the DPoP scheme is not DPoP-bound (no cnf.jkt)")
        url = origin_of(self.resource) + scope.get("root_path", "") + scope.get("path", "")
        try:
            self.dpop.verify(headers.get("dpop"), method=method, url=url, access_token=token, expected_jkt=jkt)
        except DPoPProofError as exc:
            nonce = self.dpop.nonces.current() if exc.use_nonce and self.dpop.nonces is not None else None
            raise _DPoPDenied(str(exc), "use_dpop_nonce" if nonce else "invalid_dpop_proof", nonce) from exc

    async def _required(self, request: RequestInfo) -> tuple[str, ...]:
        policy = self.required_scopes
        if callable(policy):
            result = policy(request)
            if inspect.isawaitable(result):
                result = await result
            return tuple(result)
        return tuple(policy)

    def _effective(self, scopes: Sequence[str]) -> set[str]:
        granted = set(scopes)
        pending = list(scopes)
        while pending:
            for implied in self.scope_hierarchy.get(pending.pop(), ()):
                if implied not in granted:
                    granted.add(implied)
                    pending.append(implied)
        return granted

    def challenge(
        self,
        error: str | None = None,
        description: str | None = None,
        scope: str | None = None,
        *,
        scheme: str = "Bearer",
    ) -> str:
        params = {"error": error, "error_description": description, "scope": scope}
        params["resource_metadata"] = self.metadata_url
        if scheme == "DPoP" and self.dpop is not None:
            params["algs"] = " ".join(self.dpop.algorithms)
        return format_challenge(scheme, params)

    async def _deny(
        self,
        kind: str,
        send: Send,
        status: int,
        error: str | None,
        description: str | None,
        scope: str | None,
        *,
        nonce: str | None = None,
    ) -> None:
        if kind != "http":
            await _close(send)
            return
        dpop_error = error in ("invalid_dpop_proof", "use_dpop_nonce")
        schemes = [] if self.dpop_required or dpop_error else ["Bearer"]
        if self.dpop is not None:
            schemes.append("DPoP")
        headers = [
            (b"www-authenticate", self.challenge(error, description, scope, scheme=s).encode("latin-1", "replace"))
            for s in schemes
        ]
        if nonce is not None:
            headers.append((b"dpop-nonce", nonce.encode("latin-1", "replace")))
        body: dict[str, Any] = {
            "error": error or "invalid_token",
            "error_description": description or "authorization required",
        }
        await _plain(send, status, body, headers)


def require_bearer(
    app: ASGIApp,
    verifier: TokenVerifier,
    *,
    resource: str,
    authorization_servers: Sequence[str],
    scopes_supported: Sequence[str] | None = None,
    required_scopes: Sequence[str] | ScopePolicy = (),
    **options: Any,
) -> BearerAuthMiddleware:
    """Wrap an ASGI app (e.g. `create_app(server)`) so it needs OAuth bearer tokens for `resource`."""
    return BearerAuthMiddleware(
        app,
        verifier,
        resource=resource,
        authorization_servers=authorization_servers,
        scopes_supported=scopes_supported,
        required_scopes=required_scopes,
        **options,
    )


class _DPoPDenied(InvalidTokenError):
    def __init__(self, message: str, error: str, nonce: str | None) -> None:
        super().__init__(message)
        self.error = error
        self.nonce = nonce


def _dpop_denial(exc: InvalidTokenError) -> tuple[str, str | None] | None:
    return (exc.error, exc.nonce) if isinstance(exc, _DPoPDenied) else None


def _bound_jkt(claims: Mapping[str, Any]) -> str | None:
    cnf = claims.get("cnf")
    if isinstance(cnf, dict):
        jkt = cnf.get("jkt")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if isinstance(jkt, str):
            return jkt
    return None


def _headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in scope.get("headers", []):
        name = key.decode("latin-1").lower()
        out[name] = value.decode("latin-1") if name not in out else out[name] + ", " + value.decode("latin-1")
    return out


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return bytes(body)
        body += message.get("body", b"")
        if len(body) > limit:
            return None
        if not message.get("more_body", False):
            return bytes(body)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _serve_metadata(send: Send, method: str, body: bytes) -> None:
    """The Protected Resource Metadata document `body`: GET or HEAD, and the CORS preflight."""
    cors = [
        (b"access-control-allow-origin", b"*"),
        (b"access-control-allow-methods", b"GET, OPTIONS"),
        (b"access-control-allow-headers", b"mcp-protocol-version"),
    ]
    if method == "OPTIONS":
        await send({"type": "http.response.start", "status": 204, "headers": cors})
        await send({"type": "http.response.body", "body": b""})
        return
    if method not in ("GET", "HEAD"):
        await send({"type": "http.response.start", "status": 405, "headers": [(b"allow", b"GET, HEAD, OPTIONS")]})
        await send({"type": "http.response.body", "body": b""})
        return
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"max-age=300"),
                *cors,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body if method == "GET" else b""})


async def _plain(send: Send, status: int, body: Mapping[str, Any], headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"cache-control", b"no-store"),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


async def _close(send: Send) -> None:
    await send({"type": "websocket.close", "code": 1008})
