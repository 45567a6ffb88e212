"""Access-token verifiers for MCP servers (the resource-server side of OAuth 2.1).

A verifier turns a presented token into an `AccessToken` (claims, scopes, client, subject; never the
token itself) or refuses it: `InvalidTokenError` for a token that is not good (the client sees 401
`invalid_token`), `VerifierUnavailableError` when the verifier cannot decide now (the authorization
server's keys or introspection endpoint cannot be reached: 503). Anything with
`async verify(token, *, resource)` is a `TokenVerifier`; two come with the runtime:

* `JWTVerifier`: signed JWT access tokens (RFC 9068 style), keys from a JWKS (needs PyJWT with
  `cryptography`);
* `IntrospectionVerifier`: opaque tokens asked about at the authorization server (RFC 7662).

`require_bearer` (`auth.resource_server`) puts one in front of an ASGI app.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import httpx

from mcp_bindings.runtime.auth.discovery import fetch_authorization_server_metadata
from mcp_bindings.runtime.protocol.principal import Principal, PrincipalKey

# What an issuer template names its tenant by (Microsoft Entra ID's multi-tenant issuer; `JWTVerifier`).
TENANT_ID = "{tenantid}"


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

    def to_principal(self) -> Principal:
        """Who the token speaks for, typed (`ctx.principal`): issuer, subject, client id, scopes,
        expiry and the verified claims."""
        scopes = frozenset(self.scopes)
        return Principal(self.issuer, self.subject, self.client_id, scopes, self.expires_at, self.claims)

    @property
    def principal(self) -> PrincipalKey:
        """Who the token speaks for, as its stable key (issuer, subject and client id as one JSON
        string) carrying the typed `Principal` (`protocol.principal`): what transports hand the
        runtime, and what it binds per-principal state to (sessions, tasks, sealed `requestState`)."""
        return PrincipalKey(self.to_principal())


class InvalidTokenError(Exception):
    """The token is malformed, expired, revoked, for another resource, or otherwise not acceptable."""


class VerifierUnavailableError(Exception):
    """The verifier could not decide (JWKS or introspection endpoint unreachable): answered 503."""


@runtime_checkable
class TokenVerifier(Protocol):
    async def verify(self, token: str, *, resource: str) -> AccessToken: ...


def _strings(value: Any, split: bool) -> tuple[str, ...]:
    """A claim holding one string (split on spaces where `split`: `scope`) or a list of them."""
    if isinstance(value, str):
        return tuple(value.split()) if split else (value,)
    if isinstance(value, list):
        return tuple(str(v) for v in value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return ()


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _access_token(claims: dict[str, Any], client_id: Any) -> AccessToken:
    exp = claims.get("exp")
    return AccessToken(
        scopes=_strings(claims.get("scope", claims.get("scp")), split=True),
        client_id=_text(client_id),
        subject=_text(claims.get("sub")),
        issuer=_text(claims.get("iss")),
        audience=_strings(claims.get("aud"), split=False),
        expires_at=float(exp) if isinstance(exp, (int, float)) else None,
        claims=claims,
    )


# -- verifiers -----------------------------------------------------------------------------------


class JWTVerifier:
    """JWT access tokens (RFC 9068 style) signed by `issuer` with a key of its JWKS.

    Checks the signature (only the asymmetric `algorithms` listed; never `none` or HMAC), `iss`, `exp`
    (with `leeway`), `nbf`, and that `aud` contains the resource (or `audience`). Keys come from `jwks`
    (a JWKS dict), else `jwks_uri`, else the `jwks_uri` of the issuer's metadata; a token signed with an
    unknown `kid` triggers one re-fetch (at most every `min_refetch_seconds`).

    `issuer` may be a template naming `{tenantid}` (`TENANT_ID`): Microsoft Entra ID's multi-tenant
    authorities (`common`, `organizations`, `consumers`) name `https://login.microsoftonline.com/
    {tenantid}/v2.0`, and each token is issued by its user's tenant. A token's `iss` must then be the
    template with the token's own `tid` claim in it (a `tid` naming another tenant than the issuer
    that signed it is refused); the keys come from `jwks` or `jwks_uri` (there is no metadata at a
    template).
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
        if TENANT_ID in issuer and jwks is None and jwks_uri is None:
            raise ValueError(f"the issuer template {issuer!r} needs jwks= or jwks_uri= (no metadata at a template)")
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
        async with _client(self._http, self.timeout) as http:
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
        data = _json_object(response, f"the JWKS at {self.jwks_uri}")
        if not isinstance(data.get("keys"), list):
            raise VerifierUnavailableError(f"the JWKS at {self.jwks_uri} has no `keys`")
        self._jwks = data
        self._fetched_at = time.monotonic()

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
                issuer=None if TENANT_ID in self.issuer else self.issuer,  # a template: `_tenant_issuer`
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
        if TENANT_ID in self.issuer:
            _tenant_issuer(self.issuer, claims)
        return _access_token(claims, claims.get("client_id", claims.get("azp")))


def _tenant_issuer(template: str, claims: Mapping[str, Any]) -> None:
    """Refuse a token whose `iss` is not the issuer template with its own `tid` (see `JWTVerifier`)."""
    tid = claims.get("tid")
    if not isinstance(tid, str) or not tid or "/" in tid:
        raise InvalidTokenError("the token names no tenant (tid), which its issuer template needs")
    if claims.get("iss") != template.replace(TENANT_ID, tid):
        raise InvalidTokenError(f"the token's issuer {claims.get('iss')!r} is not that of its tenant {tid!r}")


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
        info = _access_token(claims, claims.get("client_id"))
        if self.require_audience and resource not in info.audience:
            raise InvalidTokenError("the token was not issued for this resource")
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
        try:
            async with _client(self._http, self.timeout) as http:
                response = await http.post(self.endpoint, data=data, headers=headers)
        except httpx.HTTPError as exc:
            raise VerifierUnavailableError(f"introspection failed: {exc}") from exc
        return _json_object(response, f"the introspection endpoint {self.endpoint}")


def _client(http: httpx.AsyncClient | None, timeout: float) -> AbstractAsyncContextManager[httpx.AsyncClient]:
    """`http` where one was injected (used, not closed), else a client of this request's own."""
    return nullcontext(http) if http is not None else httpx.AsyncClient(timeout=timeout, follow_redirects=False)


def _json_object(response: httpx.Response, what: str) -> dict[str, Any]:
    """The JSON object of a 200 answer from `what` (the authorization server's JWKS or introspection
    endpoint); anything else means the verifier cannot decide now."""
    if response.status_code != 200:
        raise VerifierUnavailableError(f"{what} answered HTTP {response.status_code}")
    try:
        body = response.json()
    except ValueError as exc:
        raise VerifierUnavailableError(f"{what} answered something that is not JSON") from exc
    if not isinstance(body, dict):
        raise VerifierUnavailableError(f"{what} answered JSON that is not an object")
    answer: dict[str, Any] = body  # pyright: ignore[reportUnknownVariableType]
    return answer
