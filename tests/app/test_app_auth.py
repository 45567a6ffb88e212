"""Auth in one argument (issue 32, item 5): `App(auth=Auth(...))` serves the app behind bearer auth
(JWTs of an issuer checked against its JWKS), with the Protected Resource Metadata served, the
scopes of every request and a tool's own (`@app.tool(scopes=[...])`: a 403 `insufficient_scope`
challenge naming them, step-up), and the principal in `ctx.principal`. On uvicorn at 127.0.0.1 with
our client at 2025-11-25 and 2026-07-28."""

from __future__ import annotations

import importlib
import json
from typing import Any

import httpx
import pytest

from mcp_bindings.runtime.app import App, Auth, Context
from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc.errors import McpError
from tests.support.auth import ISSUER, JWKS, RESOURCE, STATELESS_HEADERS, token
from tests.support.http import serve_in_thread

pytestmark = pytest.mark.anyio

VERSIONS = ["2025-11-25", "2026-07-28"]


def _client(version: str) -> Any:
    return importlib.import_module(f"{registry.load_version(version).__name__}.client").Client


def make_app() -> App:
    app = App("guarded", auth=Auth(resource=RESOURCE, issuer=ISSUER, jwks=JWKS, scopes=["mcp:read"]))

    @app.tool
    def whoami(ctx: Context) -> str:
        return ctx.principal.key if ctx.principal else "nobody"

    @app.tool(scopes=["mcp:admin"])
    def reset() -> str:
        return "reset"

    return app


@pytest.mark.parametrize("version", VERSIONS)
async def test_bearer_auth_scopes_and_principal(version: str) -> None:
    with serve_in_thread(make_app().asgi()) as base:
        url = f"{base}/mcp"
        async with httpx.AsyncClient() as http:
            refused = await http.post(url, json={}, headers=STATELESS_HEADERS)
            assert refused.status_code == 401
            challenge = refused.headers["www-authenticate"]
            assert 'resource_metadata="http://127.0.0.1:9100/.well-known/oauth-protected-resource/mcp"' in challenge
            metadata = (await http.get(f"{base}/.well-known/oauth-protected-resource/mcp")).json()
            assert metadata["resource"] == RESOURCE and metadata["authorization_servers"] == [ISSUER]
            assert metadata["scopes_supported"] == ["mcp:read", "mcp:admin"]

        reader = {"Authorization": f"Bearer {token(scope='mcp:read')}"}
        async with connect_http(url, _client(version), headers=reader, protocol_version=version) as client:
            principal = (await client.call_tool(name="whoami")).content[0].text
            assert json.loads(principal) == [ISSUER, "u", "c"]
            with pytest.raises(McpError):
                await client.call_tool(name="reset")  # needs mcp:admin too

        async with httpx.AsyncClient() as http:  # what that refusal is on the wire: a step-up challenge
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "reset"}}
            step_up = await http.post(url, json=call, headers={**STATELESS_HEADERS, **reader})
            assert step_up.status_code == 403
            assert 'error="insufficient_scope"' in step_up.headers["www-authenticate"]
            assert 'scope="mcp:read mcp:admin"' in step_up.headers["www-authenticate"]

        admin = {"Authorization": f"Bearer {token(scope='mcp:read mcp:admin')}"}
        async with connect_http(url, _client(version), headers=admin, protocol_version=version) as client:
            assert (await client.call_tool(name="reset")).content[0].text == "reset"


def test_auth_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="name the token issuer"):
        Auth(resource=RESOURCE)
    with pytest.raises(ValueError, match=r"Auth\(scopes='mcp:read'\) is one string"):
        Auth(resource=RESOURCE, issuer=ISSUER, scopes="mcp:read")


async def test_without_auth_there_is_no_principal() -> None:
    app = make_app()
    async with app.test_client() as client:  # in memory: no HTTP, no token
        assert (await client.call_tool(name="whoami")).content[0].text == "nobody"
