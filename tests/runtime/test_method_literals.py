"""No method name is written into the runtime by hand (issue 46): method and notification names are
generated data (`PROTOCOL` tables, their routing and listen filters), so a new protocol version is
regenerated, not rewritten.

The runtime still holds method-name string literals from before; `method_literals.allow` beside this
file counts them per module, and may only shrink: a module that gains a literal, a module not listed
that has one, or a count higher than the module's literals (lower the line, or delete it at zero)
fails. Docstrings do not count; every other string constant equal to a method or notification name
of a version or extension the runtime knows does."""

from __future__ import annotations

import ast
import importlib
from collections import Counter
from pathlib import Path

from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.protocol.spec import MethodSpec
from tests.support import REPO_ROOT

RUNTIME = REPO_ROOT / "runtime" / "mcp_bindings" / "runtime"
ALLOW = Path(__file__).with_name("method_literals.allow")
EXTENSIONS = ("io_modelcontextprotocol_tasks", "io_modelcontextprotocol_skills", "io_modelcontextprotocol_ui")


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


def allowed() -> dict[str, int]:
    out: dict[str, int] = {}
    for line in ALLOW.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            module, count = line.rsplit(maxsplit=1)
            out[module] = int(count)
    return out


def test_the_names_are_the_generated_ones() -> None:
    names = method_names()
    assert {"tools/call", "initialize", "server/discover", "tasks/get", "skills/list"} <= names


def test_no_module_gains_a_method_name_literal() -> None:
    found, allow = literals(RUNTIME, method_names()), allowed()
    grown = {m: (n, allow.get(m, 0)) for m, n in found.items() if n > allow.get(m, 0)}
    assert not grown, f"method-name literals added (found, allowed): {grown}; use the generated tables"
    shrunk = {m: (found.get(m, 0), n) for m, n in allow.items() if found.get(m, 0) < n}
    assert not shrunk, f"fewer literals than allowed (found, allowed): {shrunk}; lower method_literals.allow"


def test_the_scan_finds_a_literal_and_skips_a_docstring(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text('"""tools/call in a docstring."""\nNAME = "tools/call"\nOTHER = "tools"\n')
    assert literals(tmp_path, method_names()) == Counter({"m.py": 1})
