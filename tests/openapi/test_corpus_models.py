"""What real descriptions asked of the generated models (issue 49's corpus and GitHub's description):
models cut into modules a type checker and a start-up can afford, and names that collide with
pydantic's or the generated server's own. The descriptions are built here, small, with the shape
that broke; `test_typecheck.py` runs pyright (standard) over the packages they make."""

from __future__ import annotations

import ast
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import httpx
import pytest
from pydantic import ValidationError

from mcp_bindgen.openapi.model_modules import CHUNK
from tests.openapi.conftest import generate
from tests.support.openapi_specs import NODES, many_models, reserved_names, write_spec

pytestmark = pytest.mark.anyio
Load = Callable[[Path, str], ModuleType]


def _imported_from(source: str) -> set[str]:
    """The sibling modules a models module imports (`from ._node0 import Node0` -> `_node0`)."""
    tree = ast.parse(source)
    return {n.module for n in tree.body if isinstance(n, ast.ImportFrom) and n.level == 1 and n.module}


async def test_many_models_are_cut_into_modules_each_importing_only_earlier_ones(
    tmp_path: Path, load_package: Load
) -> None:
    spec = write_spec(tmp_path, "many", many_models())
    name = generate(spec, tmp_path / "out", name="corpus_many")
    folder = tmp_path / "out" / "src" / name / "models"
    assert not (folder.parent / "models.py").exists()
    modules = {p.stem: p.read_text() for p in folder.glob("_*.py") if p.stem not in ("_base", "__init__")}
    assert len(modules) >= 3
    classes = {m: [n.name for n in ast.parse(s).body if isinstance(n, ast.ClassDef)] for m, s in modules.items()}
    assert max(len(names) for names in classes.values()) <= CHUNK
    # No cycle: the modules in an order where each imports only ones before it.
    deps = {m: _imported_from(s) - {"_base"} for m, s in modules.items()}
    done: list[str] = []
    while len(done) < len(deps):
        ready = [m for m in deps if m not in done and deps[m] <= set(done)]
        assert ready, f"modules importing each other: {sorted(set(deps) - set(done))}"
        done += ready
    (pair,) = [m for m, s in modules.items() if "class Ping(" in s]
    assert "class Pong(" in modules[pair]  # two models referring to each other share a module

    package = load_package(tmp_path / "out", name)
    async with package.app.test_client("2025-11-25") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert sorted(tools) == [f"getNode{NODES - 1}", "getPing"]
    assert tools["getPing"].output_schema is not None
    # The schemas no tool uses are in modules of their own, imported only when asked for.
    unused = next(m for m, names in classes.items() if all(n.startswith("Zunused") for n in names))
    assert f"{name}.models.{unused}" not in sys.modules
    model = getattr(package.models, classes[unused][0])
    assert f"{name}.models.{unused}" in sys.modules
    assert model.model_validate({"n": "x", "more": 1}).model_dump() == {"n": "x", "more": 1}
    last = getattr(package.models, f"Node{NODES - 1}")
    chain = last.model_validate({"id": 149, "prev": {"id": 74, "prev": {"id": 37}}})
    assert chain.prev.prev.id == 37 and chain.model_dump() == {"id": 149, "prev": {"id": 74, "prev": {"id": 37}}}


async def test_arguments_and_properties_named_like_the_servers_and_pydantics_own(
    tmp_path: Path, load_package: Load
) -> None:
    spec = write_spec(tmp_path, "names", reserved_names())
    name = generate(spec, tmp_path / "out", name="corpus_names")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pydantic's "conflicts with protected namespace" among them
        package = load_package(tmp_path / "out", name)
        thing = package.models.Thing.model_validate(
            {
                "__pydantic_extra__": {"a": "b"},
                "model_dump": "d",
                "model_validate_json": "j",
                "class": "c",
                "annotations": "a",
            }
        )
    with pytest.raises(ValidationError, match="client_id"):  # required in the derived model, as described
        package.models.MakeAppResponse.model_validate({"name": "n"})
    assert thing.model_dump(by_alias=True) == {
        "__pydantic_extra__": {"a": "b"},
        "model_dump": "d",
        "model_validate_json": "j",
        "class": "c",
        "annotations": "a",
    }
    requests: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(200, json={"name": "n", "colour": "red"})

    package.server.api.transport = httpx.MockTransport(answer)
    arguments = {"api": "a b", "ops": "o", "app": "p", "__pydantic_extra__": "e", "model_dump": "m", "body": {}}
    async with package.app.test_client("2025-11-25") as client:
        (tool,) = [t for t in (await client.list_tools()).tools if t.name == "makeThing"]
        result = await client.call_tool(name="makeThing", arguments=arguments)
    assert set(tool.input_schema.properties or {}) == set(arguments)
    assert not result.is_error, result.content
    assert result.structured_content == {"name": "n", "colour": "red"}
    (request,) = requests
    assert str(request.url) == "https://api.example.com/things/a%20b?ops=o&app=p&__pydantic_extra__=e"
    assert request.headers["model_dump"] == "m"
