"""Small descriptions with their expected output, readable as specifications: for each fixture
(OpenAPI 3.0 YAML, Swagger 2.0 JSON converted, OpenAPI 3.1), `fixtures/expected/<name>.json` holds
the tools the generated server lists (names, descriptions, input and output schemas, annotations),
and the requests below show what a call sends on the wire.

`OPENAPI_UPDATE_EXPECTED=1` rewrites the expected files from what is generated now (then review
the diff: it is the change of behaviour)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from mcp_bindings.runtime.app.openapi import Api
from tests.openapi.conftest import CASES, FIXTURES, generate

pytestmark = pytest.mark.anyio
Load = Callable[[Path, str], ModuleType]


async def _listed(package: ModuleType) -> list[dict[str, Any]]:
    async with package.app.test_client("2025-11-25") as client:
        tools = (await client.list_tools()).tools
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


@pytest.mark.parametrize("case", sorted(CASES))
async def test_the_tools_are_as_expected(case: str, tmp_path: Path, load_package: Load) -> None:
    name = generate(FIXTURES / CASES[case], tmp_path, name=f"fixture_{case}")
    package = load_package(tmp_path, name)
    listed = {"tools": await _listed(package), "readme": _left_out(tmp_path / "README.md")}
    expected_file = FIXTURES / "expected" / f"{case}.json"
    if os.environ.get("OPENAPI_UPDATE_EXPECTED"):
        expected_file.parent.mkdir(exist_ok=True)
        expected_file.write_text(json.dumps(listed, indent=2, ensure_ascii=False) + "\n")
    assert listed == json.loads(expected_file.read_text())


def _left_out(readme: Path) -> list[str]:
    """The README's credentials table and the operations it says were left out."""
    return [line for line in readme.read_text().splitlines() if line.startswith(("| `", "- `"))]


class Wire:
    """An httpx transport that records each request and answers from a table."""

    def __init__(self, answer: httpx.Response) -> None:
        self.requests: list[httpx.Request] = []
        self.answer = answer

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answer
        return httpx.Response(answer.status_code, headers=answer.headers, content=answer.read())

    def api(self, package: ModuleType, **environ: str) -> Api:
        ops = package.operations
        return Api(ops.BASE_URL, ops.SCHEMES, environ=environ, transport=httpx.MockTransport(self))


async def test_petstore_requests(tmp_path: Path, load_package: Load) -> None:
    package = load_package(tmp_path, generate(FIXTURES / "petstore.yaml", tmp_path, name="fixture_wire_pets"))
    ops = package.operations
    wire = Wire(httpx.Response(200, json=[{"id": 1, "name": "Rex", "extra": True}]))
    api = wire.api(package, FIXTURE_WIRE_PETS_API_KEY="k1")
    pets = await api.call(ops.list_pets, {"limit": 5, "tags": ["a", "b c"]})
    (request,) = wire.requests
    assert str(request.url) == "https://eu.pets.example.com/v1/pets?limit=5&tags=a%2Cb+c"
    assert request.headers["X-API-Key"] == "k1" and request.headers["Accept"] == "application/json"
    assert pets[0].name == "Rex" and pets[0].model_dump(by_alias=True) == {"id": 1, "name": "Rex", "extra": True}
    wire.answer = httpx.Response(201, json={"id": 2, "name": "Tom"})
    await api.call(ops.create_pet, {"body": package.models.NewPet(name="Tom")})
    assert wire.requests[-1].content == b'{"name":"Tom"}'  # what was set, no nulls for what was not
    assert wire.requests[-1].headers["Content-Type"] == "application/json"


async def test_swagger2_requests(tmp_path: Path, load_package: Load) -> None:
    package = load_package(tmp_path, generate(FIXTURES / "swagger2.json", tmp_path, name="fixture_wire_books"))
    ops = package.operations
    wire = Wire(httpx.Response(200, json=[]))
    basic = wire.api(package, FIXTURE_WIRE_BOOKS_BASIC_AUTH_USERNAME="ann", FIXTURE_WIRE_BOOKS_BASIC_AUTH_PASSWORD="pw")
    await basic.call(ops.books_search, {"q": "dune", "lang": ["en", "fr"]})
    assert str(wire.requests[-1].url) == "https://library.example.org/api/books?q=dune&lang=en&lang=fr"
    assert wire.requests[-1].headers["Authorization"] == "Basic YW5uOnB3"
    key = wire.api(package, FIXTURE_WIRE_BOOKS_KEY="k")  # the other alternative: an API key in the query
    await key.call(ops.books_search, {"q": "dune"})
    assert str(wire.requests[-1].url) == "https://library.example.org/api/books?q=dune&api_key=k"
    wire.answer = httpx.Response(200, json={"due": "2027-01-01"})
    await key.call(ops.loans_create, {"body": {"book": "b1", "days": 7}})
    assert wire.requests[-1].content == b"book=b1&days=7" and "api_key" not in str(wire.requests[-1].url)


async def test_openapi31_requests(tmp_path: Path, load_package: Load) -> None:
    package = load_package(tmp_path, generate(FIXTURES / "openapi31.yaml", tmp_path, name="fixture_wire_weather"))
    ops = package.operations
    wire = Wire(httpx.Response(200, json={"station": "s/1", "readings": [1.5, None]}))
    api = wire.api(package, FIXTURE_WIRE_WEATHER_TOKEN="t")
    answer = await api.call(
        ops.readings, {"id": "s/1", "id_query": "q", "filter": {"from": "a", "to": "b"}, "session": "c1"}
    )
    request = wire.requests[-1]
    assert str(request.url) == (
        "https://weather.example.net/stations/s%2F1/readings?id=q&filter%5Bfrom%5D=a&filter%5Bto%5D=b"
    )
    assert request.headers["Cookie"] == "session=c1" and request.headers["Authorization"] == "Bearer t"
    assert answer.readings == [1.5, None]
    wire.answer = httpx.Response(200, text="all quiet", headers={"content-type": "text/plain"})
    assert await api.call(ops.get_report, {}) == "all quiet"
