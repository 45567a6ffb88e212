"""The typed principal and per-user visibility as the docs show them, run as written and checked by
pyright strict: docs/auth.md's app served on 127.0.0.1 behind the test authorization server's keys
(tokens with and without the admin scope and the support group), and docs/authoring.md's in-memory
snippet (no principal: the scoped tool hidden, its call refused naming the scope)."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx
import jwt
import pytest

from mcp_bindings.runtime.auth.challenge import parse_challenges
from mcp_bindings.runtime.client.http import connect_http
from tests.peers.auth_harness import bind_local, serve
from tests.peers.auth_server import AuthServer
from tests.peers.harness import client_module
from tests.support import REPO_ROOT
from tests.support.docs import block
from tests.support.pyright_snippet import strict_errors

LIMIT = 60
AUTH_DOC = "@app.tool(allow=support_staff)  # listed to, and callable by, the support group only"
AUTHORING_DOC = "async with app.test_client() as client:  # in memory: nobody is authenticated"
AUTHORING_PRINTS = [
    "['balance']",
    "-32602 {'error': 'insufficient_scope', 'scope': 'accounts:write', 'missing': ['accounts:write']}",
]


def signed(auth: AuthServer, resource: str, scope: str, groups: Sequence[str]) -> str:
    now = math.floor(time.time())
    claims = {"iss": auth.issuer, "aud": resource, "sub": "ann", "client_id": "cli", "scope": scope}
    claims |= {"groups": list(groups), "iat": now, "exp": now + 300}
    return jwt.encode(claims, auth.key, algorithm="ES256", headers={"kid": auth.kid})


@pytest.mark.anyio
async def test_the_auth_page_app_lists_and_refuses_per_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    as_sock, as_url = bind_local()
    rs_sock, rs_url = bind_local()
    auth = AuthServer(as_url)
    resource = rs_url + "/mcp"
    monkeypatch.setenv("MCP_RESOURCE", resource)
    monkeypatch.setenv("MCP_ISSUER", auth.issuer)
    monkeypatch.setenv("MCP_JWKS_URI", auth.jwks_uri)
    namespace: dict[str, Any] = {"__name__": "auth_docs_snippet"}
    exec(compile(block(AUTH_DOC, ["docs/auth.md"]), "docs/auth.md", "exec"), namespace)
    client_cls = client_module("2025-11-25").Client
    reader = signed(auth, resource, "accounts:read", [])
    admin = signed(auth, resource, "accounts:read accounts:admin", ["support"])
    seen: dict[str, tuple[list[str], list[str], str]] = {}
    with anyio.fail_after(LIMIT):
        async with AsyncExitStack() as exits:
            await exits.enter_async_context(serve(auth.app, as_sock))
            await exits.enter_async_context(serve(namespace["app"].asgi(), rs_sock))
            for who, bearer in (("reader", reader), ("admin", admin)):
                headers = {"Authorization": f"Bearer {bearer}"}
                async with connect_http(resource, client_cls, headers=headers) as client:
                    tools = sorted(t.name for t in (await client.list_tools()).tools)
                    resources = [r.uri for r in (await client.list_resources()).resources]
                    whoami = (await client.call_tool(name="whoami")).content[0].text
                    seen[who] = (tools, resources, whoami)
            async with httpx.AsyncClient(timeout=10) as http:
                call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "close_account"}}
                accept = {"Accept": "application/json, text/event-stream"}
                refused = await http.post(resource, json=call, headers={**accept, "Authorization": f"Bearer {reader}"})
    assert seen["reader"] == (["whoami"], [], "ann via cli, scopes accounts:read")
    assert seen["admin"] == (
        ["close_account", "unlock_account", "whoami"],
        ["accounts://audit"],
        "ann via cli, scopes accounts:admin accounts:read",
    )
    assert refused.status_code == 403
    (challenge,) = parse_challenges(refused.headers["www-authenticate"])
    assert challenge.error == "insufficient_scope" and challenge.scopes == ["accounts:read", "accounts:admin"]


def test_the_authoring_snippet_runs_as_written() -> None:
    code = textwrap.dedent(block(AUTHORING_DOC, ["docs/authoring.md"]))
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == AUTHORING_PRINTS


@pytest.mark.parametrize("marker, page", [(AUTH_DOC, "docs/auth.md"), (AUTHORING_DOC, "docs/authoring.md")])
def test_the_snippets_are_strict_clean(marker: str, page: str, tmp_path: Path) -> None:
    assert strict_errors(tmp_path, textwrap.dedent(block(marker, [page]))) == []
