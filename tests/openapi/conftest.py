"""Helpers of the OpenAPI generator's tests: generate a package with the command line and import it
(a unique package name per use, so packages of several tests never share a module)."""

from __future__ import annotations

import importlib
import itertools
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from mcp_bindgen.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
# The fixture descriptions read like specs beside their expected listings (fixtures/expected/).
CASES = {"petstore": "petstore.yaml", "swagger2": "swagger2.json", "openapi31": "openapi31.yaml"}
TOKEN_VAR = "INVENTORY_HTTP_BEARER_TOKEN"  # the bearer scheme of tests/openapi/api_app.py, --env-prefix INVENTORY
_count = itertools.count()


def generate(spec: str | Path, out: Path, *options: str, name: str | None = None) -> str:
    """Run `mcp-bindgen openapi SPEC -o OUT --name NAME OPTIONS...`; the package name."""
    name = name or f"oa_test_{next(_count)}_{out.name.replace('-', '_')}".lower()
    assert main(["openapi", str(spec), "-o", str(out), "--name", name, "--force", *options]) == 0
    return name


@pytest.fixture
def load_package() -> Iterator[object]:
    """`load(out, name)` imports a generated package (its `src/` on sys.path while the test runs)."""
    added: list[str] = []
    names: list[str] = []

    def load(out: Path, name: str) -> ModuleType:
        src = str(out / "src")
        sys.path.insert(0, src)
        added.append(src)
        names.append(name)
        return importlib.import_module(name)

    yield load
    for src in added:
        sys.path.remove(src)
    for name in names:
        for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[module]


def import_generated(out: Path, name: str) -> ModuleType:
    """Import a generated package for a module's worth of tests (its `src/` stays on sys.path)."""
    sys.path.insert(0, str(out / "src"))
    return importlib.import_module(name)


@pytest.fixture(scope="module")
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, ModuleType]]:
    """tests/openapi/api_app.py on uvicorn at 127.0.0.1, and the package generated from the
    `/openapi.json` it serves (base URL: where it listens)."""
    import httpx

    from tests.openapi.api_app import api
    from tests.support.http import serve_in_thread

    with serve_in_thread(api) as url:
        spec = tmp_path_factory.mktemp("spec") / "openapi.json"
        spec.write_bytes(httpx.get(f"{url}/openapi.json").content)
        out = tmp_path_factory.mktemp("inventory")
        name = f"inventory_{request.module.__name__.rsplit('.', 1)[-1]}"
        generate(spec, out, "--base-url", url, "--env-prefix", "INVENTORY", name=name)
        yield url, import_generated(out, name)
