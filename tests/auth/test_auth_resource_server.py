"""The resource-server side: `require_bearer` (PRM endpoint, 401/403 challenges, audience binding, no
token passthrough) with `JWTVerifier` and `IntrospectionVerifier`, driven in memory (ASGITransport)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from mcp_bindings.runtime.auth import (
    AccessToken,
    IntrospectionVerifier,
    InvalidTokenError,
    JWTVerifier,
    RequestInfo,
    bearer_challenge,
    require_bearer,
)
from mcp_bindings.runtime.auth.resource_server import VerifierUnavailableError, protected_resource_metadata_url
from tests.support.auth import ISSUER, JWKS, KEY, RESOURCE, token

pytestmark = pytest.mark.anyio
PRM_URL = "http://127.0.0.1:9100/.well-known/oauth-protected-resource/mcp"
LIMIT = 10


class Inner:
    """The protected app: records what reached it and answers 200."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        body = b""
        if scope["type"] == "http":
            while True:
                message = await receive()
                body += message.get("body", b"")
                if not message.get("more_body"):
                    break
        self.calls.append({"auth": scope.get("auth"), "headers": dict(scope["headers"]), "body": body})
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"ok"})


def policy(request: RequestInfo) -> list[str]:
    message = request.message
    if isinstance(message, dict) and message.get("method") == "tools/call":
        return ["mcp:read", "mcp:write"]
    return ["mcp:read"]


def make(inner: Inner | None = None, **options: Any) -> tuple[Any, Inner]:
    inner = inner or Inner()
    verifier = options.pop("verifier", None) or JWTVerifier(issuer=ISSUER, jwks=JWKS, leeway=0)
    app = require_bearer(
        inner,
        verifier,
        resource=RESOURCE,
        authorization_servers=[ISSUER],
        scopes_supported=options.pop("scopes_supported", ["mcp:read", "mcp:write"]),
        required_scopes=options.pop("required_scopes", ["mcp:read"]),
        **options,
    )
    return app, inner


async def request(
    app: Any,
    method: str = "POST",
    path: str = "/mcp",
    *,
    bearer: str | None = None,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    all_headers = dict(headers or {})
    if bearer is not None:
        all_headers["Authorization"] = f"Bearer {bearer}"
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://127.0.0.1:9100") as http:
            return await http.request(method, path, json=body, headers=all_headers)


# -- Protected Resource Metadata --------------------------------------------------------------


async def test_prm_is_served_at_the_path_inserted_url() -> None:
    app, inner = make(resource_name="Echo")
    response = await request(app, "GET", "/.well-known/oauth-protected-resource/mcp")
    assert response.status_code == 200 and response.headers["access-control-allow-origin"] == "*"
    assert response.json() == {
        "resource": RESOURCE,
        "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["mcp:read", "mcp:write"],
        "resource_name": "Echo",
    }
    assert (await request(app, "GET", "/.well-known/oauth-protected-resource")).status_code == 401  # not served
    assert (await request(app, "OPTIONS", "/.well-known/oauth-protected-resource/mcp")).status_code == 204
    assert (await request(app, "POST", "/.well-known/oauth-protected-resource/mcp")).status_code == 405
    assert not inner.calls
    assert protected_resource_metadata_url(RESOURCE) == PRM_URL


async def test_root_prm_on_request() -> None:
    app, _ = make(serve_root_metadata=True)
    assert (await request(app, "GET", "/.well-known/oauth-protected-resource")).json()["resource"] == RESOURCE


async def test_set_authorization_servers() -> None:
    app, _ = make()
    app.set_authorization_servers(["https://new-as.example.com"])
    assert (await request(app, "GET", "/.well-known/oauth-protected-resource/mcp")).json()["authorization_servers"] == [
        "https://new-as.example.com"
    ]


# -- challenges ------------------------------------------------------------------------------


async def test_missing_token_gets_401_with_resource_metadata_and_scope() -> None:
    app, inner = make()
    response = await request(app, body={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code == 401
    challenge = bearer_challenge(response.headers["www-authenticate"])
    assert challenge is not None
    assert challenge.resource_metadata == PRM_URL and challenge.scope == "mcp:read" and challenge.error is None
    assert response.headers["cache-control"] == "no-store"
    assert not inner.calls


async def test_other_scheme_gets_401_without_error_code() -> None:
    app, _ = make()
    response = await request(app, headers={"Authorization": "Basic dXNlcjpwYXNz"})
    challenge = bearer_challenge(response.headers["www-authenticate"])
    assert response.status_code == 401 and challenge is not None and challenge.error is None


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("not-a-jwt", "malformed"),
        (lambda: token(exp=int(time.time()) - 5), "expired"),
        (lambda: token(aud="http://127.0.0.1:9100/other"), "not issued for this resource"),
        (lambda: token(aud=None), "invalid token"),
        (lambda: token(iss="https://evil.example.com"), "another authorization server"),
        (lambda: token(key=ec.generate_private_key(ec.SECP256R1())), "invalid token"),
        (lambda: token(kid="unknown"), "unknown key"),
        (lambda: token(key="secret-secret-secret-secret-32by", algorithm="HS256"), "not accepted"),
        (
            lambda: jwt.encode(
                {"iss": ISSUER, "aud": RESOURCE, "exp": int(time.time()) + 60},
                None,  # pyright: ignore[reportArgumentType] - an unsigned token: alg "none" takes no key
                algorithm="none",
            ),
            "not accepted",
        ),
    ],
    ids=[
        "malformed",
        "expired",
        "other-audience",
        "no-audience",
        "other-issuer",
        "bad-signature",
        "unknown-kid",
        "hmac",
        "alg-none",
    ],
)
async def test_invalid_tokens_get_401_invalid_token(bad: str | Callable[[], str], reason: str) -> None:
    app, inner = make()
    response = await request(app, bearer=bad() if callable(bad) else bad)
    assert response.status_code == 401
    challenge = bearer_challenge(response.headers["www-authenticate"])
    assert challenge is not None and challenge.error == "invalid_token" and challenge.resource_metadata == PRM_URL
    assert reason in (challenge.error_description or "")
    assert not inner.calls


async def test_insufficient_scope_gets_403_with_every_needed_scope() -> None:
    app, inner = make(required_scopes=policy)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo"}}
    response = await request(app, bearer=token(scope="mcp:read"), body=call)
    assert response.status_code == 403
    challenge = bearer_challenge(response.headers["www-authenticate"])
    assert challenge is not None and challenge.error == "insufficient_scope"
    assert challenge.scope == "mcp:read mcp:write" and challenge.resource_metadata == PRM_URL
    assert response.json()["error"] == "insufficient_scope"
    ok = await request(app, bearer=token(scope="mcp:read mcp:write"), body=call)
    assert ok.status_code == 200
    assert json.loads(inner.calls[-1]["body"]) == call  # the body read for the policy reaches the app intact


async def test_scope_hierarchy() -> None:
    app, _ = make(required_scopes=["mcp:read"], scope_hierarchy={"mcp:admin": ["mcp:write"], "mcp:write": ["mcp:read"]})
    assert (await request(app, bearer=token(scope="mcp:admin"))).status_code == 200
    assert (await request(app, bearer=token(scope="other"))).status_code == 403


async def test_token_in_query_string_is_refused() -> None:
    app, inner = make()
    response = await request(app, path="/mcp?access_token=" + token())
    assert response.status_code == 400 and not inner.calls


async def test_no_passthrough_and_verified_info_for_the_app() -> None:
    app, inner = make()
    response = await request(app, bearer=token(scope="mcp:read extra"), body={"x": 1})
    assert response.status_code == 200 and response.text == "ok"
    seen = inner.calls[0]
    assert b"authorization" not in seen["headers"]
    info = seen["auth"]
    assert isinstance(info, AccessToken)
    assert info.scopes == ("mcp:read", "extra") and info.client_id == "c" and info.subject == "u"
    assert info.audience == (RESOURCE,) and info.issuer == ISSUER


async def test_preflight_and_lifespan_pass_through() -> None:
    app, inner = make()
    assert (await request(app, "OPTIONS")).status_code == 200
    assert inner.calls[0]["auth"] is None  # the preflight reached the app without a token
    events: list[Any] = []

    async def receive() -> Any:
        return {"type": "lifespan.startup"}

    async def send(message: Any) -> None:
        events.append(message)

    seen: list[str] = []

    async def lifespan_app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["type"])

    wrapped, _ = make(Inner())
    wrapped.app = lifespan_app
    await wrapped({"type": "lifespan"}, receive, send)
    assert seen == ["lifespan"]


# -- JWT verifier ---------------------------------------------------------------------------------


def test_jwt_verifier_refuses_symmetric_algorithms() -> None:
    with pytest.raises(ValueError):
        JWTVerifier(issuer=ISSUER, jwks=JWKS, algorithms=["HS256"])
    with pytest.raises(ValueError):
        JWTVerifier(issuer=ISSUER, jwks=JWKS, algorithms=["none"])


async def test_jwt_verifier_checks_an_issuer_template_against_the_tokens_tenant() -> None:
    """Entra's multi-tenant issuer `.../{tenantid}/v2.0`: each token's `iss` must be its own `tid`'s."""
    template = "https://login.example.com/{tenantid}/v2.0"
    verifier = JWTVerifier(issuer=template, jwks=JWKS, leeway=0)
    good = await verifier.verify(token(iss="https://login.example.com/t1/v2.0", tid="t1"), resource=RESOURCE)
    assert good.issuer == "https://login.example.com/t1/v2.0"
    refusals = {
        "the token's issuer 'https://login.example.com/t1/v2.0' is not that of its tenant 't2'": {
            "iss": "https://login.example.com/t1/v2.0",
            "tid": "t2",
        },
        "the token names no tenant (tid), which its issuer template needs": {"iss": template.replace("{tenantid}", "")},
        "the token's issuer 'https://login.example.com/{tenantid}/v2.0' is not that of its tenant 'x'": {
            "iss": template,
            "tid": "x",
        },
    }
    for reason, claims in refusals.items():
        with pytest.raises(InvalidTokenError) as refused:
            await verifier.verify(token(**claims), resource=RESOURCE)
        assert str(refused.value) == reason
    with pytest.raises(ValueError, match="needs jwks= or jwks_uri="):
        JWTVerifier(issuer=template)


async def test_jwt_verifier_fetches_and_rotates_keys() -> None:
    fetched: list[str] = []
    current = {"keys": []}

    def jwks_endpoint(request: httpx.Request) -> httpx.Response:
        fetched.append(str(request.url))
        return httpx.Response(200, json=current)

    verifier = JWTVerifier(
        issuer=ISSUER,
        jwks_uri=ISSUER + "/jwks",
        min_refetch_seconds=0,
        leeway=0,
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(jwks_endpoint)),
    )
    with pytest.raises(InvalidTokenError, match="unknown key"):
        await verifier.verify(token(), resource=RESOURCE)
    current = JWKS  # the key appears (rotation)
    info = await verifier.verify(token(), resource=RESOURCE)
    assert info.scopes == ("mcp:read",) and len(fetched) == 2  # not re-fetched right after a fetch


async def test_jwt_verifier_discovers_the_jwks_uri() -> None:
    def server(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/.well-known/oauth-authorization-server":
            return httpx.Response(
                200,
                json={
                    "issuer": ISSUER,
                    "authorization_endpoint": ISSUER + "/a",
                    "token_endpoint": ISSUER + "/t",
                    "jwks_uri": ISSUER + "/keys",
                },
            )
        if request.url.path == "/keys":
            return httpx.Response(200, json=JWKS)
        return httpx.Response(404)

    verifier = JWTVerifier(issuer=ISSUER, http_client=httpx.AsyncClient(transport=httpx.MockTransport(server)))
    assert (await verifier.verify(token(), resource=RESOURCE)).client_id == "c"
    assert verifier.jwks_uri == ISSUER + "/keys"


async def test_jwks_unreachable_is_503() -> None:
    def down(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500)

    verifier = JWTVerifier(
        issuer=ISSUER, jwks_uri=ISSUER + "/jwks", http_client=httpx.AsyncClient(transport=httpx.MockTransport(down))
    )
    with pytest.raises(VerifierUnavailableError):
        await verifier.verify(token(), resource=RESOURCE)
    app, inner = make(verifier=verifier)
    response = await request(app, bearer=token())
    assert response.status_code == 503 and not inner.calls


async def test_require_typ() -> None:
    verifier = JWTVerifier(issuer=ISSUER, jwks=JWKS, require_typ="at+jwt")
    with pytest.raises(InvalidTokenError, match="typ"):
        await verifier.verify(token(), resource=RESOURCE)
    typed = jwt.encode(
        {"iss": ISSUER, "aud": RESOURCE, "exp": int(time.time()) + 60},
        KEY,
        algorithm="ES256",
        headers={"kid": "k1", "typ": "application/at+jwt"},
    )
    await verifier.verify(typed, resource=RESOURCE)


# -- introspection verifier --------------------------------------------------------------------


def introspection(
    answer: dict[str, Any] | None, seen: list[httpx.Request] | None = None, status: int = 200
) -> IntrospectionVerifier:
    def endpoint(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return httpx.Response(status, json=answer)

    return IntrospectionVerifier(
        ISSUER + "/introspect",
        client_id="rs",
        client_secret="rs-secret",
        issuer=ISSUER,
        cache_seconds=30,
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(endpoint)),
    )


async def test_introspection_active_token() -> None:
    seen: list[httpx.Request] = []
    verifier = introspection(
        {
            "active": True,
            "aud": [RESOURCE],
            "iss": ISSUER,
            "scope": "mcp:read",
            "client_id": "c",
            "exp": int(time.time()) + 60,
        },
        seen,
    )
    app, inner = make(verifier=verifier)
    assert (await request(app, bearer="opaque")).status_code == 200
    assert (await request(app, bearer="opaque")).status_code == 200
    assert len(seen) == 1  # cached
    assert seen[0].headers["authorization"].startswith("Basic ")
    assert b"token=opaque" in seen[0].content and b"token_type_hint=access_token" in seen[0].content
    assert inner.calls[0]["auth"].scopes == ("mcp:read",)


@pytest.mark.parametrize(
    "answer",
    [
        {"active": False},
        {"active": True, "aud": "http://127.0.0.1:9100/other", "scope": "mcp:read"},
        {"active": True, "scope": "mcp:read"},  # no audience at all
        {"active": True, "aud": RESOURCE, "exp": 1},
        {"active": True, "aud": RESOURCE, "iss": "https://evil.example.com"},
    ],
    ids=["inactive", "other-audience", "no-audience", "expired", "other-issuer"],
)
async def test_introspection_rejections(answer: dict[str, Any]) -> None:
    app, inner = make(verifier=introspection(answer))
    response = await request(app, bearer="opaque")
    assert response.status_code == 401 and 'error="invalid_token"' in response.headers["www-authenticate"]
    assert not inner.calls


async def test_introspection_unavailable_is_503() -> None:
    app, _ = make(verifier=introspection({"error": "x"}, status=500))
    assert (await request(app, bearer="opaque")).status_code == 503


BAD_ANSWERS = [
    (httpx.Response(502, json={}), "answered HTTP 502"),
    (httpx.Response(200, text="<html>"), "not JSON"),
    (httpx.Response(200, json=["keys"]), "not an object"),
]


@pytest.mark.parametrize(("answer", "said"), BAD_ANSWERS, ids=["status", "not-json", "not-object"])
async def test_an_authorization_server_answering_badly_makes_the_verifiers_unavailable(
    answer: httpx.Response, said: str
) -> None:
    """The JWKS and the introspection endpoint are judged alike: anything but a 200 with a JSON
    object is "cannot decide now" (503 at the middleware), naming the URL and what was wrong."""
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda request: answer))
    jwks = JWTVerifier(issuer=ISSUER, jwks_uri=ISSUER + "/jwks", http_client=client)
    with pytest.raises(VerifierUnavailableError, match=f"JWKS at {ISSUER}/jwks .*{said}"):
        await jwks.verify(token(), resource=RESOURCE)
    opaque = IntrospectionVerifier(ISSUER + "/introspect", issuer=ISSUER, http_client=client)
    with pytest.raises(VerifierUnavailableError, match=f"{ISSUER}/introspect .*{said}"):
        await opaque.verify("opaque", resource=RESOURCE)
    app, inner = make(verifier=opaque)
    assert (await request(app, bearer="opaque")).status_code == 503 and not inner.calls


async def test_a_jwks_without_keys_makes_the_verifier_unavailable() -> None:
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda request: httpx.Response(200, json={"k": 1})))
    verifier = JWTVerifier(issuer=ISSUER, jwks_uri=ISSUER + "/jwks", http_client=client)
    with pytest.raises(VerifierUnavailableError, match="has no `keys`"):
        await verifier.verify(token(), resource=RESOURCE)


def test_middleware_arguments_are_checked() -> None:
    with pytest.raises(ValueError):
        require_bearer(Inner(), JWTVerifier(issuer=ISSUER, jwks=JWKS), resource=RESOURCE, authorization_servers=[])
    with pytest.raises(ValueError):
        require_bearer(Inner(), JWTVerifier(issuer=ISSUER, jwks=JWKS), resource="mcp", authorization_servers=[ISSUER])
