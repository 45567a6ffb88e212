"""No method name is written into the runtime by hand (issue 46): method and notification names are
generated data, read from the generated `names` modules (`from mcp_bindings.v2026_07_28 import names
as v2026`, then `v2026.TOOLS_CALL`: the version that names it is explicit) or looked up in the
`PROTOCOL` tables (routing, listen filters), so a new protocol version is regenerated, not rewritten.

Docstrings do not count; every other string constant of the runtime equal to a method or
notification name of a version or extension the runtime knows does, and fails this test."""

from __future__ import annotations

import ast
import importlib
from collections import Counter
from pathlib import Path

import pytest

from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.protocol.spec import MethodSpec
from tests.support import REPO_ROOT

RUNTIME = REPO_ROOT / "runtime" / "mcp_bindings" / "runtime"
LIVE = REPO_ROOT / "runtime" / "mcp_bindings" / "live"  # the live-server tools, on the runtime's side
EXTENSIONS = (
    "io_modelcontextprotocol_tasks",
    "io_modelcontextprotocol_skills",
    "io_modelcontextprotocol_ui",
    "io_modelcontextprotocol_groups",
)


def method_names() -> frozenset[str]:
    names: set[str] = set()
    for version in registry.versions():
        protocol = registry.protocol(version)
        for table in (
            protocol.client_requests,
            protocol.client_notifications,
            protocol.server_requests,
            protocol.server_notifications,
            protocol.input_requests,
        ):
            names |= set(table)
    for extension in EXTENSIONS:
        methods = importlib.import_module(f"mcp_bindings.ext.{extension}.methods")
        for value in vars(methods).values():
            if isinstance(value, dict | type(methods.CLIENT_REQUESTS)):
                names |= {k for k, v in value.items() if isinstance(v, MethodSpec)}
    return frozenset(names)


def _docstrings(tree: ast.Module) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def literals(root: Path, names: frozenset[str]) -> Counter[str]:
    """Module path (relative to `root`) -> how many method-name literals it holds."""
    counts: Counter[str] = Counter()
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in names and id(node) not in skip:
                counts[path.relative_to(root).as_posix()] += 1
    return counts


def test_the_names_are_the_generated_ones() -> None:
    names = method_names()
    assert {"tools/call", "initialize", "server/discover", "tasks/get", "skills/list"} <= names


@pytest.mark.parametrize("root", [RUNTIME, LIVE], ids=["runtime", "live"])
def test_no_method_name_literal_in_the_runtime(root: Path) -> None:
    found = literals(root, method_names())
    assert not found, f"method-name literals (module: count): {dict(found)}; use the generated names"


def test_the_scan_finds_a_literal_and_skips_a_docstring(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text('"""tools/call in a docstring."""\nNAME = "tools/call"\nOTHER = "tools"\n')
    assert literals(tmp_path, method_names()) == Counter({"m.py": 1})
