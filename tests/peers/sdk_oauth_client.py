"""The official MCP Python SDK (mcp==2.3.0) client signing in through an OAuth proxy with the SDK's own
`OAuthClientProvider` (discovery, Dynamic Client Registration, PKCE, the token request), its user
agent scripted: the pages the authorization URL leads to (the proxy's consent page, the provider's
login and consent pages, all plain HTML forms) are submitted in turn, as `login`, until the redirect
to the client's redirect URI, whose code and state the provider's callback handler returns. Then
`whoami`. Runs in the SDK's venv; prints one JSON report.

    <sdk-python> tests/peers/sdk_oauth_client.py --url http://127.0.0.1:PORT/mcp --login alice
"""

from __future__ import annotations

import argparse
import json
import traceback
import warnings
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx2
import mcp_types as types
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl

warnings.simplefilter("ignore")

# Nothing listens here: the scripted user agent stops at the redirect and hands its query over.
REDIRECT_URI = "http://127.0.0.1:33418/callback"


class MemoryStorage:
    """The provider's `TokenStorage`, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class PostForm(HTMLParser):
    """A page's first POST form: its action and its named inputs and buttons (kind, name, value)."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: list[tuple[str, str, str]] = []
        self.inside = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "form" and self.action is None and found.get("method", "").lower() == "post":
            self.action, self.inside = found.get("action", ""), True
        elif tag in ("input", "button") and self.inside and found.get("name"):
            self.fields.append((found.get("type", ""), found["name"], found.get("value", "")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.inside = False


class ScriptedUserAgent:
    """The user at the browser: approves the proxy's consent, signs in as `login` at the provider."""

    def __init__(self, login: str) -> None:
        self.login = login
        self.http = httpx2.AsyncClient(follow_redirects=False, timeout=20)
        self.answer: AuthorizationCodeResult | None = None
        self.pages = 0

    async def open(self, url: str) -> None:
        """The provider's `redirect_handler`: from the authorization URL to the redirect URI."""
        response = await self.http.get(url)
        for _ in range(20):
            location = response.headers.get("location")
            if response.is_redirect and location:
                target = urljoin(str(response.url), location)
                if target.startswith(REDIRECT_URI):
                    query = {k: v[0] for k, v in parse_qs(urlsplit(target).query).items()}
                    if "code" not in query:
                        raise RuntimeError(f"the sign-in came back without a code: {query}")
                    state, iss = query.get("state"), query.get("iss")  # iss: RFC 9207, checked by the SDK
                    self.answer = AuthorizationCodeResult(code=query["code"], state=state, iss=iss)
                    return
                response = await self.http.get(target)
            elif response.status_code == 200:
                self.pages += 1
                response = await self.submit(response)
            else:
                raise RuntimeError(f"the sign-in stopped at HTTP {response.status_code}: {response.text[:500]}")
        raise RuntimeError("the sign-in did not reach the redirect URI")

    async def submit(self, page: Any) -> Any:
        form = PostForm()
        form.feed(page.text)
        if form.action is None:
            raise RuntimeError(f"no form on {page.url}: {page.text[:300]}")
        typed = {"decision": "approve", "login": self.login, "password": "any password"}
        data: dict[str, str] = {}
        for kind, name, value in form.fields:
            if name in typed:
                data[name] = typed[name]
            elif kind != "submit" and name not in data:
                data[name] = value
        return await self.http.post(urljoin(str(page.url), form.action), data=data)

    async def callback(self) -> AuthorizationCodeResult:
        """The provider's `callback_handler`: what the redirect carried."""
        assert self.answer is not None
        return self.answer


async def run(url: str, login: str) -> dict[str, Any]:
    report: dict[str, Any] = {}
    storage = MemoryStorage()
    agent = ScriptedUserAgent(login)
    metadata = OAuthClientMetadata(client_name=f"{login}'s official SDK client", redirect_uris=[AnyUrl(REDIRECT_URI)])
    auth = OAuthClientProvider(url, metadata, storage, redirect_handler=agent.open, callback_handler=agent.callback)
    http = httpx2.AsyncClient(auth=auth, timeout=30)
    try:
        async with (
            http,
            streamable_http_client(url, http_client=http) as (read_stream, write_stream),
            ClientSession(
                read_stream, write_stream, client_info=types.Implementation(name="sdk-oauth-client", version="2.3.0")
            ) as session,
        ):
            report["initialize"] = (await session.initialize()).protocol_version
            result = await session.call_tool("whoami", {})
            report["whoami"] = result.content[0].text  # type: ignore[union-attr]
    except Exception as exc:  # noqa: BLE001 - reported to the test
        report["error"] = {"error": repr(exc), "traceback": traceback.format_exc()}
    finally:
        await agent.http.aclose()
    report["pages"] = agent.pages
    report["client_id"] = storage.client.client_id if storage.client is not None else None
    report["token_type"] = storage.tokens.token_type if storage.tokens is not None else None
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--login", default="alice")
    args = parser.parse_args()
    print(json.dumps(anyio.run(run, args.url, args.login)))


if __name__ == "__main__":
    main()
