"""The suite's own layout: a test module imports shared helpers from tests/support/ (or gets them as
fixtures from a conftest.py), never from another `test_*` module. Importing a test module from
another one runs its module-level set-up twice under two names, registers its fixtures in both,
and ties unrelated areas together (moving or splitting one test file breaks the others)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support import REPO_ROOT

TESTS = REPO_ROOT / "tests"


def _python_files() -> list[Path]:
    # Not the generator's expected output for the fixture schemas (generated code, compared byte for byte).
    return sorted(p for p in TESTS.rglob("*.py") if "fixtures/schemas/" not in p.relative_to(TESTS).as_posix())


def _imported_modules(path: Path, root: Path = REPO_ROOT) -> list[tuple[int, str]]:
    """(line, dotted module) of every import in `path`, relative imports resolved against its package;
    for `from package import name`, `package.name` too (it may be a module)."""
    package = path.relative_to(root).with_suffix("").parts[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.append((node.lineno, module))
            found.extend((node.lineno, f"{module}.{alias.name}") for alias in node.names)
    return found


def _is_test_module(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "tests" and any(part.startswith("test_") for part in parts)


def test_no_module_imports_from_a_test_module() -> None:
    offenders = [
        f"{path.relative_to(REPO_ROOT)}:{line}: imports {module}"
        for path in _python_files()
        for line, module in _imported_modules(path)
        if _is_test_module(module)
    ]
    assert not offenders, "move what is shared to tests/support/ (or a fixture to a conftest.py):\n" + "\n".join(
        offenders
    )


@pytest.mark.parametrize(
    ("source", "module"),
    [
        ("from tests.area.test_other import helper", "tests.area.test_other"),
        ("from .test_other import helper", "tests.area.test_other"),
        ("from ..test_other import helper", "tests.test_other"),
        ("from . import test_other", "tests.area.test_other"),
        ("import tests.test_other", "tests.test_other"),
    ],
)
def test_the_guard_sees_each_form_of_import(tmp_path: Path, source: str, module: str) -> None:
    """The check above would pass vacuously if it missed a form of import."""
    path = tmp_path / "tests" / "area" / "test_sample.py"
    path.parent.mkdir(parents=True)
    path.write_text(source + "\n")
    found = [m for _, m in _imported_modules(path, tmp_path)]
    assert module in found and _is_test_module(module), found
    assert not _is_test_module("tests.support.http") and not _is_test_module("tests.peers.harness")


def test_one_anyio_backend() -> None:
    """`anyio_backend` is defined once, in tests/conftest.py; a module overriding it says why."""
    overrides = [
        str(path.relative_to(REPO_ROOT))
        for path in _python_files()
        if path != TESTS / "conftest.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef) and node.name == "anyio_backend"
    ]
    assert overrides == [], "an override needs a reason here (e.g. a module meant to run on trio too)"
