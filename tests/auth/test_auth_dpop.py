"""DPoP (RFC 9449) on 127.0.0.1, both sides: our client obtaining DPoP-bound tokens (proof at the token
endpoint, `Authorization: DPoP` plus a fresh proof per request, nonce retries at the authorization
and the resource server), and `require_bearer(..., dpop=DPoPProofVerifier())` refusing replayed
proofs, a wrong `htu`, tokens bound to another key, a missing nonce, and DPoP-bound tokens presented
as Bearer tokens."""

from __future__ import annotations

import time
from typing import Any

import anyio
import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from mcp_bindings.runtime.auth import (
    DPoPKey,
    DPoPProofError,
    DPoPProofVerifier,
    HeadlessAuthorizationHandler,
    NonceIssuer,
    OAuthClientAuth,
    ReplayCache,
    TokenRequestError,
    jwk_thumbprint,
)
from mcp_bindings.runtime.auth.challenge import parse_challenges
from mcp_bindings.runtime.auth.grants import parse_token_response
from tests.peers.auth_harness import READ, Stack, oauth_stack
from tests.peers.auth_server import AuthServerOptions
from tests.support.auth import STATELESS_BODY, STATELESS_HEADERS, VERSIONS, call_echo

pytestmark = pytest.mark.anyio
LIMIT = 30
URL = "https://mcp.example.test/mcp"


async def post(stack: Stack, headers: dict[str, str]) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.post(stack.mcp_url, json=STATELESS_BODY, headers={**STATELESS_HEADERS, **headers})


def bound_token(stack: Stack, key: DPoPKey) -> str:
    return stack.auth.mint(resource=stack.mcp_url, scope=READ, client_id="c", jkt=key.thumbprint)


def dpop_headers(stack: Stack, key: DPoPKey, token: str, **proof: Any) -> dict[str, str]:
    url = proof.pop("url", stack.mcp_url)
    return {"Authorization": f"DPoP {token}", "DPoP": key.proof("POST", url, access_token=token, **proof)}


def dpop_challenge(response: httpx.Response) -> Any:
    challenges = parse_challenges(response.headers.get_list("www-authenticate"))
    return next(c for c in challenges if c.scheme == "dpop")


# -- the client, end to end ----------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
async def test_client_gets_and_presents_a_dpop_bound_token(version: str) -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(AuthServerOptions(dpop=True), dpop=DPoPProofVerifier()) as stack:
            auth = OAuthClientAuth(HeadlessAuthorizationHandler())  # DPoP: the AS advertises ES256
            assert await call_echo(stack, auth, version) == "hi"
            assert auth.tokens is not None and auth.tokens.token_type == "DPoP"
            (token_request,) = stack.auth.of("/token")
            proof = jwt.decode(token_request.headers["dpop"], options={"verify_signature": False})
            assert proof["htm"] == "POST" and proof["htu"] == stack.auth.issuer + "/token"
            jkt = stack.seen[-1].claims["cnf"]["jkt"]
            header = jwt.get_unverified_header(token_request.headers["dpop"])
            assert jkt == jwk_thumbprint(header["jwk"])
            assert await call_echo(stack, auth, version, text="again") == "again"  # a fresh proof (no replay)
            assert len(stack.auth.of("/token")) == 1 and len(stack.seen) >= 2


async def test_client_answers_nonce_challenges_of_both_servers() -> None:
    with anyio.fail_after(LIMIT):
        verifier = DPoPProofVerifier(nonces=NonceIssuer())
        async with oauth_stack(AuthServerOptions(dpop=True, dpop_nonce=True), dpop=verifier) as stack:
            auth = OAuthClientAuth(HeadlessAuthorizationHandler(), dpop=DPoPKey())
            assert await call_echo(stack, auth) == "hi"
            first, second = stack.auth.of("/token")
            assert "nonce" not in jwt.decode(first.headers["dpop"], options={"verify_signature": False})
            assert "nonce" in jwt.decode(second.headers["dpop"], options={"verify_signature": False})
            assert 401 in stack.statuses and stack.statuses[-1] == 200
            assert stack.statuses.count(401) == 2  # the unauthenticated first request, then one nonce challenge


async def test_client_without_dpop_keeps_bearer_tokens() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(AuthServerOptions(dpop=True), dpop=DPoPProofVerifier()) as stack:
            auth = OAuthClientAuth(HeadlessAuthorizationHandler(), dpop=False)
            assert await call_echo(stack, auth) == "hi"
            assert auth.tokens is not None and auth.tokens.token_type == "Bearer"
            assert "dpop" not in stack.auth.of("/token")[0].headers


def test_a_dpop_token_type_is_only_accepted_after_sending_a_proof() -> None:
    body = {"access_token": "t", "token_type": "DPoP"}
    with pytest.raises(TokenRequestError, match="token_type"):
        parse_token_response(body, issuer="https://as", resource="r", requested_scope=None)
    tokens = parse_token_response(body, issuer="https://as", resource="r", requested_scope=None, dpop=True)
    assert tokens.token_type == "DPoP"


# -- the resource server ---------------------------------------------------------------------------


async def test_resource_server_accepts_a_fresh_proof_and_refuses_its_replay() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(dpop=DPoPProofVerifier()) as stack:
            key = DPoPKey()
            token = bound_token(stack, key)
            headers = dpop_headers(stack, key, token)
            assert (await post(stack, headers)).status_code == 200
            replay = await post(stack, headers)
            assert replay.status_code == 401
            challenge = dpop_challenge(replay)
            assert challenge.error == "invalid_dpop_proof" and "replayed" in (challenge.error_description or "")
            assert (await post(stack, dpop_headers(stack, key, token))).status_code == 200  # a new proof is fine


async def test_resource_server_refuses_a_wrong_htu_and_another_key() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(dpop=DPoPProofVerifier()) as stack:
            key = DPoPKey()
            token = bound_token(stack, key)
            wrong_htu = await post(stack, dpop_headers(stack, key, token, url=stack.rs_base + "/elsewhere"))
            assert wrong_htu.status_code == 401 and "htu" in (dpop_challenge(wrong_htu).error_description or "")
            other = await post(stack, dpop_headers(stack, DPoPKey(), token))
            assert other.status_code == 401
            assert "bound to" in (dpop_challenge(other).error_description or "")
            missing = await post(stack, {"Authorization": f"DPoP {token}"})
            assert missing.status_code == 401 and dpop_challenge(missing).error == "invalid_dpop_proof"


async def test_resource_server_demands_a_nonce_then_accepts_the_retry() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(dpop=DPoPProofVerifier(nonces=NonceIssuer())) as stack:
            key = DPoPKey()
            token = bound_token(stack, key)
            first = await post(stack, dpop_headers(stack, key, token))
            assert first.status_code == 401 and dpop_challenge(first).error == "use_dpop_nonce"
            nonce = first.headers["dpop-nonce"]
            retried = await post(stack, dpop_headers(stack, key, token, nonce=nonce))
            assert retried.status_code == 200
            stale = await post(stack, dpop_headers(stack, key, token, nonce="made-up"))
            assert stale.status_code == 401 and dpop_challenge(stale).error == "use_dpop_nonce"


async def test_a_bound_token_presented_as_bearer_is_refused() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(dpop=DPoPProofVerifier()) as stack:
            token = bound_token(stack, DPoPKey())
            response = await post(stack, {"Authorization": f"Bearer {token}"})
            assert response.status_code == 401
            assert 'error="invalid_token"' in response.headers["www-authenticate"]
            unbound = stack.auth.mint(resource=stack.mcp_url, scope=READ, client_id="c")
            key = DPoPKey()
            as_dpop = await post(stack, dpop_headers(stack, key, unbound))
            assert as_dpop.status_code == 401 and "not DPoP-bound" in (dpop_challenge(as_dpop).error_description or "")
            assert (await post(stack, {"Authorization": f"Bearer {unbound}"})).status_code == 200


async def test_challenges_and_metadata_advertise_dpop() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(dpop=DPoPProofVerifier(), dpop_required=True) as stack:
            response = await post(stack, {})
            schemes = [c.scheme for c in parse_challenges(response.headers.get_list("www-authenticate"))]
            assert response.status_code == 401 and schemes == ["dpop"]
            assert "ES256" in (dpop_challenge(response).get("algs") or "")
            unbound = stack.auth.mint(resource=stack.mcp_url, scope=READ, client_id="c")
            assert (await post(stack, {"Authorization": f"Bearer {unbound}"})).status_code == 401
            async with httpx.AsyncClient(timeout=10) as http:
                prm = (await http.get(stack.app.metadata_url)).json()
            assert "ES256" in prm["dpop_signing_alg_values_supported"]
            assert prm["dpop_bound_access_tokens_required"] is True


# -- the proof verifier, unit by unit ------------------------------------------------------------


def test_proof_checks() -> None:
    key = DPoPKey()
    verifier = DPoPProofVerifier()

    def refused(proof: str | None, match: str, **kwargs: Any) -> None:
        with pytest.raises(DPoPProofError, match=match):
            verifier.verify(proof, **{"method": "POST", "url": URL, **kwargs})

    refused(None, "no DPoP proof")
    refused("a.b.c, d.e.f", "more than one")
    refused("not-a-jwt", "well-formed")
    refused(key.proof("GET", URL), "htm")
    refused(key.proof("POST", URL + "/x"), "htu")
    refused(key.proof("POST", URL, access_token="t1"), "ath", access_token="t2")
    old = key.proof("POST", URL)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(time, "time", lambda: 10_000_000_000.0)
        refused(old, "iat")
    private_key = ec.generate_private_key(ec.SECP256R1())
    claims = {"jti": "j", "htm": "POST", "htu": URL, "iat": int(time.time())}
    with_private = {**key.public_jwk, "d": "secret"}
    refused(jwt.encode(claims, private_key, "ES256", headers={"typ": "dpop+jwt", "jwk": with_private}), "private")
    refused(jwt.encode(claims, private_key, "ES256", headers={"typ": "JWT", "jwk": key.public_jwk}), "typ")
    refused(jwt.encode(claims, "k" * 32, "HS256", headers={"typ": "dpop+jwt", "jwk": key.public_jwk}), "alg")
    refused(jwt.encode(claims, private_key, "ES256", headers={"typ": "dpop+jwt", "jwk": key.public_jwk}), "verify")
    good = key.proof("POST", URL + "?query=ignored", access_token="t")
    checked = verifier.verify(good, method="post", url=URL, access_token="t", expected_jkt=key.thumbprint)
    assert checked.jkt == key.thumbprint and checked.claims["htu"] == URL
    refused(good, "replayed", access_token="t")


def test_replay_cache_forgets_expired_entries_and_stays_bounded() -> None:
    cache = ReplayCache(max_entries=3)
    assert cache.check_and_add("a", expires_at=10, now=0)
    assert not cache.check_and_add("a", expires_at=10, now=1)
    assert cache.check_and_add("a", expires_at=30, now=11)  # expired, so new again
    for name in "bcde":
        cache.check_and_add(name, expires_at=100, now=12)
    assert len(cache._seen) == 3  # pyright: ignore[reportPrivateUsage]


def test_dpop_key_round_trips_through_pem_and_rejects_symmetric_algorithms() -> None:
    from cryptography.hazmat.primitives import serialization

    private_key = ec.generate_private_key(ec.SECP256R1())
    pem = private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    assert DPoPKey.from_pem(pem).thumbprint == DPoPKey(private_key).thumbprint
    with pytest.raises(ValueError, match="asymmetric"):
        DPoPKey(algorithm="HS256")
