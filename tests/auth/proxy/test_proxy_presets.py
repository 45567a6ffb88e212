"""The provider presets and their quirks. Providers that cannot run here are checked against their
discovery documents (`DISCOVERY`: the fields the proxy reads, in the shape each provider documents,
written for these tests, not fetched) and, where the quirk is behaviour, against a local stand-in:
GitHub's user endpoint and its errors answered with HTTP 200 (a Starlette app), Google's hosted
domain (the real OpenID provider, `oidc-provider`, giving users an `hd` claim), Entra's multi-tenant
`common` authority (`oidc-provider` behaving as it does: a tenant issuer, the issuer template in the
authority's discovery document, `tid` in id_tokens; tests/peers/oidc_provider.mjs)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from mcp_bindings.runtime.auth import OAuthClientAuth, pkce_pair
from mcp_bindings.runtime.auth.discovery import authorization_server_metadata_urls, parse_authorization_server_metadata
from mcp_bindings.runtime.auth.proxy import Upstream, auth0, entra, github, google, keycloak, oidc, okta, workos
from mcp_bindings.runtime.client.http import connect_http
from tests.peers.auth_harness import bind_local, serve
from tests.peers.harness import client_module
from tests.support import REPO_ROOT, announced_url
from tests.support.docs import block
from tests.support.oidc import FormSignIn, OidcProvider, forms_of, free_port

from .conftest import SignedIn, Sockets, authorization_url, come_back, proxied, redeem, register, whoami

pytestmark = pytest.mark.anyio
CREDENTIALS = {"client_id": "id", "client_secret": "secret"}

# preset -> (the discovery URL the provider documents, its document's fields the proxy reads)
DISCOVERY: dict[str, tuple[Upstream, str, dict[str, Any]]] = {
    "google": (
        google(**CREDENTIALS),
        "https://accounts.google.com/.well-known/openid-configuration",
        {
            "issuer": "https://accounts.google.com",
            "authorization_endpoint": "https://accounts.google.com/o/oauth2/v2/auth",
            "token_endpoint": "https://oauth2.googleapis.com/token",
            "userinfo_endpoint": "https://openidconnect.googleapis.com/v1/userinfo",
            "jwks_uri": "https://www.googleapis.com/oauth2/v3/certs",
            "code_challenge_methods_supported": ["plain", "S256"],
        },
    ),
    "entra": (
        entra("3c8f1ca1-4a1e-4b8a-9d4e-0f7c2a6b5d11", **CREDENTIALS),
        "https://login.microsoftonline.com/3c8f1ca1-4a1e-4b8a-9d4e-0f7c2a6b5d11/v2.0/.well-known/openid-configuration",
        {  # Entra supports PKCE S256 without advertising it: the proxy does not require the field upstream
            "issuer": "https://login.microsoftonline.com/3c8f1ca1-4a1e-4b8a-9d4e-0f7c2a6b5d11/v2.0",
            "authorization_endpoint": "https://login.microsoftonline.com/3c8f1ca1-4a1e-4b8a-9d4e-0f7c2a6b5d11/oauth2/v2.0/authorize",
            "token_endpoint": "https://login.microsoftonline.com/3c8f1ca1-4a1e-4b8a-9d4e-0f7c2a6b5d11/oauth2/v2.0/token",
            "jwks_uri": "https://login.microsoftonline.com/3c8f1ca1-4a1e-4b8a-9d4e-0f7c2a6b5d11/discovery/v2.0/keys",
        },
    ),
    "auth0": (
        auth0("tenant.us.auth0.com", **CREDENTIALS),
        "https://tenant.us.auth0.com/.well-known/openid-configuration",
        {
            "issuer": "https://tenant.us.auth0.com/",
            "authorization_endpoint": "https://tenant.us.auth0.com/authorize",
            "token_endpoint": "https://tenant.us.auth0.com/oauth/token",
            "jwks_uri": "https://tenant.us.auth0.com/.well-known/jwks.json",
            "code_challenge_methods_supported": ["S256", "plain"],
        },
    ),
    "okta": (
        okta("dev-123.okta.com", **CREDENTIALS),
        "https://dev-123.okta.com/oauth2/default/.well-known/openid-configuration",
        {
            "issuer": "https://dev-123.okta.com/oauth2/default",
            "authorization_endpoint": "https://dev-123.okta.com/oauth2/default/v1/authorize",
            "token_endpoint": "https://dev-123.okta.com/oauth2/default/v1/token",
            "jwks_uri": "https://dev-123.okta.com/oauth2/default/v1/keys",
            "code_challenge_methods_supported": ["S256"],
        },
    ),
    "workos": (
        workos("brisk-lake-71.authkit.app", **CREDENTIALS),
        "https://brisk-lake-71.authkit.app/.well-known/openid-configuration",
        {
            "issuer": "https://brisk-lake-71.authkit.app",
            "authorization_endpoint": "https://brisk-lake-71.authkit.app/oauth2/authorize",
            "token_endpoint": "https://brisk-lake-71.authkit.app/oauth2/token",
            "jwks_uri": "https://brisk-lake-71.authkit.app/oauth2/jwks",
            "code_challenge_methods_supported": ["S256"],
        },
    ),
    "keycloak": (
        keycloak("https://sso.example.com/", "mcp", **CREDENTIALS),
        "https://sso.example.com/realms/mcp/.well-known/openid-configuration",
        {
            "issuer": "https://sso.example.com/realms/mcp",
            "authorization_endpoint": "https://sso.example.com/realms/mcp/protocol/openid-connect/auth",
            "token_endpoint": "https://sso.example.com/realms/mcp/protocol/openid-connect/token",
            "jwks_uri": "https://sso.example.com/realms/mcp/protocol/openid-connect/certs",
            "code_challenge_methods_supported": ["plain", "S256"],
        },
    ),
}


@pytest.mark.parametrize("name", sorted(DISCOVERY))
def test_presets_find_their_providers_discovery_document(name: str) -> None:
    upstream, url, document = DISCOVERY[name]
    assert upstream.issuer is not None and upstream.openid
    assert url in authorization_server_metadata_urls(upstream.issuer)  # tried in the MCP order
    metadata = parse_authorization_server_metadata(document, url)
    assert metadata.issuer == upstream.issuer  # compared exactly when the proxy discovers it


def test_preset_settings_and_their_refusals(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_OAUTH_CLIENT_ID", raising=False)
    with pytest.raises(ValueError, match="set MCP_OAUTH_CLIENT_ID and MCP_OAUTH_CLIENT_SECRET"):
        oidc("https://idp.example.com")
    monkeypatch.setenv("MCP_OAUTH_CLIENT_ID", "from-env")
    monkeypatch.setenv("MCP_OAUTH_CLIENT_SECRET", "secret-from-env")
    assert (oidc("https://idp.example.com").client_id, github().client_secret) == ("from-env", "secret-from-env")
    with pytest.raises(ValueError, match=r"tenants= is for the multi-tenant authorities \(common, organizations"):
        entra("contoso.onmicrosoft.com", tenants=["3c8f1ca1-4a1e-4b8a-9d4e-0f7c2a6b5d11"])
    hosted = google(hosted_domain="example.com")
    assert hosted.params == {"hd": "example.com"} and hosted.required_claims == {"hd": "example.com"}
    assert okta("dev-1.okta.com", None).issuer == "https://dev-1.okta.com"


# -- GitHub: no OpenID Connect; its user endpoint names the user; errors with HTTP 200 ----------------


@asynccontextmanager
async def github_like() -> AsyncIterator[str]:
    """GitHub's OAuth endpoints as GitHub behaves (see the module docstring); yields its base URL."""
    sock, base = bind_local()

    async def authorize(request: Request) -> Response:
        back = {
            "code": "good" if "read:user" in request.query_params["scope"] else "bad",
            "state": request.query_params["state"],
        }
        return RedirectResponse(f"{request.query_params['redirect_uri']}?{urlencode(back)}", status_code=302)

    async def token(request: Request) -> Response:
        form = await request.body()
        fields = dict(pair.split("=", 1) for pair in form.decode().split("&"))
        if fields.get("client_secret") != "gh-secret":
            return JSONResponse({"error": "incorrect_client_credentials"})  # HTTP 200, as GitHub does
        if fields.get("code") != "good" or not fields.get("code_verifier"):
            return JSONResponse({"error": "bad_verification_code"})
        return JSONResponse({"access_token": "gho_abc", "token_type": "bearer", "scope": "read:user"})

    async def user(request: Request) -> Response:
        if request.headers.get("authorization") != "Bearer gho_abc":
            return JSONResponse({"message": "Bad credentials"}, status_code=401)
        return JSONResponse({"id": 583231, "login": "octocat", "name": "The Octocat"})

    routes = [
        Route("/login/oauth/authorize", authorize),
        Route("/login/oauth/access_token", token, methods=["POST"]),
        Route("/user", user),
    ]
    async with serve(Starlette(routes=routes), sock):
        yield base


def at(base: str, preset: Upstream) -> Upstream:
    """`preset` with its endpoints moved to `base` (the stand-in), nothing else changed."""
    return replace(
        preset,
        authorization_endpoint=f"{base}/login/oauth/authorize",
        token_endpoint=f"{base}/login/oauth/access_token",
        userinfo_endpoint=f"{base}/user",
    )


async def test_github_preset_signs_in_by_the_user_endpoint(sockets: Sockets) -> None:
    async with github_like() as base:
        upstream = at(base, github(client_id="gh-id", client_secret="gh-secret"))
        async with proxied(sockets, upstream) as site:
            handler = FormSignIn(f"http://127.0.0.1:{free_port()}/callback")
            auth = OAuthClientAuth(handler, client_name="GitHub user")
            client_class = client_module("2026-07-28").Client
            async with connect_http(site.mcp_url, client_class, auth=auth, request_timeout=15) as client:
                principal = (await client.call_tool(name="whoami")).content[0].text
            await handler.aclose()
            assert f'"{site.issuer}","583231",' in principal and "GitHub" in handler.pages[0]


async def test_github_errors_answered_with_200_are_errors(sockets: Sockets) -> None:
    async with github_like() as base:
        upstream = at(base, github(client_id="gh-id", client_secret="gh-secret", scopes=("user:email",)))
        async with proxied(sockets, upstream) as site, httpx.AsyncClient() as http:
            redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
            client = await register(http, site, redirect_uri)
            back, _ = await come_back(site, client["client_id"], redirect_uri, pkce_pair()[1])
            assert back.error == "temporarily_unavailable"
            assert back.error_description is not None and back.error_description.endswith(
                "refused the code: HTTP 200 bad_verification_code"
            )


# -- Google: the hosted domain asked for and checked ----------------------------------------------


@pytest.mark.interop
async def test_google_hosted_domain_is_checked_not_only_asked(sockets: Sockets, provider: OidcProvider) -> None:
    hosted = google(hosted_domain="example.com", client_id=provider.client_id, client_secret=provider.client_secret)
    upstream = replace(hosted, issuer=provider.issuer)  # the real provider, with Google's settings
    async with proxied(sockets, upstream) as site, httpx.AsyncClient() as http:
        redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
        client = await register(http, site, redirect_uri)
        page = await http.get(authorization_url(site, client["client_id"], redirect_uri, pkce_pair()[1]))
        fields = {name: value for _, name, value in forms_of(page.text)[0]["fields"]}
        approve = {"transaction": fields["transaction"], "csrf": fields["csrf"], "decision": "approve"}
        to_provider = await http.post(f"{site.base}/consent", data=approve)
        assert httpx.URL(to_provider.headers["location"]).params["hd"] == "example.com"
        for login, expected in (("dana@example.com", None), ("eve@other.org", "access_denied")):
            back, _ = await come_back(site, client["client_id"], redirect_uri, pkce_pair()[1], login)
            assert back.error == expected, back.params
            if expected:
                assert back.error_description == "this server accepts only users whose 'hd' is 'example.com'"


# -- Microsoft Entra ID, multi-tenant: each id_token's issuer is its own tenant's ---------------------

# Entra's `common` authority's discovery document (https://login.microsoftonline.com/common/v2.0/
# .well-known/openid-configuration), the fields the proxy reads, in the shape Microsoft documents.
ENTRA_COMMON = {
    "issuer": "https://login.microsoftonline.com/{tenantid}/v2.0",
    "authorization_endpoint": "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
    "token_endpoint": "https://login.microsoftonline.com/common/oauth2/v2.0/token",
    "jwks_uri": "https://login.microsoftonline.com/common/discovery/v2.0/keys",
}
TENANT, OTHER = "72f988bf-86f1-41af-91ab-2d7cd011db47", "3c8f1ca1-4a1e-4b8a-9d4e-0f7c2a6b5d11"


def endpoints(upstream: Upstream) -> dict[str, Any]:
    fields = ("issuer", "authorization_endpoint", "token_endpoint", "jwks_uri")
    return {name: getattr(upstream, name) for name in fields}


def test_the_entra_common_preset_is_its_discovery_document() -> None:
    """No issuer to discover at a template: the preset names what the document does."""
    assert endpoints(entra("common", **CREDENTIALS)) == ENTRA_COMMON
    organizations = entra("organizations", tenants=[TENANT], **CREDENTIALS)
    assert organizations.token_endpoint == ENTRA_COMMON["token_endpoint"].replace("common", "organizations")
    assert organizations.tenants == (TENANT,) and organizations.issuer == ENTRA_COMMON["issuer"]


@pytest.fixture(scope="module")
def entra_provider(sockets: Sockets) -> Iterator[OidcProvider]:
    """`oidc-provider` as Entra's `common` authority, its users of the tenant `TENANT`."""
    peer = OidcProvider([f"{base}/auth/callback" for _, base in sockets.free])
    with pytest.MonkeyPatch.context() as env:
        env.setenv("OIDC_ENTRA_TENANT", TENANT)
        peer.start()
    try:
        yield peer
    finally:
        peer.stop()


@pytest.mark.interop
async def test_entra_multi_tenant_checks_each_id_token_against_its_tenant(
    sockets: Sockets, entra_provider: OidcProvider
) -> None:
    base = entra_provider.issuer  # (its origin; its issuer is f"{base}/{TENANT}/v2.0")
    credentials = {"client_id": entra_provider.client_id, "client_secret": entra_provider.client_secret}
    document = httpx.get(f"{base}/common/v2.0/.well-known/openid-configuration").json()
    assert endpoints(entra("common", authority=base, **credentials)) == {name: document[name] for name in ENTRA_COMMON}
    # (tenants allowed, who signs in) -> the error the MCP client is redirected with, and its description
    cases: list[tuple[tuple[str, ...], str, str | None, str | None]] = [
        ((), "alice", None, None),
        ((OTHER, TENANT), "bob", None, None),
        ((OTHER,), "carol", "access_denied", f"this server does not accept users of the tenant {TENANT!r}"),
        (  # the id_token claims an allowed tenant, but its issuer is another tenant's
            (OTHER,),
            f"mallory#{OTHER}",
            "temporarily_unavailable",
            f"the sign-in provider's id_token was refused: the token's issuer '{base}/{TENANT}/v2.0' is not that "
            f"of its tenant {OTHER!r}",
        ),
    ]
    for tenants, login, error, description in cases:
        upstream = entra("common", tenants=tenants, authority=base, **credentials)
        async with proxied(sockets, upstream) as site, httpx.AsyncClient() as http:
            redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
            client = await register(http, site, redirect_uri)
            verifier, challenge = pkce_pair()
            back, _ = await come_back(site, client["client_id"], redirect_uri, challenge, login)
            assert (back.error, back.error_description) == (error, description), (login, back.params)
            if error is None:
                assert back.code is not None
                signed = SignedIn(client["client_id"], redirect_uri, verifier, back.code)
                tokens = (await redeem(http, site, signed)).json()
                called = (await whoami(http, site, tokens["access_token"])).text
                assert f'\\"{site.issuer}\\",\\"{login}\\"' in called, called


ENTRA_DOC = '"organizations",\n    tenants=os.environ.get("ENTRA_TENANTS"'


@pytest.mark.interop
async def test_the_entra_docs_snippet_signs_in_only_its_tenants(
    tmp_path: Path, sockets: Sockets, entra_provider: OidcProvider
) -> None:
    """docs/auth.md's multi-tenant Entra server, as written, against the provider as `common` is."""
    sock, base = sockets.take()
    sock.close()  # the server binds this port: the provider knows its callback URI
    server = tmp_path / "server.py"
    server.write_text(block(ENTRA_DOC, ["docs/auth.md"]))
    env = {
        **os.environ,
        "PUBLIC_URL": base,
        "ENTRA_AUTHORITY": entra_provider.issuer,
        "ENTRA_TENANTS": f"{OTHER},{TENANT}",
        "MCP_OAUTH_CLIENT_ID": entra_provider.client_id,
        "MCP_OAUTH_CLIENT_SECRET": entra_provider.client_secret,
    }
    log = tmp_path / "server.log"
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, str(server)], cwd=REPO_ROOT, env=env, stdout=out, stderr=out)
    try:
        announced_url(log, process)
        handler = FormSignIn(f"http://127.0.0.1:{free_port()}/callback", login="dana")
        auth = OAuthClientAuth(handler, client_name="Docs client")
        async with connect_http(
            f"{base}/mcp", client_module("2026-07-28").Client, auth=auth, request_timeout=15
        ) as client:
            said = (await client.call_tool(name="tenant")).content[0].text
        await handler.aclose()
    finally:
        process.terminate()
        process.wait(10)
    assert said == f"dana of {TENANT}"
