"""The whole sign-in in a real browser (headless Chromium over the DevTools pipe, as the MCP Apps test
drives it): our MCP client with `LoopbackAuthorizationHandler` opens the browser at the proxy's
authorization URL; the browser consents on the proxy's page, signs in and consents at the real OpenID
provider (`oidc-provider`), and comes back to the client's loopback listener. Two clients, two users,
each in its own browser profile: each client's tool call runs as its own user."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest

from mcp_bindings.runtime.auth import LoopbackAuthorizationHandler, OAuthClientAuth
from mcp_bindings.runtime.client.http import connect_http
from tests.peers.harness import client_module
from tests.support.browser import Browser, chromium_path
from tests.support.oidc import OidcProvider

from .conftest import Sockets, proxied, upstream_of

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


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_two_users_sign_in_in_a_browser(
    version: str, tmp_path: Path, sockets: Sockets, provider: OidcProvider
) -> None:
    chromium = chromium_path()
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium; .ci/run does)")
    async with proxied(sockets, upstream_of(provider)) as site:
        seen: dict[str, list[str]] = {}
        for login in ("alice", "bob"):
            browser = Browser(chromium, tmp_path / f"profile-{login}")  # a user each: no shared provider session

            handler = LoopbackAuthorizationHandler(timeout=60)
            handler.open_browser = driving(browser, login, handler.redirect_uri)
            auth = OAuthClientAuth(handler, client_name=f"{login}'s client")
            try:
                async with connect_http(site.mcp_url, client_module(version).Client, auth=auth) as client:
                    seen[login] = json.loads((await client.call_tool(name="whoami")).content[0].text)
                    again = json.loads((await client.call_tool(name="whoami")).content[0].text)
                    assert again == seen[login]  # the token is reused, no second sign-in
            finally:
                handler.close()
                browser.close()
    assert seen["alice"][:2] == [site.issuer, "alice"] and seen["bob"][:2] == [site.issuer, "bob"]
    assert seen["alice"][2] != seen["bob"][2]  # two registrations, two clients
