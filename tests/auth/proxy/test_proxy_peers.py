"""Other clients reach a proxied server: the official MCP Python SDK's client signs in with its own
OAuth client provider (tests/peers/sdk_oauth_client.py, in the SDK's venv: discovery, registration,
PKCE and the token request its own, the user's forms scripted over HTTP) and calls a tool as its
user; the MCP Inspector CLI calls a tool with a bearer token the proxy issued (and is refused
without one)."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest

from tests.support import REPO_ROOT
from tests.support.browser import inspector_cli, node_path
from tests.support.oidc import OidcProvider

from .conftest import Sockets, proxied, redeem, sign_in, upstream_of

pytestmark = [pytest.mark.anyio, pytest.mark.interop, pytest.mark.slow]


async def test_the_official_sdk_client_signs_in_through_the_proxy(
    sockets: Sockets, provider: OidcProvider, sdk_python: str
) -> None:
    script = str(REPO_ROOT / "tests" / "peers" / "sdk_oauth_client.py")
    async with proxied(sockets, upstream_of(provider)) as site:
        done = await anyio.run_process([sdk_python, script, "--url", site.mcp_url, "--login", "dana"], check=False)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    report = json.loads(done.stdout)
    assert "error" not in report, report["error"]["traceback"]
    assert report["pages"] == 3  # the proxy's consent, the provider's login and its consent
    issuer, subject, client_id = json.loads(report["whoami"])
    assert (issuer, subject, client_id) == (site.issuer, "dana", report["client_id"])


async def test_the_inspector_cli_calls_a_tool_with_a_token_of_the_proxy(
    sockets: Sockets, provider: OidcProvider
) -> None:
    cli = [str(node_path()), str(inspector_cli()), "--cli"]
    async with proxied(sockets, upstream_of(provider)) as site, httpx.AsyncClient() as http:
        signed = await sign_in(http, site, login="erin")
        tokens = await redeem(http, site, signed)
        assert tokens.status_code == 200, tokens.text
        call = [site.mcp_url, "--transport", "http", "--method", "tools/call", "--tool-name", "whoami"]
        bearer = ["--header", f"Authorization: Bearer {tokens.json()['access_token']}"]
        done = await anyio.run_process([*cli, *call, *bearer], check=False)
        refused = await anyio.run_process([*cli, *call], check=False)
    assert done.returncode == 0, (done.stdout.decode()[-2000:], done.stderr.decode()[-2000:])
    principal = json.loads(json.loads(done.stdout)["content"][0]["text"])
    assert principal == [site.issuer, "erin", signed.client_id]
    # without it, the Inspector meets the 401 and wants to sign in (interactively, which a test is not)
    assert refused.returncode != 0, refused.stdout.decode()[-2000:]
    assert json.loads(refused.stderr)["error"]["code"] == "auth_required", refused.stderr.decode()[-2000:]
