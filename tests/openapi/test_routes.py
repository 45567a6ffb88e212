"""Route maps (`--routes FILE`): which operations become tools, resources or resource templates, or
are left out. `fixtures/routes.yaml` on petstore.yaml: its admin operation left out, `getPet` a
resource template read through the app as a client reads it; with no route map every operation is a
tool (`fixtures/expected/petstore.json`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import httpx
import pytest

from mcp_bindgen.cli import main
from tests.openapi.conftest import FIXTURES, generate

pytestmark = pytest.mark.anyio
Load = Callable[[Path, str], ModuleType]


async def test_a_route_map_makes_resources_and_leaves_operations_out(tmp_path: Path, load_package: Load) -> None:
    name = generate(FIXTURES / "petstore.yaml", tmp_path, "--routes", str(FIXTURES / "routes.yaml"), name="routed")
    package = load_package(tmp_path, name)
    requests: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(200, json={"id": 7, "name": "Rex"})

    api = package.server.api
    api.transport, api.environ = httpx.MockTransport(answer), {"ROUTED_API_KEY": "k"}
    async with package.app.test_client("2025-11-25") as client:
        tools = sorted(t.name for t in (await client.list_tools()).tools)
        templates = (await client.list_resource_templates()).resource_templates
        resources = (await client.list_resources()).resources
        read = await client.read_resource(uri="routed://pets/7")
    assert tools == ["create-pet", "getPet_2", "listPets"]  # deletePet (admin) left out
    assert [(t.uri_template, t.name, t.mime_type) for t in templates] == [
        ("routed://pets/{pet_id}", "getPet", "application/json")
    ]
    assert resources == []
    assert str(requests[0].url) == "https://eu.pets.example.com/v1/pets/7"
    assert requests[0].headers["X-API-Key"] == "k" and "X-Request-Id" not in requests[0].headers
    assert json.loads(read.contents[0].text) == {"id": 7, "name": "Rex"}
    readme = (tmp_path / "README.md").read_text()
    assert "| `getPet` | `routed://pets/{pet_id}` | `GET /pets/{petId}` |" in readme
    assert "--routes" in readme  # in the command that makes the package again (and `--check` compares)


async def test_a_plain_resource(tmp_path: Path, load_package: Load) -> None:
    routes = tmp_path / "routes.json"
    routes.write_text(json.dumps({"routes": [{"kind": "resource", "path": "/report"}]}))
    out = tmp_path / "pkg"
    package = load_package(out, generate(FIXTURES / "openapi31.yaml", out, "--routes", str(routes), name="plain"))
    api = package.server.api
    api.transport = httpx.MockTransport(lambda request: httpx.Response(200, text="all quiet"))
    api.environ = {"PLAIN_TOKEN": "t"}
    async with package.app.test_client("2025-11-25") as client:
        (resource,) = (await client.list_resources()).resources
        read = await client.read_resource(uri=resource.uri)
    assert (resource.uri, resource.mime_type) == ("plain://report", "text/plain")
    assert read.contents[0].text == "all quiet"


@pytest.mark.parametrize(
    ("routes", "message"),
    [
        (
            {"routes": [{"kind": "resource", "verb": "GET"}]},
            "rule 1: unknown key `verb` (known: kind, methods, path, tags)",
        ),
        ({"routes": [{"kind": "prompt"}]}, "rule 1: `kind` must be one of tool, resource, exclude (found 'prompt')"),
        ({"routes": [{"kind": "tool", "tags": [1]}]}, "rule 1: `tags` must be a string or a list of strings"),
        ({"rules": []}, "a route map is a list of rules under `routes`"),
    ],
)
def test_a_bad_route_map_is_a_clear_error(
    routes: object, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "routes.json"
    path.write_text(json.dumps(routes))
    argv = ["openapi", str(FIXTURES / "petstore.yaml"), "-o", str(tmp_path / "out"), "--routes", str(path)]
    assert main(argv) == 1
    assert capsys.readouterr().err == f"mcp-bindgen: error: {path}: {message}\n"
