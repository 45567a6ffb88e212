"""A real OpenID provider for the OAuth proxy tests (tests/auth/proxy/): the npm `oidc-provider`
package (9.13.3, a certified implementation) installed into `.cache/oidc-provider` with the Node.js
that `scripts/conformance --setup-only` installs (as the browser tests' packages are), started on
127.0.0.1 by `OidcProvider`; and `FormSignIn`, an `AuthorizationHandler` that signs in through HTML
forms with plain httpx (the proxy's consent page, the provider's development login and consent
pages), following redirects until the one to the client's redirect URI."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx

from mcp_bindings.runtime.auth.handlers import AuthorizationResponse, matches_redirect_uri
from tests.support import REPO_ROOT, bound_socket, cache_lock, stop
from tests.support.browser import _npm, node_path  # pyright: ignore[reportPrivateUsage]

OIDC_CACHE = REPO_ROOT / ".cache" / "oidc-provider"
PACKAGE = ("oidc-provider", "9.13.3")
SCRIPT = REPO_ROOT / "tests" / "peers" / "oidc_provider.mjs"


def install_oidc_provider() -> Path:
    """The package's folder (installed first if need be)."""
    package, version = PACKAGE
    manifest = OIDC_CACHE / "node_modules" / package / "package.json"
    with cache_lock(OIDC_CACHE):
        if not manifest.is_file() or json.loads(manifest.read_text())["version"] != version:
            _npm(OIDC_CACHE, [f"{package}@{version}"])
    return manifest.parent


def free_port() -> int:
    """A port for a redirect URI that nothing listens on (the sign-in stops at the redirect): only
    its number is used, never bound by a server."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class OidcProvider:
    """`oidc-provider` on 127.0.0.1 with one confidential client (`client_id`, `client_secret`) whose
    redirect URIs are `redirect_uris`; `issuer` once started."""

    def __init__(
        self, redirect_uris: list[str], client_id: str = "mcp-proxy", client_secret: str = "proxy-secret"
    ) -> None:
        self.redirect_uris = redirect_uris
        self.client_id = client_id
        self.client_secret = client_secret
        # Bound here once and inherited by the provider (never picked, closed and bound again).
        self.socket = bound_socket()
        self.port = int(self.socket.getsockname()[1])
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> None:
        install_oidc_provider()
        script = OIDC_CACHE / SCRIPT.name  # beside node_modules, so `import 'oidc-provider'` resolves
        script.write_text(SCRIPT.read_text())
        argv = [
            str(node_path()),
            str(script),
            str(self.port),
            str(self.socket.fileno()),
            self.client_id,
            self.client_secret,
            ",".join(self.redirect_uris),
        ]
        log = OIDC_CACHE / f"provider-{self.port}.log"
        with log.open("w") as out:
            self.socket.listen()
            self.process = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, text=True, pass_fds=(self.socket.fileno(),)
            )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"oidc-provider exited: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.issuer}/.well-known/openid-configuration").status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"oidc-provider did not answer its discovery document: {log.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process, grace=5)
            self.process = None
        self.socket.close()


class _Forms(HTMLParser):
    """The forms of a page: (action, method, fields), buttons included as (name, value) pairs."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append({"action": found.get("action", ""), "method": found.get("method", "get"), "fields": []})
        elif tag in ("input", "button") and self.forms and found.get("name"):
            self.forms[-1]["fields"].append((found.get("type", ""), found["name"], found.get("value", "")))


def forms_of(html: str) -> list[dict[str, Any]]:
    parser = _Forms()
    parser.feed(html)
    return parser.forms


class FormSignIn:
    """Signs in as `login` through HTML forms (see the module docstring): the proxy's consent page is
    answered `decision` ("approve" or "deny"); `pages` keeps each HTML page met (for the assertions)."""

    def __init__(self, redirect_uri: str, login: str = "alice", decision: str = "approve") -> None:
        self._redirect_uri = redirect_uri
        self.login = login
        self.decision = decision
        self.pages: list[str] = []
        self.http = httpx.AsyncClient(timeout=15, follow_redirects=False)

    @property
    def redirect_uri(self) -> str:
        return self._redirect_uri

    async def authorize(self, authorization_url: str) -> AuthorizationResponse:
        response = await self.http.get(authorization_url)
        for _ in range(20):
            location = response.headers.get("location")
            if response.is_redirect and location:
                url = urljoin(str(response.url), location)
                if matches_redirect_uri(url, self._redirect_uri):
                    return AuthorizationResponse.from_url(url)
                response = await self.http.get(url)
                continue
            if response.status_code != 200:
                raise AssertionError(f"sign-in stopped at HTTP {response.status_code}: {response.text[:500]}")
            self.pages.append(response.text)
            response = await self._submit(response)
        raise AssertionError("sign-in did not reach the redirect URI")

    async def _submit(self, page: httpx.Response) -> httpx.Response:
        form = next(f for f in forms_of(page.text) if f["method"].lower() == "post")
        data: dict[str, str] = {}
        for kind, name, value in form["fields"]:
            if name == "decision":
                data[name] = self.decision
            elif name == "login":
                data[name] = self.login
            elif name == "password":
                data[name] = "any password"
            elif kind != "submit" and name not in data:
                data[name] = value
        return await self.http.post(urljoin(str(page.url), form["action"]), data=data)

    async def aclose(self) -> None:
        await self.http.aclose()
