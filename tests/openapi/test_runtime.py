"""`App.openapi` (issue 49): the FastAPI application of tests/openapi/api_app.py on uvicorn at
127.0.0.1, its `/openapi.json` served as tools at run time, with no generation step. The same
operations called through it and through the package `mcp-bindgen openapi` generates from the same
description give the same results: through this project's client in process, and through the
official SDK client over stdio at 2025-11-25 and 2026-07-28."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from mcp_bindings.openapi.errors import DescriptionError
from mcp_bindings.runtime.app import App
from tests.openapi.api_app import TOKEN
from tests.openapi.conftest import TOKEN_VAR
from tests.support import REPO_ROOT

pytestmark = pytest.mark.anyio

# (tool, arguments): pages, path + query + header parameters, an error with the API's message, a
# binary download, a path parameter holding `/` and a space, an argument outside its constraints.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("list_items", {"limit": 2, "offset": 2}),
    ("list_items", {}),
    ("get_item", {"item_id": 4, "currency": "NOK", "x-trace": "t-1"}),
    ("get_item", {"item_id": 99}),
    ("brew", {}),
    ("download", {"name": "logo.png"}),
    ("echo_path", {"value": "a/b c"}),
    ("big", {}),
    ("list_items", {"limit": 9}),
]


@pytest.fixture(scope="module")
def runtime_app(served: tuple[str, ModuleType]) -> Iterator[App]:
    url, _ = served
    yield App.openapi(f"{url}/openapi.json", name="inventory", env_prefix="INVENTORY")


def _dump(result: Any) -> dict[str, Any]:
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


def _as_sdk_writes(result: dict[str, Any]) -> dict[str, Any]:
    """A result as both clients dump it: the SDK writes `isError: false` out, a `resultType`, and at
    2026-07-28 the server's name in `_meta` (the generated package's is its package name)."""
    dropped = ("resultType", "_meta")
    return {k: v for k, v in result.items() if k not in dropped and not (k == "isError" and v is False)}


async def _results(app: Any, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], list[dict[str, Any]]]:
    async with app.test_client("2025-11-25") as client:
        tools = sorted(t.name for t in (await client.list_tools()).tools)
        return tools, [_dump(await client.call_tool(name=name, arguments=args)) for name, args in calls]


async def test_the_same_tools_and_answers_as_the_generated_package(
    served: tuple[str, ModuleType], runtime_app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, package = served
    monkeypatch.setenv(TOKEN_VAR, TOKEN)
    calls = [*CALLS, ("create_item", {"body": {"name": "lamp", "price": 12.5, "tags": ["new"]}})]
    generated_tools, generated = await _results(package.app, calls)
    tools, results = await _results(runtime_app, calls)
    assert tools == generated_tools and "get_item" in tools
    for (name, args), ours, theirs in zip(calls, results, generated, strict=True):
        assert ours == theirs, (name, args)
    assert results[2]["structuredContent"]["note"] == "NOK trace=t-1"
    assert results[3] == {
        "content": [{"type": "text", "text": "GET /items/{item_id} failed: HTTP 404 Not Found: no item 99"}],
        "isError": True,
    }
    assert results[6]["structuredContent"]["raw_path"] == "/echo/a%2Fb%20c"
    assert "9 is greater than the maximum of 5" in results[8]["content"][0]["text"]


async def test_the_input_and_output_schemas_are_the_descriptions(runtime_app: App) -> None:
    async with runtime_app.test_client("2026-07-28") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    get_item = tools["get_item"].input_schema.model_dump(by_alias=True, exclude_none=True)
    assert get_item["required"] == ["item_id"]
    assert get_item["properties"]["currency"]["pattern"] == "^[A-Z]{3}$"
    assert tools["get_item"].annotations is not None and tools["get_item"].annotations.read_only_hint is True
    output = tools["list_items"].output_schema
    assert output is not None and output.model_dump(by_alias=True)["properties"]["items"]["type"] == "array"
    assert tools["download"].output_schema is None  # binary: an embedded blob, no structured content


async def test_credentials_come_from_the_environment(runtime_app: App, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_VAR, raising=False)
    _, (result,) = await _results(runtime_app, [("create_item", {"body": {"name": "lamp", "price": 1}})])
    assert result["content"][0]["text"] == f"POST /items needs credentials: set {TOKEN_VAR}"


def test_a_description_it_cannot_serve_is_refused_naming_why(tmp_path: Any) -> None:
    with pytest.raises(DescriptionError, match=r"only https:// URLs, http:// URLs of this machine"):
        App.openapi("http://example.com/openapi.json")
    with pytest.raises(DescriptionError, match=r"OpenAPI description .*missing.json not found"):
        App.openapi(str(tmp_path / "missing.json"))


@pytest.mark.slow
def test_the_official_sdk_client_gets_the_same_answers_over_stdio(
    served: tuple[str, ModuleType], sdk_python: str
) -> None:
    url, package = served
    calls = CALLS[:-1]  # the SDK reports the last as the server wrote it too; its text is checked above
    done = subprocess.run(
        [
            sdk_python,
            str(REPO_ROOT / "tests" / "peers" / "sdk_openapi_client.py"),
            json.dumps(calls),
            "--",
            sys.executable,
            str(REPO_ROOT / "tests" / "openapi" / "openapi_server.py"),
            f"{url}/openapi.json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO_ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    reports = json.loads(done.stdout)
    import anyio

    tools, generated = anyio.run(_results, package.app, calls)
    for version in ("2025-11-25", "2026-07-28"):
        assert reports[version]["tools"] == tools, version
        for (name, _), ours, theirs in zip(calls, reports[version]["calls"], generated, strict=True):
            assert _as_sdk_writes(ours) == _as_sdk_writes(theirs), (version, name)
