"""The notes server of docs/authoring.md ("Compared, with lifespan, a dependency, middleware, a mounted
app and auth", issue 32) written three times (docs/comparison/notes_app.py on this layer,
notes_fastmcp.py on FastMCP 4.2.3, notes_mcpserver.py on the official SDK's `MCPServer`), each in
its own library's venv, driven by the official SDK client (mcp==2.3.0, tests/peers/sdk_steps_client.py)
at 2025-11-25 and 2026-07-28, over stdio and Streamable HTTP (tests/peers/comparison_launcher.py on
uvicorn, 127.0.0.1). Every feature is observed from the client:

* lifespan: a note saved by one request is read by the next (the database the lifespan opened);
* dependency: the `by` parameter, resolved per request from the caller's token ("anonymous" on stdio);
* middleware: a call carrying "secret" is refused before the tool runs (-32602, naming the policy);
* mounted app: the sub-app's `words` is `text_words`;
* auth (HTTP): without a token, 401 naming the Protected Resource Metadata, which is served; with
  a JWT of the issuer (RS256, its JWKS served by the test), the subject reaches the tool.

What a peer cannot do is listed in KNOWN_FAILURES (that peer's, not ours) and xfails strictly.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.peers import contract_peers
from tests.peers.harness import PEERS
from tests.support import REPO_ROOT, bound_socket
from tests.support.http import serve_in_thread
from tests.support.pyright_snippet import strict_errors

pytestmark = pytest.mark.interop

SERVERS = {
    "ours": "docs/comparison/notes_app.py",
    "fastmcp": "docs/comparison/notes_fastmcp.py",
    "mcpserver": "docs/comparison/notes_mcpserver.py",
}
VERSIONS = ["2025-11-25", "2026-07-28"]
TRANSPORTS = ["stdio", "http"]
# (server, version, transport) -> what that peer cannot do (found by this test; strict xfail).
KNOWN_FAILURES: dict[tuple[str, str, str], str] = {}
CALLS = [
    *("--call", 'add={"title": "todo", "text": "buy milk and bread"}'),
    *("--call", 'read={"title": "todo"}'),
    *("--call", 'read={"title": "nothing"}'),
    *("--call", 'text_words={"text": "buy milk and bread"}'),
    *("--call", 'add={"title": "secret plan", "text": "x"}'),
]
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
JWKS = {"keys": [{**RSAAlgorithm.to_jwk(KEY.public_key(), as_dict=True), "kid": "k1", "alg": "RS256", "use": "sig"}]}


def python_of(which: str, sdk_python: str) -> str:
    if which == "ours":
        return sys.executable
    if which == "mcpserver":
        return sdk_python
    try:
        return str(contract_peers.fastmcp() / "bin" / "python")
    except contract_peers.Unavailable as exc:
        pytest.skip(f"FastMCP could not be installed: {exc}")


def token(issuer: str, resource: str) -> str:
    now = int(time.time())
    claims = {"iss": issuer, "aud": resource, "sub": "alice", "client_id": "notes-test", "scope": "notes"}
    return jwt.encode({**claims, "iat": now, "exp": now + 300}, KEY, algorithm="RS256", headers={"kid": "k1"})


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    """The token issuer's JWKS at <issuer>/jwks (the servers are configured with NOTES_ISSUER)."""
    web = Starlette(routes=[Route("/jwks", lambda request: JSONResponse(JWKS))])
    with serve_in_thread(web) as base:
        yield base


@contextlib.contextmanager
def http_server(python: str, path: str, env: dict[str, str], sock: socket.socket) -> Iterator[str]:
    """The launcher serving `path` on `sock` (bound by the test, listening, inherited: no port picked)."""
    launcher = str(PEERS / "comparison_launcher.py")
    process = subprocess.Popen(
        [python, launcher, str(REPO_ROOT / path), f"fd:{sock.fileno()}"],
        env={**os.environ, **env},
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        pass_fds=(sock.fileno(),),
    )
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                pytest.fail(f"{path} exited: {process.stderr.read()[-2000:] if process.stderr else ''}")
            try:
                httpx.get(f"{base}/", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    pytest.fail(f"{path} did not listen within 60 s")
                time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def sdk_report(argv: list[str]) -> dict[str, Any]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=180, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert "fatal" not in report, report.get("traceback")
    return report


def text_of(call: dict[str, Any]) -> str:
    assert "result" in call, call
    return str(call["result"]["content"][0]["text"])


def check(report: dict[str, Any], author: str) -> None:
    assert sorted(report["tools"]) == ["add", "read", "text_words"]
    add, read, missing, words, secret = report["calls"]
    assert text_of(add).startswith("saved todo by ") and author in text_of(add)  # the dependency
    assert text_of(read) == "buy milk and bread"  # the lifespan's database, shared by the requests
    assert missing["result"].get("isError") is True and "no note nothing" in text_of(missing)
    assert words["result"]["structuredContent"] == {"result": 4}  # the mounted app's tool
    assert secret["mcp_error"] == {"code": -32602, "message": "refused: no secrets in notes"}  # the middleware


def cases() -> list[Any]:
    out: list[Any] = []
    for which in SERVERS:
        for version in VERSIONS:
            for transport in TRANSPORTS:
                reason = KNOWN_FAILURES.get((which, version, transport))
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                out.append(pytest.param(which, version, transport, marks=marks, id=f"{which}-{version}-{transport}"))
    return out


@pytest.mark.parametrize(("which", "version", "transport"), cases())
def test_notes_server(which: str, version: str, transport: str, sdk_python: str, issuer: str) -> None:
    python = python_of(which, sdk_python)
    client = [sdk_python, str(PEERS / "sdk_steps_client.py"), "--version", version, *CALLS]
    if transport == "stdio":
        check(sdk_report([*client, "--", python, str(REPO_ROOT / SERVERS[which])]), "anonymous")
        return
    sock = bound_socket()
    sock.listen()
    resource = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    with sock, http_server(python, SERVERS[which], {"NOTES_ISSUER": issuer, "NOTES_URL": resource}, sock) as base:
        refused = httpx.post(resource, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=10)
        assert refused.status_code == 401
        challenge = refused.headers["www-authenticate"]
        assert challenge.startswith("Bearer") and "resource_metadata=" in challenge
        metadata_url = challenge.split('resource_metadata="', 1)[1].split('"', 1)[0]
        metadata = httpx.get(metadata_url, timeout=10).json()
        assert (
            metadata["resource"].rstrip("/") == resource and metadata["authorization_servers"][0].rstrip("/") == issuer
        )
        assert base in metadata_url
        report = sdk_report([*client, "--url", resource, "--bearer", token(issuer, resource)])
    check(report, "alice")


@pytest.mark.parametrize("which", list(SERVERS))
def test_notes_server_is_strict_clean(which: str, sdk_python: str, tmp_path: Path) -> None:
    """Each file passes pyright strict with its own library installed (its venv's packages)."""
    source = (REPO_ROOT / SERVERS[which]).read_text()
    assert strict_errors(tmp_path, source, python=python_of(which, sdk_python)) == []
