"""Client ID Metadata Documents at the OAuth proxy: a client names the URL of its metadata document as
its `client_id` (the proxy advertises `client_id_metadata_document_supported`), the proxy fetches it
and signs the user in without any registration (step by step over HTTP: our client only names https
document URLs, and the document is served on loopback http here); a document that names another client, or a redirect
URI it does not list, is refused on the proxy's own page."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcp_bindings.runtime.auth import pkce_pair
from tests.peers.auth_harness import bind_local, serve
from tests.support.oidc import OidcProvider, free_port

from .conftest import SignedIn, Sockets, authorization_url, come_back, proxied, redeem, upstream_of, whoami

pytestmark = [pytest.mark.anyio, pytest.mark.interop]


@asynccontextmanager
async def hosting(documents: dict[str, dict[str, Any]]) -> AsyncIterator[str]:
    """Serves `documents` (path -> JSON) on 127.0.0.1; yields the base URL."""
    sock, base = bind_local()

    async def document(request: Request) -> Response:
        found = documents.get(request.url.path)
        return JSONResponse(found) if found is not None else Response(status_code=404)

    async with serve(Starlette(routes=[Route("/{path:path}", document)]), sock):
        yield base


async def test_a_metadata_document_client_signs_in(sockets: Sockets, provider: OidcProvider) -> None:
    redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
    documents: dict[str, dict[str, Any]] = {}
    async with hosting(documents) as base, proxied(sockets, upstream_of(provider)) as site, httpx.AsyncClient() as http:
        client_id = f"{base}/client.json"  # https in production; http on loopback is accepted for development
        documents["/client.json"] = {
            "client_id": client_id,
            "client_name": "Hosted client",
            "redirect_uris": [redirect_uri],
        }
        metadata = (await http.get(f"{site.base}/.well-known/oauth-authorization-server")).json()
        assert metadata["client_id_metadata_document_supported"] is True
        verifier, challenge = pkce_pair()
        back, pages = await come_back(site, client_id, redirect_uri, challenge, login="erin")
        assert back.code is not None and "Hosted client" in pages[0]
        tokens = await redeem(http, site, SignedIn(client_id, redirect_uri, verifier, back.code))
        assert tokens.status_code == 200, tokens.text
        called = await whoami(http, site, tokens.json()["access_token"])
        assert called.status_code == 200 and f'\\"erin\\",\\"{client_id}\\"' in called.text
        assert not any(key.startswith("client:") for key in site.store.entries)  # type: ignore[attr-defined]


async def test_a_metadata_document_is_checked(sockets: Sockets, provider: OidcProvider) -> None:
    redirect_uri = "http://127.0.0.1:5000/callback"
    async with hosting({}) as base:
        documents = {
            "/other.json": {"client_id": "https://elsewhere.example/client.json", "redirect_uris": [redirect_uri]},
            "/mine.json": {"client_id": f"{base}/mine.json", "redirect_uris": [redirect_uri]},
        }
    async with hosting(documents) as base, proxied(sockets, upstream_of(provider)) as site, httpx.AsyncClient() as http:
        documents["/mine.json"]["client_id"] = f"{base}/mine.json"
        challenge = pkce_pair()[1]
        other = await http.get(authorization_url(site, f"{base}/other.json", redirect_uri, challenge))
        assert other.status_code == 400 and "names another client_id" in other.text
        missing = await http.get(authorization_url(site, f"{base}/missing.json", redirect_uri, challenge))
        assert missing.status_code == 400 and "HTTP 404" in missing.text
        documents["/huge.json"] = {"client_id": f"{base}/huge.json", "redirect_uris": [redirect_uri], "x": "x" * 70_000}
        huge = await http.get(authorization_url(site, f"{base}/huge.json", redirect_uri, challenge))
        assert huge.status_code == 400 and f"the client metadata document at {base}/huge.json" in huge.text
        assert "consent" not in huge.text  # over 64 KiB (MAX_CIMD_BYTES): not read to the end
        elsewhere = await http.get(
            authorization_url(site, f"{base}/mine.json", "http://127.0.0.1:5000/other", challenge)
        )
        assert elsewhere.status_code == 400 and "is not registered for this client" in elsewhere.text
        mine = await http.get(authorization_url(site, f"{base}/mine.json", redirect_uri, challenge))
        assert mine.status_code == 200 and "consent" in mine.text
