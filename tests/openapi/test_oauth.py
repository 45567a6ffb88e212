"""OAuth client credentials for the API behind an OpenAPI server (issue 49): tests/openapi/api_app.py's
`oauth` scheme (a `clientCredentials` flow, its token endpoint in the same application on uvicorn at
127.0.0.1). The generated package and `App.openapi` ask the token endpoint once with the client id
and secret from the environment, reuse the token, ask again once when the API answers 401, and
name the scheme, the endpoint's OAuth error and the variables where the secret is wrong."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

import httpx
import pytest

from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.app.openapi import Api, Scheme
from tests.openapi.api_app import CLIENT, ITEMS, OAUTH

pytestmark = pytest.mark.anyio

ID_VAR, SECRET_VAR = "INVENTORY_OAUTH_CLIENT_ID", "INVENTORY_OAUTH_CLIENT_SECRET"


@pytest.fixture
def apps(served: tuple[str, ModuleType]) -> Iterator[list[Any]]:
    """The generated package's app and an `App.openapi` one, each with no token cached yet."""
    url, package = served
    package.server.api.credentials["oauth"].forget()
    yield [package.app, App.openapi(f"{url}/openapi.json", name="inventory", env_prefix="INVENTORY")]


async def _count(app: Any) -> Any:
    async with app.test_client("2025-11-25") as client:
        return await client.call_tool(name="secure_count", arguments={})


async def test_a_token_is_asked_once_and_reused(apps: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ID_VAR, CLIENT[0])
    monkeypatch.setenv(SECRET_VAR, CLIENT[1])
    for app in apps:
        asked = len(OAUTH["scopes"])
        for _ in range(3):
            result = await _count(app)
            assert result.is_error is not True, result.content[0].text
            assert result.structured_content == {"items": len(ITEMS)}
        assert OAUTH["scopes"][asked:] == ["items:read"]  # one token request, the operation's scope


async def test_a_401_asks_for_a_new_token_once(apps: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ID_VAR, CLIENT[0])
    monkeypatch.setenv(SECRET_VAR, CLIENT[1])
    for app in apps:
        assert (await _count(app)).is_error is not True
        asked = len(OAUTH["scopes"])
        OAUTH["issued"].clear()  # the API no longer takes the tokens it gave (revoked)
        result = await _count(app)
        assert result.is_error is not True and len(OAUTH["scopes"]) == asked + 1


async def test_a_wrong_secret_is_a_clear_tool_error(
    served: tuple[str, ModuleType], apps: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = served
    monkeypatch.setenv(ID_VAR, CLIENT[0])
    monkeypatch.setenv(SECRET_VAR, "wrong")
    assert httpx.post(f"{url}/oauth/token", data={"grant_type": "client_credentials"}).status_code == 401
    for app in apps:
        result = await _count(app)
        assert result.is_error is True
        assert result.content[0].text == (
            f"OAuth client credentials for 'oauth' were refused by {url}/oauth/token "
            f"(HTTP 401: invalid_client client authentication failed); check {ID_VAR} and {SECRET_VAR}"
        )
    monkeypatch.delenv(SECRET_VAR)
    result = await _count(apps[1])
    assert result.content[0].text == f"GET /secure/count needs credentials: set {ID_VAR} and {SECRET_VAR}"


def test_a_token_url_in_clear_is_refused() -> None:
    scheme = Scheme("oauth2", ("ID", "SECRET"), token_url="http://auth.example.com/token")
    with pytest.raises(ValueError, match=r"token URL 'http://auth.example.com/token': an https URL is needed"):
        Api("https://api.example.com", {"oauth": scheme})
