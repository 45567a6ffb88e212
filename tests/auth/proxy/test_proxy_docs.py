"""docs/auth.md's OAuth proxy server runs as written (tests/docs/test_docs_guard.py type-checks it): saved as
server.py and started with the environment it reads, against the real OpenID provider, our MCP
client signs in through it (consent, the provider's login and consent) and calls its tool."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_bindings.runtime.auth import OAuthClientAuth
from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.v2026_07_28.client import Client
from mcp_bindings.v2026_07_28.models import TextContent
from tests.support import REPO_ROOT, announced_url
from tests.support.docs import block
from tests.support.oidc import FormSignIn, OidcProvider, free_port

from .conftest import DOCS_SERVER, Sockets

pytestmark = [pytest.mark.anyio, pytest.mark.interop]


async def test_the_proxy_snippet_signs_a_user_in(tmp_path: Path, sockets: Sockets, provider: OidcProvider) -> None:
    sock, base = sockets.take()
    sock.close()  # the server binds this port: the provider knows its callback URI
    server = tmp_path / "server.py"
    server.write_text(block(DOCS_SERVER, ["docs/auth.md"]))
    env = {
        **os.environ,
        "PUBLIC_URL": base,
        "OIDC_ISSUER": provider.issuer,
        "MCP_OAUTH_CLIENT_ID": provider.client_id,
        "MCP_OAUTH_CLIENT_SECRET": provider.client_secret,
    }
    log = tmp_path / "server.log"
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, str(server)], cwd=REPO_ROOT, env=env, stdout=out, stderr=out)
    try:
        announced_url(log, process)
        handler = FormSignIn(f"http://127.0.0.1:{free_port()}/callback", login="carol")
        auth = OAuthClientAuth(handler, client_name="Docs client")
        async with connect_http(f"{base}/mcp", Client, auth=auth, request_timeout=15) as client:
            result = await client.call_tool(name="whoami")
        content = result.content[0]
        assert isinstance(content, TextContent)
        principal = content.text
        await handler.aclose()
    finally:
        process.terminate()
        process.wait(10)
    issuer, subject, client_id = json.loads(principal)
    assert (issuer, subject) == (base, "carol") and client_id
