"""The whole sign-in in a real browser (headless Chromium over the DevTools pipe, as the MCP Apps test
drives it): our MCP client with `LoopbackAuthorizationHandler` opens the browser at the proxy's
authorization URL; the browser consents on the proxy's page, signs in and consents at the real OpenID
provider (`oidc-provider`), and comes back to the client's loopback listener. Two clients, two users,
each in its own browser profile: each client's tool call runs as its own user."""

from __future__ import annotations

import json
import socket
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest

from mcp_bindings.runtime.auth import LoopbackAuthorizationHandler, OAuthClientAuth
from mcp_bindings.runtime.client.http import connect_http
from tests.peers.auth_harness import serve
from tests.peers.harness import client_module
from tests.peers.redis_server import RedisServer
from tests.support.browser import Browser, chromium_path
from tests.support.docs import block
from tests.support.oidc import OidcProvider
from tests.support.router import PathRouter
from tests.support.scaleout import Deployment

from .conftest import DOCS_SERVER, KEY, Sockets, proxied, upstream_of

pytestmark = [pytest.mark.anyio, pytest.mark.interop, pytest.mark.slow]

# One step of the sign-in on whatever page the browser shows: fill the login form, press the
# proxy's "Allow" or the provider's submit button, once per page; "done" once back at the client.
STEP = """(() => {
  if (location.href.startsWith(%(redirect)s)) return 'done';
  if (document.readyState !== 'complete' || window.__submitted) return '';
  const form = document.querySelector('form[method=post]');
  if (!form) return '';
  window.__submitted = true;
  const login = form.querySelector('[name=login]');
  if (login) { login.value = %(login)s; form.querySelector('[name=password]').value = 'any password'; }
  (form.querySelector('button[value=approve]') || form.querySelector('[type=submit]')).click();
  return 'submitted';
})()"""


def sign_in_with(browser: Browser, login: str, redirect_uri: str) -> None:
    """Drive `browser` (already at the authorization URL) until it is sent to `redirect_uri`."""
    script = STEP % {"redirect": json.dumps(redirect_uri), "login": json.dumps(login)}
    for _ in range(8):
        if browser.wait_for(script, timeout=20) == "done":
            return
    raise AssertionError(f"the browser did not reach {redirect_uri}: {browser.evaluate('location.href')}")


def driving(browser: Browser, login: str, redirect_uri: str) -> Callable[[str], Awaitable[None]]:
    """The handler's `open_browser`: the blocking browser steps, in a thread."""

    async def open_browser(url: str) -> None:
        def drive() -> None:
            browser.open(url)
            sign_in_with(browser, login, redirect_uri)

        await anyio.to_thread.run_sync(drive)

    return open_browser


async def two_users_sign_in(mcp_url: str, version: str, profiles: Path) -> dict[str, list[str]]:
    """alice and bob sign in, each in a browser of their own (no shared provider session) for a client
    of their own, and call `whoami` at `version`, then again after a refresh (forced: the token taken
    for expired); each user's principal as `whoami` answered."""
    chromium = chromium_path()
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium; .ci/run does)")
    seen: dict[str, list[str]] = {}
    for login in ("alice", "bob"):
        browser = Browser(chromium, profiles / f"profile-{login}")
        handler = LoopbackAuthorizationHandler(timeout=60)
        handler.open_browser = driving(browser, login, handler.redirect_uri)
        auth = OAuthClientAuth(handler, client_name=f"{login}'s client")
        try:
            async with connect_http(mcp_url, client_module(version).Client, auth=auth) as client:
                seen[login] = json.loads((await client.call_tool(name="whoami")).content[0].text)
                before = auth.tokens
                auth.refresh_skew = 10**9  # the next request refreshes first (no second sign-in: no browser)
                again = json.loads((await client.call_tool(name="whoami")).content[0].text)
                assert before is not None and auth.tokens is not None
                assert auth.tokens.refresh_token != before.refresh_token  # refreshed, and rotated
                assert again == seen[login]
        finally:
            handler.close()
            browser.close()
    assert seen["alice"][2] != seen["bob"][2]  # two registrations, two clients
    return seen


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_two_users_sign_in_in_a_browser(
    version: str, tmp_path: Path, sockets: Sockets, provider: OidcProvider
) -> None:
    async with proxied(sockets, upstream_of(provider)) as site:
        seen = await two_users_sign_in(site.mcp_url, version, tmp_path)
    assert seen["alice"][:2] == [site.issuer, "alice"] and seen["bob"][:2] == [site.issuer, "bob"]


# -- two workers sharing Redis ------------------------------------------------------------------------

# What the browser does goes to worker A; registration, tokens (code and refresh) and MCP to worker B.
ON_A = ("/authorize", "/consent", "/auth/callback")
METADATA = "/.well-known/oauth-authorization-server"


@dataclass
class TwoWorkers:
    public: socket.socket  # the load balancer's socket: the origin the users and clients see
    base: str
    workers: dict[str, str]  # "A" / "B" -> the worker's own base URL


@pytest.fixture(scope="module")
def two_workers(
    sockets: Sockets, provider: OidcProvider, redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TwoWorkers]:
    """docs/auth.md's proxied server, as written, on two worker processes (`uvicorn --factory
    server:app.asgi`, each on a socket of its own) sharing a private redis-server: the 3 lines of
    settings, and the environment of several workers (`MCP_REDIS_URL`, `MCP_OAUTH_PROXY_KEY`)."""
    public, base = sockets.take()  # the provider knows <base>/auth/callback
    folder = tmp_path_factory.mktemp("workers")
    (folder / "server.py").write_text(block(DOCS_SERVER, ["docs/auth.md"]))
    env = {
        "PUBLIC_URL": base,
        "OIDC_ISSUER": provider.issuer,
        "MCP_OAUTH_CLIENT_ID": provider.client_id,
        "MCP_OAUTH_CLIENT_SECRET": provider.client_secret,
        "MCP_OAUTH_PROXY_KEY": KEY,
    }
    command = [sys.executable, "-m", "uvicorn", "--factory", "server:app.asgi", "--app-dir", str(folder)]
    command += ["--fd", "{fd}", "--log-level", "warning"]
    running: dict[str, Worker] = {}
    try:
        for name in ("A", "B"):
            running[name] = Worker(command, redis_server.url, folder / f"worker-{name}.log", env)
        for worker in running.values():
            worker.wait_until_ready()
        yield TwoWorkers(public, base, {name: worker.base for name, worker in running.items()})
    finally:
        for worker in running.values():
            worker.stop()
        public.close()


class Worker(Deployment):
    """One process running `command` on a socket of its own (a `Deployment` of one)."""

    def __init__(self, command: list[str], redis_url: str, log: Path, env: dict[str, str]) -> None:
        self.start(command, redis_url, log, extra_env=env)

    def wait_until_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"the worker exited: {self.log.read_text()[-2000:]}")
            try:
                # (/readyz is behind the bearer check: the proxy's metadata says the worker serves)
                if httpx.get(self.base + METADATA, timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        pytest.fail(f"the worker was not ready within {timeout} s: {self.log.read_text()[-2000:]}")


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_two_users_sign_in_on_two_workers_sharing_redis(
    version: str, tmp_path: Path, two_workers: TwoWorkers
) -> None:
    router = PathRouter(two_workers.workers, dict.fromkeys(ON_A, "A"), default="B")
    try:
        async with serve(router, two_workers.public.dup()):
            seen = await two_users_sign_in(f"{two_workers.base}/mcp", version, tmp_path)
    finally:
        await router.aclose()
    assert seen["alice"][:2] == [two_workers.base, "alice"] and seen["bob"][:2] == [two_workers.base, "bob"]
    on = {name: [path for path, worker in router.served if worker == name] for name in ("A", "B")}
    assert set(on["A"]) == set(ON_A)  # each user's browser went through A: authorize, consent, callback
    assert {"/register", "/token", "/mcp"} <= set(on["B"])
    assert on["B"].count("/token") >= 4  # per user: the code's exchange and the refresh
