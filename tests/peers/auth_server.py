"""A small OAuth 2.1 authorization server for the auth tests (a Starlette app; 127.0.0.1 only).

It approves every authorization request at once (a 302 to the redirect URI with `code`, `state` and,
by default, `iss`), enforces what a strict server would (registered redirect URIs, PKCE S256, one-time
codes bound to client/redirect/resource, client authentication by the registered method, `resource`),
and issues ES256 JWT access tokens (`aud` = the `resource`) plus rotating refresh tokens. Knobs make it
misbehave in the ways the client must notice (wrong `iss`, wrong metadata `issuer`, tampered `state`,
refused registration, ...). Every request is recorded in `requests` for the tests to inspect.

Machine-client extensions: the client credentials grant (clients authenticated by `client_secret_basic`
or an RFC 7523 `private_key_jwt` assertion checked against the client's registered `public_key`), the
JWT bearer grant (assertions from `trusted_issuers`, audience = this issuer), RFC 8693 token exchange
issuing ID-JAGs (so one instance can play the enterprise IdP), DPoP-bound tokens (`dpop`, with
`dpop_nonce` demanding a server nonce first) and RFC 7009 revocation (`revocation`; revoked tokens
introspect as inactive).
"""

from __future__ import annotations

import base64
import hashlib
import math
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote_plus, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from mcp_bindings.runtime.auth.dpop import DPoPProofError, DPoPProofVerifier, NonceIssuer


@dataclass
class AuthServerOptions:
    path: str = ""  # the issuer's path, e.g. "/tenant1"
    metadata_at: str = "oauth"  # "oauth" (RFC 8414 insertion), "openid" (insertion), "openid-append", "none"
    metadata_issuer: str | None = None  # serve this `issuer` instead of the real one
    iss_supported: bool | None = True  # authorization_response_iss_parameter_supported (None: omitted)
    iss_in_redirect: str = "correct"  # "correct", "wrong", "omit", "normalized"
    tamper_state: bool = False
    registration: str = "open"  # "open", "refuse", "disabled"
    token_auth_methods: tuple[str, ...] = ("client_secret_basic", "client_secret_post", "none")
    scopes_supported: tuple[str, ...] | None = None
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")
    code_challenge_methods: tuple[str, ...] | None = ("S256",)
    cimd_supported: bool = False
    cimd_documents: dict[str, dict[str, Any]] = field(default_factory=dict)  # client_id URL -> document
    access_token_lifetime: int = 3600
    report_expires_in: bool = True
    refresh_tokens: bool = True
    preregistered: dict[str, dict[str, Any]] = field(default_factory=dict)  # client_id -> client record
    deny_scopes: tuple[str, ...] = ()  # authorization requests asking for one of these get access_denied
    grant_scopes: tuple[str, ...] | None = None  # grant only these (default: what was asked for)
    trusted_issuers: dict[str, Any] = field(default_factory=dict)  # JWT bearer assertions: iss -> public key
    jag_client_id: str | None = None  # the client_id an issued ID-JAG names (token exchange)
    dpop: bool = False  # advertise DPoP (ES256) and bind tokens to a proof's key
    dpop_nonce: bool = False  # require an AS nonce in DPoP proofs (RFC 9449 §8)
    revocation: bool = False  # advertise /revoke (RFC 7009)
    authorization_endpoint: bool = True  # False: a machine-only server (no authorization_endpoint in metadata)


@dataclass
class Recorded:
    method: str
    path: str
    params: dict[str, str]
    headers: dict[str, str]


class AuthServer:
    def __init__(self, base_url: str, options: AuthServerOptions | None = None) -> None:
        self.options = options or AuthServerOptions()
        self.base_url = base_url.rstrip("/")
        self.issuer = self.base_url + self.options.path
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.kid = secrets.token_hex(8)
        self.clients: dict[str, dict[str, Any]] = {k: dict(v) for k, v in self.options.preregistered.items()}
        self.codes: dict[str, dict[str, Any]] = {}
        self.refresh: dict[str, dict[str, Any]] = {}
        self.issued: list[dict[str, Any]] = []  # claims of every access token
        self.revoked: set[str] = set()  # jti of revoked access tokens
        self.assertion_jtis: set[str] = set()  # client assertions seen (replay check)
        self.dpop_verifier = DPoPProofVerifier(nonces=NonceIssuer() if self.options.dpop_nonce else None)
        self.requests: list[Recorded] = []
        p = self.options.path
        routes = [
            Route(p + "/authorize", self.authorize, methods=["GET"]),
            Route(p + "/token", self.token, methods=["POST"]),
            Route(p + "/register", self.register, methods=["POST"]),
            Route(p + "/jwks", self.jwks, methods=["GET"]),
            Route(p + "/introspect", self.introspect, methods=["POST"]),
            Route(p + "/revoke", self.revoke, methods=["POST"]),
        ]
        metadata_path = {
            "oauth": "/.well-known/oauth-authorization-server" + p,
            "openid": "/.well-known/openid-configuration" + p,
            "openid-append": p + "/.well-known/openid-configuration",
        }.get(self.options.metadata_at)
        if metadata_path is not None:
            routes.append(Route(metadata_path, self.metadata, methods=["GET"]))
        self.app = Starlette(routes=routes)
        self.app.add_middleware(_Recorder, server=self)  # pyright: ignore[reportArgumentType]

    # -- helpers for tests -----------------------------------------------------------------------

    def of(self, path_suffix: str) -> list[Recorded]:
        return [r for r in self.requests if r.path == self.options.path + path_suffix]

    @property
    def jwks_uri(self) -> str:
        return self.issuer + "/jwks"

    def public_jwk(self) -> dict[str, Any]:
        jwk: dict[str, Any] = ECAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
        return {**jwk, "kid": self.kid, "alg": "ES256", "use": "sig"}

    def mint(
        self,
        *,
        resource: str,
        scope: str | None,
        client_id: str,
        lifetime: int | None = None,
        audience: str | None = None,
        issuer: str | None = None,
        jkt: str | None = None,
        subject: str = "user-1",
    ) -> str:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": issuer or self.issuer,
            "sub": subject,
            "aud": audience or resource,
            "client_id": client_id,
            "iat": now,
            # rounded up, so the token lives at least the lifetime the token response reports
            "exp": math.ceil(time.time()) + (self.options.access_token_lifetime if lifetime is None else lifetime),
            "jti": secrets.token_hex(8),
        }
        if scope:
            claims["scope"] = scope
        if jkt is not None:
            claims["cnf"] = {"jkt": jkt}
        self.issued.append(claims)
        return jwt.encode(claims, self.key, algorithm="ES256", headers={"kid": self.kid, "typ": "at+jwt"})

    # -- endpoints -------------------------------------------------------------------------------

    async def metadata(self, request: Request) -> Response:
        o = self.options
        doc: dict[str, Any] = {
            "issuer": o.metadata_issuer or self.issuer,
            "token_endpoint": self.issuer + "/token",
            "jwks_uri": self.jwks_uri,
            "introspection_endpoint": self.issuer + "/introspect",
            "response_types_supported": ["code"],
            "grant_types_supported": list(o.grant_types),
            "token_endpoint_auth_methods_supported": list(o.token_auth_methods),
        }
        if o.authorization_endpoint:
            doc["authorization_endpoint"] = self.issuer + "/authorize"
        if o.registration != "disabled":
            doc["registration_endpoint"] = self.issuer + "/register"
        if o.code_challenge_methods is not None:
            doc["code_challenge_methods_supported"] = list(o.code_challenge_methods)
        if o.scopes_supported is not None:
            doc["scopes_supported"] = list(o.scopes_supported)
        if o.iss_supported is not None:
            doc["authorization_response_iss_parameter_supported"] = o.iss_supported
        if o.cimd_supported:
            doc["client_id_metadata_document_supported"] = True
        if o.dpop:
            doc["dpop_signing_alg_values_supported"] = ["ES256"]
        if o.revocation:
            doc["revocation_endpoint"] = self.issuer + "/revoke"
        return JSONResponse(doc)

    def sign(self, claims: dict[str, Any], typ: str = "JWT") -> str:
        """A JWT signed with this server's key (ID tokens, ID-JAGs, workload tokens in tests)."""
        return jwt.encode(claims, self.key, algorithm="ES256", headers={"kid": self.kid, "typ": typ})

    async def jwks(self, request: Request) -> Response:
        return JSONResponse({"keys": [self.public_jwk()]})

    async def register(self, request: Request) -> Response:
        if self.options.registration == "refuse":
            return JSONResponse(
                {"error": "invalid_client_metadata", "error_description": "registration is closed"}, 400
            )
        body = await request.json()
        redirect_uris = body.get("redirect_uris")
        if not isinstance(redirect_uris, list) or not redirect_uris:
            return JSONResponse({"error": "invalid_redirect_uri"}, 400)
        method = body.get("token_endpoint_auth_method", "client_secret_basic")
        if method not in self.options.token_auth_methods:
            method = self.options.token_auth_methods[0]
        client_id = "dcr-" + secrets.token_hex(6)
        record: dict[str, Any] = {
            "client_id": client_id,
            "redirect_uris": redirect_uris,
            "token_endpoint_auth_method": method,
            "grant_types": body.get("grant_types", ["authorization_code"]),
            "application_type": body.get("application_type"),
            "client_name": body.get("client_name"),
        }
        if method != "none":
            record["client_secret"] = secrets.token_urlsafe(16)
        self.clients[client_id] = record
        return JSONResponse(record, 201)

    def _client(self, client_id: str | None) -> dict[str, Any] | None:
        if client_id is None:
            return None
        if client_id in self.clients:
            return self.clients[client_id]
        if self.options.cimd_supported and client_id in self.options.cimd_documents:
            doc = self.options.cimd_documents[client_id]
            return {
                "client_id": client_id,
                "redirect_uris": doc.get("redirect_uris", []),
                "token_endpoint_auth_method": "none",
                "grant_types": doc.get("grant_types", ["authorization_code"]),
            }
        return None

    async def authorize(self, request: Request) -> Response:
        q = request.query_params
        client = self._client(q.get("client_id"))
        redirect_uri = q.get("redirect_uri")
        if client is None:
            return PlainTextResponse("unknown client_id", 400)
        if redirect_uri not in client["redirect_uris"]:
            return PlainTextResponse("redirect_uri is not registered", 400)

        def back(**params: str | None) -> Response:
            o = self.options
            if params.get("state") is not None and o.tamper_state:
                params["state"] = "tampered-" + str(params["state"])
            iss = {"correct": self.issuer, "wrong": "https://evil.example.com", "normalized": self.issuer + "/"}.get(
                o.iss_in_redirect
            )
            if iss is not None:
                params["iss"] = iss
            query = urlencode({k: v for k, v in params.items() if v is not None})
            return RedirectResponse(f"{redirect_uri}{'&' if '?' in str(redirect_uri) else '?'}{query}", 302)

        state = q.get("state")
        if q.get("response_type") != "code":
            return back(error="unsupported_response_type", state=state)
        if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
            return back(error="invalid_request", error_description="PKCE S256 required", state=state)
        resource = q.get("resource")
        if not resource:
            return back(error="invalid_target", error_description="resource required", state=state)
        scope = q.get("scope")
        if scope and any(s in self.options.deny_scopes for s in scope.split()):
            return back(error="access_denied", error_description="the user said no", state=state)
        code = secrets.token_urlsafe(16)
        self.codes[code] = {
            "client_id": client["client_id"],
            "redirect_uri": redirect_uri,
            "challenge": q["code_challenge"],
            "resource": resource,
            "scope": scope,
            "expires": time.time() + 60,
        }
        return back(code=code, state=state)

    def _authenticate(self, request: Request, form: dict[str, str]) -> dict[str, Any] | None:
        header = request.headers.get("authorization", "")
        if header.lower().startswith("basic "):
            try:
                raw = base64.b64decode(header[6:]).decode()
            except ValueError:
                return None
            client_id, _, secret = raw.partition(":")
            client_id, secret = unquote_plus(client_id), unquote_plus(secret)
            used = "client_secret_basic"
        elif form.get("client_assertion_type") == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer":
            return self._assertion_client(form)
        elif "client_secret" in form:
            client_id, secret, used = form.get("client_id", ""), form["client_secret"], "client_secret_post"
        else:
            client_id, secret, used = form.get("client_id", ""), None, "none"
        client = self._client(client_id)
        if client is None or used not in self.options.token_auth_methods:
            return None
        if client.get("token_endpoint_auth_method", "client_secret_basic") != used:
            return None
        if used != "none" and not secrets.compare_digest(str(client.get("client_secret", "")), str(secret)):
            return None
        return client

    def _assertion_client(self, form: dict[str, str]) -> dict[str, Any] | None:
        """RFC 7523 §3 client authentication: signed by the client's key, iss = sub = client_id,
        aud = this issuer (or its token endpoint), unexpired, jti not seen before."""
        client = self._client(form.get("client_id"))
        if client is None or client.get("token_endpoint_auth_method") != "private_key_jwt":
            return None
        try:
            claims = jwt.decode(
                form.get("client_assertion", ""),
                client["public_key"],
                algorithms=["ES256"],
                audience=[self.issuer, self.issuer + "/token"],
                options={"require": ["exp", "iss", "sub", "aud", "jti"]},
            )
        except jwt.PyJWTError:
            return None
        if claims["iss"] != client["client_id"] or claims["sub"] != client["client_id"]:
            return None
        if claims["jti"] in self.assertion_jtis:
            return None
        self.assertion_jtis.add(claims["jti"])
        return client

    def _bearer_assertion(self, assertion: str) -> tuple[dict[str, Any] | None, str]:
        """RFC 7523 §3 JWT bearer grant: (claims, "") or (None, why)."""
        try:
            issuer = jwt.decode(assertion, options={"verify_signature": False}).get("iss")
        except jwt.PyJWTError:
            return None, "malformed assertion"
        key = self.options.trusted_issuers.get(str(issuer))
        if key is None:
            return None, f"untrusted assertion issuer {issuer!r}"
        try:
            claims = jwt.decode(
                assertion,
                key,
                algorithms=["ES256"],
                audience=[self.issuer, self.issuer + "/token"],  # WIF names the token endpoint
                options={"require": ["exp", "sub"]},
            )
        except jwt.ExpiredSignatureError:
            return None, "the assertion has expired"
        except jwt.InvalidAudienceError:
            return None, "the assertion is not for this authorization server"
        except jwt.PyJWTError as exc:
            return None, f"invalid assertion: {exc}"
        return claims, ""

    def _dpop_check(self, request: Request) -> tuple[str | None, Response | None]:
        """(jkt of a valid proof or None, or an error response)."""
        proof = request.headers.get("dpop")
        if not self.options.dpop or proof is None:
            return None, None
        try:
            checked = self.dpop_verifier.verify(proof, method="POST", url=self.issuer + "/token")
        except DPoPProofError as exc:
            nonces = self.dpop_verifier.nonces
            if exc.use_nonce and nonces is not None:
                body = {"error": "use_dpop_nonce", "error_description": str(exc)}
                return None, JSONResponse(body, 400, headers={"DPoP-Nonce": nonces.current()})
            return None, JSONResponse({"error": "invalid_dpop_proof", "error_description": str(exc)}, 400)
        return checked.jkt, None

    async def token(self, request: Request) -> Response:
        form = await _form(request)
        jkt, refused = self._dpop_check(request)
        if refused is not None:
            return refused
        grant = form.get("grant_type")
        if grant == "urn:ietf:params:oauth:grant-type:token-exchange":
            return self._token_exchange(form)
        client = self._authenticate(request, form)
        if client is None and grant == "urn:ietf:params:oauth:grant-type:jwt-bearer" and "client_id" not in form:
            client = {"client_id": "anonymous"}  # RFC 7523 §3.1: client authentication is optional
        if client is None:
            return JSONResponse({"error": "invalid_client"}, 401)
        subject = "user-1"
        if grant == "authorization_code":
            record = self.codes.pop(form.get("code", ""), None)
            if record is None or record["expires"] < time.time() or record["client_id"] != client["client_id"]:
                return JSONResponse({"error": "invalid_grant"}, 400)
            if form.get("redirect_uri") != record["redirect_uri"]:
                return JSONResponse({"error": "invalid_grant", "error_description": "redirect_uri"}, 400)
            verifier = form.get("code_verifier", "")
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if digest != record["challenge"]:
                return JSONResponse({"error": "invalid_grant", "error_description": "PKCE verification failed"}, 400)
            if form.get("resource") != record["resource"]:
                return JSONResponse({"error": "invalid_target"}, 400)
            resource, scope = record["resource"], record["scope"]
        elif grant == "refresh_token":
            record = self.refresh.pop(form.get("refresh_token", ""), None)
            if record is None or record["client_id"] != client["client_id"]:
                return JSONResponse({"error": "invalid_grant"}, 400)
            if form.get("resource") not in (None, record["resource"]):
                return JSONResponse({"error": "invalid_target"}, 400)
            resource, scope = record["resource"], record["scope"]
        elif grant == "client_credentials" and grant in self.options.grant_types:
            resource, scope, subject = form.get("resource"), form.get("scope"), client["client_id"]
            if not resource:
                return JSONResponse({"error": "invalid_target"}, 400)
        elif grant == "urn:ietf:params:oauth:grant-type:jwt-bearer" and grant in self.options.grant_types:
            claims, why = self._bearer_assertion(form.get("assertion", ""))
            if claims is None:
                return JSONResponse({"error": "invalid_grant", "error_description": why}, 400)
            resource, scope, subject = form.get("resource") or claims.get("resource"), form.get("scope"), claims["sub"]
            if not resource:
                return JSONResponse({"error": "invalid_target"}, 400)
        else:
            return JSONResponse({"error": "unsupported_grant_type"}, 400)
        if self.options.grant_scopes is not None:
            scope = " ".join(self.options.grant_scopes) or None
        body: dict[str, Any] = {
            "access_token": self.mint(
                resource=resource, scope=scope, client_id=client["client_id"], jkt=jkt, subject=subject
            ),
            "token_type": "DPoP" if jkt else "Bearer",
        }
        if self.options.report_expires_in:
            body["expires_in"] = self.options.access_token_lifetime
        if scope:
            body["scope"] = scope
        if (
            self.options.refresh_tokens
            and "refresh_token" in self.options.grant_types
            and grant != "client_credentials"
        ):
            refresh = secrets.token_urlsafe(16)
            self.refresh[refresh] = {"client_id": client["client_id"], "resource": resource, "scope": scope}
            body["refresh_token"] = refresh
        return JSONResponse(body, headers={"Cache-Control": "no-store"})

    async def introspect(self, request: Request) -> Response:
        form = await _form(request)
        client = self._authenticate(request, form)
        if client is None:
            return JSONResponse({"error": "invalid_client"}, 401)
        try:
            claims = jwt.decode(
                form.get("token", ""), self.key.public_key(), algorithms=["ES256"], options={"verify_aud": False}
            )
        except jwt.PyJWTError:
            return JSONResponse({"active": False})
        if claims.get("jti") in self.revoked:
            return JSONResponse({"active": False})
        return JSONResponse({"active": True, **claims})

    def _token_exchange(self, form: dict[str, str]) -> Response:
        """RFC 8693 as the enterprise IdP: an ID token of ours in, an ID-JAG for `audience` out."""
        if form.get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag":
            return JSONResponse({"error": "invalid_request", "error_description": "requested_token_type"}, 400)
        if form.get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token":
            return JSONResponse({"error": "invalid_request", "error_description": "subject_token_type"}, 400)
        if not form.get("audience") or not form.get("resource"):
            return JSONResponse({"error": "invalid_request", "error_description": "audience and resource"}, 400)
        try:
            id_token = jwt.decode(
                form.get("subject_token", ""),
                self.key.public_key(),
                algorithms=["ES256"],
                audience=form.get("client_id"),
                issuer=self.issuer,
            )
        except jwt.PyJWTError as exc:
            return JSONResponse({"error": "invalid_grant", "error_description": str(exc)}, 400)
        now = int(time.time())
        jag = {
            "iss": self.issuer,
            "sub": id_token["sub"],
            "aud": form["audience"],
            "resource": form["resource"],
            "client_id": self.options.jag_client_id,
            "jti": secrets.token_hex(8),
            "iat": now,
            "exp": now + 300,
        }
        if form.get("scope"):
            jag["scope"] = form["scope"]
        body = {
            "access_token": self.sign(jag, typ="oauth-id-jag+jwt"),
            "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
            "token_type": "N_A",
            "expires_in": 300,
        }
        return JSONResponse(body, headers={"Cache-Control": "no-store"})

    async def revoke(self, request: Request) -> Response:
        """RFC 7009: 200 whether or not the token was known."""
        form = await _form(request)
        client = self._authenticate(request, form)
        if client is None:
            return JSONResponse({"error": "invalid_client"}, 401)
        token = form.get("token", "")
        self.refresh.pop(token, None)
        try:
            claims = jwt.decode(token, self.key.public_key(), algorithms=["ES256"], options={"verify_aud": False})
            self.revoked.add(str(claims.get("jti")))
        except jwt.PyJWTError:
            pass
        return Response(status_code=200)


class _Recorder:
    def __init__(self, app: Any, server: AuthServer) -> None:
        self.app = app
        self.server = server

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        params = dict(request.query_params)
        body = b""
        if scope["method"] == "POST":
            body = await request.body()
            content_type = request.headers.get("content-type", "")
            if "x-www-form-urlencoded" in content_type:
                from urllib.parse import parse_qsl

                params.update(dict(parse_qsl(body.decode())))
            elif "json" in content_type and body:
                import json

                try:
                    data = json.loads(body)
                    if isinstance(data, dict):
                        params.update({k: json.dumps(v) if not isinstance(v, str) else v for k, v in data.items()})
                except ValueError:
                    pass
        self.server.requests.append(Recorded(scope["method"], scope["path"], params, dict(request.headers)))
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay if scope["method"] == "POST" else receive, send)


async def _form(request: Request) -> dict[str, str]:
    """application/x-www-form-urlencoded (without python-multipart)."""
    from urllib.parse import parse_qsl

    return dict(parse_qsl((await request.body()).decode("utf-8", "replace"), keep_blank_values=True))


def path_of(url: str) -> str:
    return urlsplit(url).path
