"""End to end against a real API (issue 49): a FastAPI application on uvicorn at 127.0.0.1, its own
`/openapi.json` the generator's input; the generated server, driven by this project's client, gets
the same answers as the API called directly (path, query, header and JSON body parameters, bearer
auth, pagination, an error, a binary download, a rate limit retried)."""

from __future__ import annotations

import base64
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from tests.openapi.api_app import PNG, TOKEN
from tests.openapi.conftest import TOKEN_VAR

pytestmark = pytest.mark.anyio


async def _call(package: ModuleType, tool: str, arguments: dict[str, Any]) -> Any:
    async with package.app.test_client("2025-11-25") as client:
        return await client.call_tool(name=tool, arguments=arguments)


async def test_lists_one_tool_per_operation(served: tuple[str, ModuleType]) -> None:
    _, package = served
    async with package.app.test_client("2026-07-28") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {
        "list_items",
        "create_item",
        "get_item",
        "brew",
        "download",
        "limited",
        "echo_path",
        "away",
        "home",
        "big",
        "upload",
        "secure_count",
        "search_form",
    }
    get_item = tools["get_item"].input_schema.model_dump(by_alias=True, exclude_none=True)
    assert get_item["required"] == ["item_id"]
    assert get_item["properties"]["currency"] == {"default": "EUR", "pattern": "^[A-Z]{3}$", "type": "string"}
    assert "x-trace" in get_item["properties"]  # the header's wire name
    limit = tools["list_items"].input_schema.model_dump(by_alias=True)["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"]) == (1, 5)
    assert tools["get_item"].annotations is not None and tools["get_item"].annotations.read_only_hint is True


async def test_pages_as_the_api_gives_them(served: tuple[str, ModuleType]) -> None:
    url, package = served
    offset: int | None = 0
    pages = 0
    while offset is not None:
        direct = httpx.get(f"{url}/items", params={"limit": 2, "offset": offset}).json()
        result = await _call(package, "list_items", {"limit": 2, "offset": offset})
        assert result.is_error is not True and result.structured_content == direct
        offset, pages = direct["next_offset"], pages + 1
    assert pages == 4


async def test_path_query_and_header_parameters(served: tuple[str, ModuleType]) -> None:
    url, package = served
    direct = httpx.get(f"{url}/items/4", params={"currency": "NOK"}, headers={"x-trace": "t-1"}).json()
    result = await _call(package, "get_item", {"item_id": 4, "currency": "NOK", "x-trace": "t-1"})
    assert result.structured_content == direct
    assert direct["note"] == "NOK trace=t-1"


async def test_an_error_is_a_tool_error_with_the_status_and_message(served: tuple[str, ModuleType]) -> None:
    url, package = served
    assert httpx.get(f"{url}/items/99").status_code == 404
    result = await _call(package, "get_item", {"item_id": 99})
    assert result.is_error is True
    assert result.content[0].text == "GET /items/{item_id} failed: HTTP 404 Not Found: no item 99"
    result = await _call(package, "brew", {})
    assert result.content[0].text == "GET /teapot failed: HTTP 418 I'm a teapot: I refuse to brew coffee"


async def test_bearer_auth_from_the_environment(
    served: tuple[str, ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, package = served
    body = {"name": "lamp", "price": 12.5, "tags": ["new"]}
    monkeypatch.delenv(TOKEN_VAR, raising=False)
    result = await _call(package, "create_item", {"body": body})
    assert result.is_error is True and result.content[0].text == f"POST /items needs credentials: set {TOKEN_VAR}"
    monkeypatch.setenv(TOKEN_VAR, "wrong")
    result = await _call(package, "create_item", {"body": body})
    assert result.content[0].text.startswith("POST /items failed: HTTP 401 Unauthorized: a valid bearer token")
    monkeypatch.setenv(TOKEN_VAR, TOKEN)
    direct = httpx.post(f"{url}/items", json=body, headers={"Authorization": f"Bearer {TOKEN}"})
    result = await _call(package, "create_item", {"body": body})
    assert direct.status_code == 201 and result.structured_content == direct.json()
    readme = (Path(str(package.__file__)).parents[2] / "README.md").read_text()
    assert f"`{TOKEN_VAR}`" in readme  # the README names the variable


async def test_a_binary_download_is_an_embedded_blob(served: tuple[str, ModuleType]) -> None:
    url, package = served
    assert httpx.get(f"{url}/files/logo.png").content == PNG
    result = await _call(package, "download", {"name": "logo.png"})
    resource = result.content[0].resource
    assert resource.mime_type == "image/png" and base64.b64decode(resource.blob) == PNG
    assert resource.uri == f"{url}/files/logo.png"


async def test_a_429_is_retried_after_its_retry_after(served: tuple[str, ModuleType]) -> None:
    url, package = served
    assert httpx.get(f"{url}/limited/direct").status_code == 429
    result = await _call(package, "limited", {"key": "tool"})
    assert result.is_error is not True and result.structured_content == {"attempts": 2}


async def test_arguments_are_checked_against_the_parameters_constraints(served: tuple[str, ModuleType]) -> None:
    _, package = served
    result = await _call(package, "list_items", {"limit": 9})
    assert result.is_error is True and "9 is greater than the maximum of 5" in result.content[0].text
    result = await _call(package, "get_item", {"item_id": 1, "currency": "euro"})
    assert result.is_error is True and "does not match '^[A-Z]{3}$'" in result.content[0].text
