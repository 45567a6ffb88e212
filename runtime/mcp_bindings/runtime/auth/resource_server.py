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
  finds the verified `AccessToken` (claims, scopes with those `scope_hierarchy` implies, client — not
  the token itself) in `scope["auth"]`; its `principal` is what the runtime's `ctx.principal` reads.

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
and `IntrospectionVerifier` (RFC 7662), in `auth.verifiers` and importable from here too. Anything with
`async verify(token, *, resource)` works.
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

import anyio

from mcp_bindings.runtime.auth.challenge import format_challenge
from mcp_bindings.runtime.auth.discovery import WELL_KNOWN_PRM, origin_of
from mcp_bindings.runtime.auth.verifiers import AccessToken, InvalidTokenError, TokenVerifier, VerifierUnavailableError

# The verifiers' import path before they had a module.
from mcp_bindings.runtime.auth.verifiers import IntrospectionVerifier as IntrospectionVerifier
from mcp_bindings.runtime.auth.verifiers import JWTVerifier as JWTVerifier
from mcp_bindings.runtime.rpc import logs

if TYPE_CHECKING:
    from mcp_bindings.runtime.auth.dpop import DPoPProofVerifier

log = logs.logger("auth")

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

__all__ = [
    "AccessToken",
    "BearerAuthMiddleware",
    "IntrospectionVerifier",
    "InvalidTokenError",
    "JWTVerifier",
    "RequestInfo",
    "TokenVerifier",
    "VerifierUnavailableError",
    "protected_resource_metadata",
    "protected_resource_metadata_url",
    "require_bearer",
]


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
    """Wrap an ASGI app (e.g. `create_app(server)`) so it needs OAuth bearer tokens for `resource`
    (see the module docstring); also spelled `require_bearer(...)`."""

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
        open_paths: Collection[str] = (),
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
        # GETs passed on without a token: the app's liveness and readiness probes (a load balancer's,
        # Kubernetes') carry no credentials, and answer nothing a token protects
        self.open_paths = frozenset(open_paths)

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
        probe = method == "GET" and (path.rstrip("/") or "/") in self.open_paths
        if kind == "http" and (method == "OPTIONS" or probe):
            await self.app(scope, receive, send)  # CORS preflight, a probe: never carry credentials
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
        if self.scope_hierarchy:  # the principal's scopes are what it may do: the implied ones too
            info = replace(info, scopes=(*info.scopes, *sorted(granted.difference(info.scopes))))
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
            error, nonce = (exc.error, exc.nonce) if isinstance(exc, _DPoPDenied) else ("invalid_token", None)
            await self._deny(kind, send, 401, error, str(exc) or "invalid token", scope_param, nonce=nonce)
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


require_bearer = BearerAuthMiddleware  # `require_bearer(app, verifier, resource=..., ...)`: the module's example


class _DPoPDenied(InvalidTokenError):
    def __init__(self, message: str, error: str, nonce: str | None) -> None:
        super().__init__(message)
        self.error = error
        self.nonce = nonce


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
        await _respond(send, 204, b"", cors)
    elif method not in ("GET", "HEAD"):
        await _respond(send, 405, b"", [(b"allow", b"GET, HEAD, OPTIONS")])
    else:
        await _respond(send, 200, body, [(b"cache-control", b"max-age=300"), *cors], head=method == "HEAD")


async def _plain(send: Send, status: int, body: Mapping[str, Any], headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    await _respond(send, status, json.dumps(body).encode(), [(b"cache-control", b"no-store"), *headers])


async def _respond(
    send: Send, status: int, body: bytes, headers: Sequence[tuple[bytes, bytes]], *, head: bool = False
) -> None:
    """One response; a non-empty `body` is JSON (its length sent, not itself where `head`)."""
    if body:
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers]
    await send({"type": "http.response.start", "status": status, "headers": list(headers)})
    await send({"type": "http.response.body", "body": b"" if head else body})


async def _close(send: Send) -> None:
    await send({"type": "websocket.close", "code": 1008})
