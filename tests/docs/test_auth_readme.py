"""The README's "A machine client in a few lines" runs as written: its Python block, in a fresh
interpreter, against the test authorization server and the echo MCP server on 127.0.0.1 (client
credentials with client_secret_basic), given only the three environment variables it reads.

The block is taken from README.md (the first ```python block after the heading)."""

from __future__ import annotations

import os
import re
import sys

import anyio
import pytest

from tests.peers.auth_harness import oauth_stack
from tests.peers.auth_server import AuthServerOptions
from tests.support import REPO_ROOT
from tests.support.docs import section

pytestmark = pytest.mark.anyio
HEADING = "A machine client in a few lines"


def readme_snippet() -> str:
    text = section(HEADING)
    match = re.search(r"```python\n(.*?)```", text, re.DOTALL)
    assert match is not None, f"the docs have the {HEADING!r} heading but no ```python block after it"
    return match.group(1)


async def test_the_machine_client_snippet_runs_as_written() -> None:
    options = AuthServerOptions(
        grant_types=("client_credentials",),
        registration="disabled",
        preregistered={
            "ci-job": {
                "client_id": "ci-job",
                "client_secret": "s3cret",
                "token_endpoint_auth_method": "client_secret_basic",
            }
        },
    )
    with anyio.fail_after(60):
        async with oauth_stack(options, stub="2025-11-25") as stack:
            env = {**os.environ, "MCP_URL": stack.mcp_url, "MCP_CLIENT_ID": "ci-job", "MCP_CLIENT_SECRET": "s3cret"}
            result = await anyio.run_process(
                [sys.executable, "-c", readme_snippet()], env=env, cwd=REPO_ROOT, check=False
            )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    assert "'echo'" in result.stdout.decode()
    (token_request,) = stack.auth.of("/token")
    assert token_request.params["grant_type"] == "client_credentials"
