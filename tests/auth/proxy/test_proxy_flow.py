"""The OAuth proxy end to end against a real OpenID provider (`oidc-provider`, node, on 127.0.0.1):
our MCP client (`OAuthClientAuth`) meets a 401, discovers the proxy through the Protected Resource
Metadata, registers (DCR), and the sign-in runs through the proxy's consent page and the provider's
login and consent forms (plain HTTP); the tool call then runs as the provider's user, with the
proxy's token (never the provider's)."""

from __future__ import annotations

import json

import pytest

from mcp_bindings.runtime.auth import OAuthClientAuth
from mcp_bindings.runtime.client.http import connect_http
from tests.peers.harness import client_module
from tests.support.auth import VERSIONS
from tests.support.oidc import FormSignIn, OidcProvider, free_port

from .conftest import Sockets, proxied, upstream_of

pytestmark = [pytest.mark.anyio, pytest.mark.interop]


@pytest.mark.parametrize("version", VERSIONS)
async def test_sign_in_through_the_proxy(version: str, sockets: Sockets, provider: OidcProvider) -> None:
    async with proxied(sockets, upstream_of(provider)) as site:
        handler = FormSignIn(f"http://127.0.0.1:{free_port()}/callback", login="alice")
        auth = OAuthClientAuth(handler, client_name="Notes CLI")
        async with connect_http(site.mcp_url, client_module(version).Client, auth=auth, request_timeout=15) as client:
            principal = (await client.call_tool(name="whoami")).content[0].text
        await handler.aclose()
        assert json.loads(principal) == [site.base, "alice", principal and json.loads(principal)[2]]
        consent = handler.pages[0]
        assert "Notes CLI" in consent and handler.redirect_uri in consent
