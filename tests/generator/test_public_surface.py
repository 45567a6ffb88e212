"""The generated models' public surface, name by name, now that each model lives in a private
submodule and is created on first use (issue 36): every schema definition of every pinned version is
importable from the version package and from its `models`, as one object, of the kind the IR says,
shown under `models`; the message unions stay in `methods`."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest
from pydantic import BaseModel
from typing_extensions import TypeAliasType

from mcp_bindgen.ir import ObjectDef
from mcp_bindgen.pins import load_pins
from mcp_bindgen.pipeline import build_ir, package_name, pinned_source
from tests.support import REPO_ROOT

VERSIONS = sorted(load_pins())


@pytest.mark.parametrize("version", VERSIONS)
def test_every_definition_is_one_object_under_every_public_path(version: str) -> None:
    ir = build_ir(pinned_source(version))
    package = importlib.import_module(f"mcp_bindings.{package_name(version)}")
    models = importlib.import_module(f"{package.__name__}.models")
    assert sorted(models.__all__) == sorted(ir.py_name(n) for n in ir.definitions)
    assert set(package.__all__) >= set(ir.definitions)
    for name, definition in ir.definitions.items():
        py_name = ir.py_name(name)
        value = getattr(models, py_name)
        assert getattr(package, name) is value, name
        namespace: dict[str, object] = {}
        exec(f"from {models.__name__} import {py_name} as imported", namespace)  # the import statement
        assert namespace["imported"] is value, name
        if isinstance(definition, ObjectDef):
            assert isinstance(value, type) and issubclass(value, BaseModel), name
            assert value.__module__ == models.__name__ and value.__qualname__ == py_name
        else:
            assert isinstance(value, (type, TypeAliasType)), name
    methods = importlib.import_module(f"{package.__name__}.methods")
    for union in ("ClientMessage", "ServerMessage"):
        assert isinstance(getattr(methods, union), TypeAliasType)
    with pytest.raises(AttributeError, match="no attribute 'NoSuchModel'"):
        _ = models.NoSuchModel
    with pytest.raises(AttributeError, match="no attribute 'NoSuchModel'"):
        _ = package.NoSuchModel


def test_star_import_and_pickle_see_the_public_names() -> None:
    code = (
        "import pickle\n"
        "from mcp_bindings.v2025_11_25.models import *\n"
        "import mcp_bindings.v2025_11_25.models as m\n"
        "tool = Tool(name='t', input_schema=ToolInputSchema())\n"
        "assert pickle.loads(pickle.dumps(tool)) == tool\n"
        "print(len(m.__all__), repr(Tool))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    count, shown = result.stdout.split(" ", 1)
    assert int(count) > 150
    assert shown.strip() == "<class 'mcp_bindings.v2025_11_25.models.Tool'>"
