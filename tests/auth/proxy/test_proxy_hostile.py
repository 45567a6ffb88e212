"""The OAuth proxy's refusals, each as a client or a hostile site would meet it, against the real
OpenID provider (`oidc-provider` on 127.0.0.1): a redirect URI not registered, or changed between the
authorization and the token request; a code or a refresh token replayed (and what the replay
revokes); a token of another audience, or the upstream provider's own token, at the MCP endpoint;
a consent posted across sites; a registration flood; PKCE left out or wrong; the proxy's endpoints
reached with a Host that does not name this server or from another site's Origin (DNS rebinding)."""

from __future__ import annotations

import time
from typing import Any

import httpx
import jwt
import pytest

from mcp_bindings.runtime.auth import pkce_pair
from mcp_bindings.runtime.auth.proxy.store import ProxyKeys, SealedRecords
from tests.support.oidc import OidcProvider, forms_of, free_port

from .conftest import (
    KEY,
    Sockets,
    authorization_url,
    come_back,
    proxied,
    redeem,
    register,
    sign_in,
    upstream_of,
    whoami,
)

pytestmark = [pytest.mark.anyio, pytest.mark.interop]


async def test_redirect_uri_not_registered_is_refused_here(sockets: Sockets, provider: OidcProvider) -> None:
    async with proxied(sockets, upstream_of(provider)) as site, httpx.AsyncClient() as http:
        client = await register(http, site, "http://127.0.0.1:5000/callback")
        _, challenge = pkce_pair()
        for elsewhere in (
            "https://attacker.example/callback",
            "http://127.0.0.1:5000/other",
            "http://localhost:5000/callback",
        ):
            answer = await http.get(authorization_url(site, client["client_id"], elsewhere, challenge))
            assert answer.status_code == 400 and "location" not in answer.headers  # never sent there
            assert f"redirect_uri &#x27;{elsewhere}&#x27; is not registered for this client" in answer.text
        # RFC 8252 §7.3: a loopback redirect URI matches on any port
        moved = await http.get(
            authorization_url(site, client["client_id"], "http://127.0.0.1:6123/callback", challenge)
        )
        assert moved.status_code == 200 and "http://127.0.0.1:6123/callback" in moved.text
        # refused at registration too
        bad = await http.post(f"{site.base}/register", json={"redirect_uris": ["http://attacker.example/cb"]})
        assert bad.status_code == 400 and bad.json()["error"] == "invalid_redirect_uri"


async def test_redirect_uri_changed_before_the_token_request(sockets: Sockets, provider: OidcProvider) -> None:
    async with proxied(sockets, upstream_of(provider)) as site, httpx.AsyncClient() as http:
        signed = await sign_in(http, site)
        changed = await redeem(http, site, signed, redirect_uri="http://127.0.0.1:1/callback")
        assert changed.status_code == 400
        assert changed.json() == {
            "error": "invalid_grant",
            "error_description": "redirect_uri is not the one of the authorization request",
        }


async def test_pkce_is_required_and_checked(sockets: Sockets, provider: OidcProvider) -> None:
    async with proxied(sockets, upstream_of(provider)) as site, httpx.AsyncClient() as http:
        client = await register(http, site, "http://127.0.0.1:5000/callback")
        plain = authorization_url(
            site, client["client_id"], "http://127.0.0.1:5000/callback", "x", code_challenge_method="plain"
        )
        refused = await http.get(plain)
        assert refused.status_code == 302
        assert (
            "error=invalid_request" in refused.headers["location"]
            and "state=client-state" in refused.headers["location"]
        )
        signed = await sign_in(http, site)
        wrong = await redeem(http, site, signed, code_verifier=pkce_pair()[0])
        assert wrong.json()["error"] == "invalid_grant" and "PKCE" in wrong.json()["error_description"]


async def test_a_code_verifier_out_of_ascii_is_a_mismatch_not_a_crash(sockets: Sockets, provider: OidcProvider) -> None:
    async with proxied(sockets, upstream_of(provider)) as site, httpx.AsyncClient() as http:
        signed = await sign_in(http, site)
        odd = await redeem(http, site, signed, code_verifier="é" * 43)
        assert odd.status_code == 400, odd.text
        assert odd.json()["error"] == "invalid_grant" and "PKCE" in odd.json()["error_description"]


async def test_code_replay_is_refused_and_revokes_its_tokens(sockets: Sockets, provider: OidcProvider) -> None:
    async with proxied(sockets, upstream_of(provider)) as site, httpx.AsyncClient() as http:
        signed = await sign_in(http, site)
        first = await redeem(http, site, signed)
        assert first.status_code == 200, first.text
        access = first.json()["access_token"]
        assert (await whoami(http, site, access)).status_code == 200
        again = await redeem(http, site, signed)
        assert again.status_code == 400
        assert again.json()["error_description"] == "the authorization code was already used; its tokens are revoked"
        refused = await whoami(http, site, access)
        assert refused.status_code == 401 and "the token's grant was revoked" in refused.headers["www-authenticate"]


async def test_refresh_rotates_and_a_replay_ends_the_grant(sockets: Sockets, provider: OidcProvider) -> None:
    async with proxied(sockets, upstream_of(provider)) as site, httpx.AsyncClient() as http:
        signed = await sign_in(http, site)
        tokens = (await redeem(http, site, signed)).json()
        refresh = {"grant_type": "refresh_token", "client_id": signed.client_id}
        rotated = await http.post(f"{site.base}/token", data={**refresh, "refresh_token": tokens["refresh_token"]})
        assert rotated.status_code == 200 and rotated.json()["refresh_token"] != tokens["refresh_token"]
        assert (await whoami(http, site, rotated.json()["access_token"])).status_code == 200
        replay = await http.post(f"{site.base}/token", data={**refresh, "refresh_token": tokens["refresh_token"]})
        assert replay.status_code == 400
        assert replay.json()["error_description"] == "the refresh token was already used; the grant is revoked"
        # the whole grant is gone: the rotated refresh token and its access token too
        after = await http.post(
            f"{site.base}/token", data={**refresh, "refresh_token": rotated.json()["refresh_token"]}
        )
        assert after.json()["error"] == "invalid_grant"
        assert (await whoami(http, site, rotated.json()["access_token"])).status_code == 401


async def test_revocation_ends_the_grant(sockets: Sockets, provider: OidcProvider) -> None:
    async with proxied(sockets, upstream_of(provider)) as site, httpx.AsyncClient() as http:
        signed = await sign_in(http, site)
        tokens = (await redeem(http, site, signed)).json()
        revoked = await http.post(
            f"{site.base}/revoke", data={"token": tokens["refresh_token"], "client_id": signed.client_id}
        )
        assert revoked.status_code == 200
        assert (await whoami(http, site, tokens["access_token"])).status_code == 401


async def test_tokens_of_another_audience_or_the_upstream_are_refused(sockets: Sockets, provider: OidcProvider) -> None:
    async with proxied(sockets, upstream_of(provider)) as site, httpx.AsyncClient() as http:
        signed = await sign_in(http, site)
        tokens = (await redeem(http, site, signed)).json()
        claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
        assert claims["aud"] == site.resource and claims["sub"] == "alice" and claims["email"] == "alice@example.com"
        # the same proxy key and issuer, the same grant, but for another resource
        keys = ProxyKeys(KEY.encode())
        other = {**claims, "aud": "http://127.0.0.1:1/mcp", "exp": int(time.time()) + 60}
        forged = jwt.encode(other, keys.signing_key, algorithm="ES256", headers={"kid": keys.kid, "typ": "at+jwt"})
        refused = await whoami(http, site, forged)
        assert refused.status_code == 401
        assert "the token was not issued for this resource" in refused.headers["www-authenticate"]
        # the provider's own access token (kept sealed with the grant) is not a token of this server
        grant: dict[str, Any] | None = await SealedRecords(site.store, keys).get(f"grant:{claims['sid']}")
        assert grant is not None
        upstream_token = grant["upstream"]["access_token"]
        assert upstream_token != tokens["access_token"]
        assert (await whoami(http, site, upstream_token)).status_code == 401
        # sealed at rest: neither the provider's token nor the user's name is in the stored bytes
        raw = b"".join(value for _, value in site.store.entries.values())  # type: ignore[attr-defined]
        assert upstream_token.encode() not in raw and b"alice" not in raw


async def test_consent_forged_across_sites_is_refused(sockets: Sockets, provider: OidcProvider) -> None:
    async with proxied(sockets, upstream_of(provider)) as site, httpx.AsyncClient() as http:
        redirect_uri = "http://127.0.0.1:5000/callback"
        client = await register(http, site, redirect_uri)
        page = await http.get(authorization_url(site, client["client_id"], redirect_uri, pkce_pair()[1]))
        assert page.headers["x-frame-options"] == "DENY"
        fields = {name: value for _, name, value in forms_of(page.text)[0]["fields"]}
        approve = {"transaction": fields["transaction"], "csrf": fields["csrf"], "decision": "approve"}
        async with httpx.AsyncClient() as attacker:  # another browser: no consent cookie
            guessed = await attacker.post(f"{site.base}/consent", data={**approve, "csrf": "guessed"})
            assert guessed.status_code == 403 and "CSRF check" in guessed.text
            copied = await attacker.post(f"{site.base}/consent", data=approve)  # even knowing the form's token
            assert copied.status_code == 403 and "CSRF check" in copied.text
        cross = await http.post(f"{site.base}/consent", data=approve, headers={"Origin": "https://attacker.example"})
        assert cross.status_code == 403 and "Origin 'https://attacker.example' is not allowed" in cross.text
        # an origin the app's Host / Origin check lets through (this machine, another port): the page's own check
        port = await http.post(f"{site.base}/consent", data=approve, headers={"Origin": "http://127.0.0.1:1"})
        assert port.status_code == 403 and "posted from another site" in port.text
        # the user's own answer still goes through, once
        mine = await http.post(f"{site.base}/consent", data=approve)
        assert mine.status_code == 303 and mine.headers["location"].startswith(provider.issuer)
        twice = await http.post(f"{site.base}/consent", data=approve)
        assert twice.status_code == 400


async def test_registration_flood_is_bounded(sockets: Sockets, provider: OidcProvider) -> None:
    async with (
        proxied(sockets, upstream_of(provider), registrations_per_address=3) as site,
        httpx.AsyncClient() as http,
    ):
        for _ in range(3):
            await register(http, site, "http://127.0.0.1:5000/callback")
        refused = await http.post(f"{site.base}/register", json={"redirect_uris": ["http://127.0.0.1:5000/callback"]})
        assert refused.status_code == 429 and refused.headers["retry-after"]
        assert refused.json()["error_description"] == (
            "at most 3 client registrations per 3600 s from one address (registrations_per_address); try again later"
        )
        # bounded per client: another address (127.0.0.2, loopback too) still registers
        elsewhere = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
        async with httpx.AsyncClient(transport=elsewhere) as other:
            await register(other, site, "http://127.0.0.1:5000/callback")


async def test_consent_denied_goes_back_as_access_denied(sockets: Sockets, provider: OidcProvider) -> None:
    async with proxied(sockets, upstream_of(provider)) as site, httpx.AsyncClient() as http:
        redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
        client = await register(http, site, redirect_uri)
        answer, _ = await come_back(site, client["client_id"], redirect_uri, pkce_pair()[1], decision="deny")
        assert answer.error == "access_denied" and answer.state == "client-state"


async def test_sign_ins_started_are_bounded(sockets: Sockets, provider: OidcProvider) -> None:
    async with (
        proxied(sockets, upstream_of(provider), authorizations_per_address=2) as site,
        httpx.AsyncClient() as http,
    ):
        client = await register(http, site, "http://127.0.0.1:5000/callback")
        url = authorization_url(site, client["client_id"], "http://127.0.0.1:5000/callback", pkce_pair()[1])
        assert [(await http.get(url)).status_code for _ in range(2)] == [200, 200]
        refused = await http.get(url)
        assert refused.status_code == 429
        assert "at most 2 per 600 s; authorizations_per_address" in refused.text
        pending = [key for key in site.store.entries if key.startswith("authorization:")]  # type: ignore[attr-defined]
        assert len(pending) == 2


# The proxy's endpoints a browser or client posts to or is sent to, each as the app's MCP endpoint is
# guarded: a Host not naming this machine (DNS rebinding) or another site's Origin is refused first.
GUARDED = [("GET", "/authorize"), ("POST", "/consent"), ("GET", "/auth/callback"), ("POST", "/token")]
GUARDED += [("POST", "/register"), ("POST", "/revoke")]


async def test_proxy_endpoints_refuse_a_foreign_host_and_a_cross_site_origin(
    sockets: Sockets, provider: OidcProvider
) -> None:
    async with proxied(sockets, upstream_of(provider)) as site, httpx.AsyncClient() as http:
        redirect_uri = "http://127.0.0.1:5000/callback"
        client = await register(http, site, redirect_uri)
        authorize = authorization_url(site, client["client_id"], redirect_uri, pkce_pair()[1])
        for method, path in GUARDED:
            url = authorize if path == "/authorize" else f"{site.base}{path}"
            body: dict[str, Any] = {"json": {"redirect_uris": [redirect_uri]}} if path == "/register" else {}
            if method == "POST" and not body:
                body = {"data": {"client_id": client["client_id"], "grant_type": "refresh_token", "token": "x"}}
            for header, value in (("Host", "evil.example"), ("Origin", "https://evil.example")):
                answer = await http.request(method, url, headers={header: value}, **body)
                assert answer.status_code == 403, (path, header, answer.status_code, answer.text[:200])
                assert answer.json()["error"]["message"] == f"Forbidden: {header} {value!r} is not allowed"
        clients = [key for key in site.store.entries if key.startswith("client:")]  # type: ignore[attr-defined]
        assert len(clients) == 1  # the refused registrations stored nothing
        # the public documents stay readable from any site (CORS *), as the resource's metadata
        for path in ("/.well-known/oauth-authorization-server", "/jwks"):
            public = await http.get(f"{site.base}{path}", headers={"Origin": "https://evil.example"})
            assert public.status_code == 200
