"""multipart/form-data and application/x-www-form-urlencoded request bodies (issue 49): FastAPI's
`UploadFile` and `Form` parameters (tests/openapi/api_app.py's `/upload` and `/search`) as a tool's
`body` argument, each file part a `{content (base64), name?, mimeType?}` object, sent as a real
multipart (or form) request by the generated package and by `App.openapi`; what the API received is
what a direct upload (or form post) gives it."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import httpx
import pytest

from mcp_bindings.runtime.app import App

pytestmark = pytest.mark.anyio

MAIN, EXTRA = b"\x00\x01binary\r\n--not-a-boundary\xff" * 50, "h\u00e9llo".encode()
BODY = {
    "file": {"content": base64.b64encode(MAIN).decode(), "name": "main.bin", "mimeType": "application/x-thing"},
    "note": "two files",
    "extra": [{"content": base64.b64encode(EXTRA).decode(), "name": "caf\u00e9.txt", "mimeType": "text/plain"}],
    "tags": ["a", "b"],
}


@pytest.fixture(scope="module")
def runtime_app(served: tuple[str, ModuleType]) -> Iterator[App]:
    url, _ = served
    yield App.openapi(f"{url}/openapi.json", name="inventory", env_prefix="INVENTORY")


async def _call(app: Any, arguments: dict[str, Any]) -> Any:
    async with app.test_client("2025-11-25") as client:
        return await client.call_tool(name="upload", arguments=arguments)


def _direct(url: str) -> dict[str, Any]:
    files = [("file", ("main.bin", MAIN, "application/x-thing")), ("extra", ("caf\u00e9.txt", EXTRA, "text/plain"))]
    answer = httpx.post(f"{url}/upload", data={"note": "two files", "tags": ["a", "b"]}, files=files)
    assert answer.status_code == 200, answer.text
    return answer.json()


async def test_files_and_fields_reach_the_api_as_a_direct_upload(
    served: tuple[str, ModuleType], runtime_app: App
) -> None:
    url, package = served
    direct = _direct(url)
    assert direct["files"][0]["size"] == len(MAIN) and direct["tags"] == ["a", "b"]
    for app in (package.app, runtime_app):
        result = await _call(app, {"body": BODY})
        assert result.is_error is not True, result.content[0].text
        assert result.structured_content == direct


async def test_the_input_schema_says_what_a_file_is(runtime_app: App) -> None:
    async with runtime_app.test_client("2026-07-28") as client:
        (tool,) = [t for t in (await client.list_tools()).tools if t.name == "upload"]
    schema = tool.input_schema.model_dump(by_alias=True, exclude_none=True)
    assert schema["required"] == ["body"]
    (part,) = [d for name, d in schema["$defs"].items() if name.startswith("FilePart")]
    assert part["required"] == ["content"] and set(part["properties"]) == {"content", "name", "mimeType"}


async def test_defaults_and_bad_parts_are_clear(served: tuple[str, ModuleType], runtime_app: App) -> None:
    _, package = served
    plain = {"file": {"content": base64.b64encode(b"x").decode()}, "note": "n"}
    for app in (package.app, runtime_app):
        result = await _call(app, {"body": plain})
        (received,) = result.structured_content["files"]  # the part's name and octet-stream by default
        assert (received["filename"], received["type"], received["size"]) == ("file", "application/octet-stream", 1)
        bad = await _call(app, {"body": {"file": {"content": "not base64!"}, "note": "n"}})
        assert bad.is_error is True and bad.content[0].text == "part 'file': content: not base64"
        hostile = {"file": {"content": "eA==", "name": 'a"\r\nX-Injected: 1'}, "note": "n"}
        bad = await _call(app, {"body": hostile})
        assert bad.is_error is True and "a value holding CR, LF or NUL is refused" in bad.content[0].text


async def test_an_urlencoded_form_sends_an_array_as_repeated_fields(
    served: tuple[str, ModuleType], runtime_app: App
) -> None:
    url, package = served
    direct = httpx.post(f"{url}/search", data={"q": "lamp & co", "tags": ["a", "b"]}).json()
    assert direct == {"q": "lamp & co", "tags": ["a", "b"]}
    for app in (package.app, runtime_app):
        async with app.test_client("2025-11-25") as client:
            result = await client.call_tool(name="search_form", arguments={"body": direct})
        assert result.structured_content == direct
