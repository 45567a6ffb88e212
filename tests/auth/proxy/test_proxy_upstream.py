"""The upstream provider down or answering garbage: the MCP client gets a clear error (an OAuth error
redirect naming the provider and what it did), the user is never asked to consent in vain, and the
proxy stores nothing half-way (no code, no grant, no upstream token). The provider here is a small
Starlette app on 127.0.0.1 that answers its discovery document correctly, sends the user straight
back with a code, and then misbehaves at its token endpoint in the way each test names."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlencode

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from mcp_bindings.runtime.auth import pkce_pair
from mcp_bindings.runtime.auth.proxy import Upstream
from tests.peers.auth_harness import bind_local, serve
from tests.support import refused_port
from tests.support.oidc import free_port

from .conftest import Sockets, authorization_url, come_back, proxied, register

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def misbehaving(token_answer: Response, token_endpoint: str | None = None) -> AsyncIterator[str]:
    """A provider whose token endpoint answers `token_answer` (or is `token_endpoint`, elsewhere);
    yields its issuer."""
    sock, issuer = bind_local()

    async def discovery(request: Request) -> Response:
        return JSONResponse(
            {
                "issuer": issuer,
                "authorization_endpoint": f"{issuer}/authorize",
                "token_endpoint": token_endpoint or f"{issuer}/token",
                "jwks_uri": f"{issuer}/jwks",
                "code_challenge_methods_supported": ["S256"],
            }
        )

    async def authorize(request: Request) -> Response:
        back = {"code": "upstream-code", "state": request.query_params["state"]}
        return RedirectResponse(f"{request.query_params['redirect_uri']}?{urlencode(back)}", status_code=302)

    async def token(request: Request) -> Response:
        return token_answer

    routes = [
        Route("/.well-known/openid-configuration", discovery),
        Route("/authorize", authorize),
        Route("/token", token, methods=["POST"]),
    ]
    async with serve(Starlette(routes=routes), sock):
        yield issuer


GARBAGE = [
    (PlainTextResponse("<html>gateway timeout</html>", status_code=200), "answered no JSON access_token"),
    (JSONResponse({"token_type": "Bearer"}), "answered no JSON access_token"),
    (JSONResponse({"error": "server_error"}, status_code=500), "refused the code: HTTP 500 server_error"),
]


@pytest.mark.parametrize(("answer", "said"), GARBAGE, ids=["html", "no-token", "http-500"])
async def test_upstream_garbage_is_a_clear_error_and_nothing_is_stored(
    sockets: Sockets, answer: Response, said: str
) -> None:
    async with misbehaving(answer) as issuer:
        upstream = Upstream("proxy", "secret", issuer=issuer, scopes=("openid",))
        async with proxied(sockets, upstream) as site, httpx.AsyncClient() as http:
            redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
            client = await register(http, site, redirect_uri)
            before = set(site.store.entries)  # type: ignore[attr-defined]
            back, _ = await come_back(site, client["client_id"], redirect_uri, pkce_pair()[1])
            assert back.error == "temporarily_unavailable" and back.state == "client-state"
            assert back.error_description == f"the sign-in provider's token endpoint {issuer}/token {said}"
            left = {key.split(":")[0] for key in set(site.store.entries) - before}  # type: ignore[attr-defined]
            # The consent and upstream states were used up; no code, no grant. What stays is the
            # per-address counter of sign-ins started (authorizations_per_address): it counts the
            # attempt, failed or not, and holds nothing of the sign-in.
            assert left == {"authorizations"}


@pytest.mark.parametrize("failure", ["token-endpoint-down", "id-token-garbage"])
async def test_upstream_failing_after_consent_is_a_clear_error_and_nothing_is_stored(
    sockets: Sockets, failure: str
) -> None:
    """Discovery answered (so the user was asked), then the provider fails at the code exchange: its
    token endpoint refuses connections, or answers an access token with an id_token that is no JWT."""
    with refused_port() as port:
        if failure == "token-endpoint-down":
            provider = misbehaving(Response(status_code=500), token_endpoint=f"http://127.0.0.1:{port}/token")
            said = f"the sign-in provider's token endpoint http://127.0.0.1:{port}/token did not answer"
        else:
            garbage = {"access_token": "upstream-at", "token_type": "Bearer", "id_token": "not-a-jwt"}
            provider, said = misbehaving(JSONResponse(garbage)), "the sign-in provider's id_token was refused"
        async with provider as issuer:
            upstream = Upstream("proxy", "secret", issuer=issuer, scopes=("openid",))
            async with proxied(sockets, upstream) as site, httpx.AsyncClient() as http:
                redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
                client = await register(http, site, redirect_uri)
                before = set(site.store.entries)  # type: ignore[attr-defined]
                back, pages = await come_back(site, client["client_id"], redirect_uri, pkce_pair()[1])
                assert len(pages) == 1  # the consent page: the user approved before the provider failed
                assert back.error == "temporarily_unavailable" and back.state == "client-state"
                assert back.error_description is not None and back.error_description.startswith(said)
                left = {key.split(":")[0] for key in set(site.store.entries) - before}  # type: ignore[attr-defined]
                assert left == {"authorizations"}  # no code, no grant (see the test above)


async def test_upstream_down_is_said_before_any_consent(sockets: Sockets) -> None:
    with refused_port() as port:  # bound, never listening, for the whole test: connections are refused
        await _upstream_down(sockets, f"http://127.0.0.1:{port}")


async def _upstream_down(sockets: Sockets, issuer: str) -> None:
    async with (
        proxied(sockets, Upstream("proxy", "secret", issuer=issuer)) as site,
        httpx.AsyncClient() as http,
    ):
        redirect_uri = "http://127.0.0.1:5000/callback"
        client = await register(http, site, redirect_uri)
        before = set(site.store.entries)  # type: ignore[attr-defined]
        answer = await http.get(authorization_url(site, client["client_id"], redirect_uri, pkce_pair()[1]))
        assert answer.status_code == 302
        location = httpx.URL(answer.headers["location"])
        assert location.params["error"] == "temporarily_unavailable"
        assert location.params["error_description"].startswith(f"the sign-in provider {issuer} could not be discovered")
        assert set(site.store.entries) == before  # type: ignore[attr-defined]
