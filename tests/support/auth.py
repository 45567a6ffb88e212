"""The authorization tests' shared pieces: a stateless `tools/list` request, the echo call through
`OAuthClientAuth` (tests/auth/test_auth_flow.py and the machine-client tests), and a signing key,
its JWKS and tokens for the resource-server side."""

from __future__ import annotations

import time
from typing import Any

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm

from mcp_bindings.runtime.auth import OAuthClientAuth
from mcp_bindings.runtime.client.http import connect_http
from tests.peers.auth_harness import Stack
from tests.peers.harness import client_module

# -- the client side: our client through OAuthClientAuth ------------------------------------------

VERSIONS = ["2025-11-25", "2026-07-28"]
STATELESS_BODY = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/list",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    },
}
STATELESS_HEADERS = {
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/list",
    "Accept": "application/json, text/event-stream",
}


async def raw_list_tools(stack: Stack, auth: httpx.Auth) -> httpx.Response:
    """One stateless `tools/list` POST through a plain httpx client using `auth`."""
    async with httpx.AsyncClient(auth=auth, timeout=10) as http:
        return await http.post(stack.mcp_url, json=STATELESS_BODY, headers=STATELESS_HEADERS)


async def call_echo(stack: Stack, auth: OAuthClientAuth, version: str = "2026-07-28", text: str = "hi") -> str:
    async with connect_http(stack.mcp_url, client_module(version).Client, auth=auth, request_timeout=15) as client:
        result = await client.call_tool(name="echo", arguments={"text": text})
        return result.content[0].text


# -- the resource-server side: a signing key, its JWKS, tokens ------------------------------------

ISSUER = "https://as.example.com"
RESOURCE = "http://127.0.0.1:9100/mcp"
KEY = ec.generate_private_key(ec.SECP256R1())
JWKS = {"keys": [{**ECAlgorithm.to_jwk(KEY.public_key(), as_dict=True), "kid": "k1", "alg": "ES256", "use": "sig"}]}


def token(**overrides: Any) -> str:
    now = int(time.time())
    claims = {
        "iss": ISSUER,
        "aud": RESOURCE,
        "sub": "u",
        "client_id": "c",
        "scope": "mcp:read",
        "iat": now,
        "exp": now + 60,
    }
    headers = {"kid": overrides.pop("kid", "k1")}
    key = overrides.pop("key", KEY)
    algorithm = overrides.pop("algorithm", "ES256")
    claims.update(overrides)
    return jwt.encode({k: v for k, v in claims.items() if v is not None}, key, algorithm=algorithm, headers=headers)
