"""Split one version's rendered models into a package whose classes are created on first use.

`render_models` produces one module with a top-level name per IR definition. This stage cuts it
into private submodules, one per group of definitions that refer to each other (a strongly
connected component of the reference graph, so no two submodules import each other), and renders
`models/__init__.py`: an index that imports each submodule when one of its names is first asked for
(PEP 562). Public names and class identities are those of the single module; a process creates only
the classes its traffic needs and the ones they refer to.

Which statement defines which name comes from the IR; which names a statement uses, from its CST.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from ..errors import BindgenError
from ..ir import SchemaIR
from .passes import _defined_name, _is_import
from .templates import render

# Identifiers inside a string annotation ("Tool | None").
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
SUPPORT = "_support"


@dataclass(frozen=True)
class Unit:
    """One IR definition's statements (its class or alias, and the docstring that follows an alias)."""

    name: str
    statements: tuple[cst.BaseStatement, ...]


class _Uses(cst.CSTVisitor):
    """The identifiers a statement reads: names (not attribute names or keywords) and the names
    inside string annotations made only of the `known` names."""

    def __init__(self, known: set[str]) -> None:
        self.known = known
        self.found: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.found.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        for part in (*node.bases, *node.keywords, *node.decorators):
            part.visit(self)
        node.body.visit(self)
        return False

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        value = node.evaluated_value
        if not isinstance(value, str):
            return
        words = set(_IDENTIFIER.findall(value))
        # A forward reference, not prose: every identifier is a definition (or None) and the rest is
        # type syntax.
        if words and words <= self.known | {"None"} and not re.sub(r"[A-Za-z0-9_\s|\[\],.]", "", value):
            self.found |= words - {"None"}


def _uses(statements: tuple[cst.CSTNode, ...], known: set[str]) -> set[str]:
    visitor = _Uses(known)
    for stmt in statements:
        stmt.visit(visitor)
    return visitor.found


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _units(module: cst.Module, definitions: set[str]) -> tuple[list[Unit], dict[str, cst.BaseStatement]]:
    """The definitions in source order, and the module-level helpers (functions the passes add)."""
    units: list[Unit] = []
    helpers: dict[str, cst.BaseStatement] = {}
    for stmt in module.body:
        if _is_import(stmt):
            continue
        name = _defined_name(stmt)
        if name in definitions:
            units.append(Unit(name, (stmt,)))
        elif isinstance(stmt, cst.FunctionDef) and stmt.name.value.startswith("_"):
            helpers[stmt.name.value] = stmt
        elif _is_docstring(stmt) and units:
            units[-1] = Unit(units[-1].name, (*units[-1].statements, stmt))
        else:
            code = module.code_for_node(stmt).strip().splitlines()[0]
            raise BindgenError(f"cannot split the models: top-level statement {code!r} defines no IR definition")
    return units, helpers


def _components(graph: dict[str, set[str]], order: list[str]) -> list[list[str]]:
    """Strongly connected components (Tarjan), each in source order, dependencies first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    position = {name: i for i, name in enumerate(order)}

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for dep in sorted(graph[node], key=position.__getitem__):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            members: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                members.append(top)
                if top == node:
                    break
            out.append(sorted(members, key=position.__getitem__))

    for name in order:
        if name not in index:
            visit(name)
    return out


def module_name(class_name: str) -> str:
    """`CallToolRequest` -> `_call_tool_request`, `JSONRPCMessage` -> `_jsonrpc_message`."""
    return "_" + _CAMEL_BOUNDARY.sub("_", class_name).lower()


def _import_lines(imports: Sequence[cst.BaseStatement], used: set[str]) -> list[str]:
    """The rendered module's import statements, keeping only the names `used`, one level deeper."""
    lines: list[str] = []
    for stmt in imports:
        assert isinstance(stmt, cst.SimpleStatementLine)
        for small in stmt.body:
            if not isinstance(small, cst.ImportFrom) or isinstance(small.names, cst.ImportStar):
                raise BindgenError("cannot split the models: expected only `from ... import ...` statements")
            kept = [
                alias.evaluated_name + (f" as {alias.evaluated_alias}" if alias.evaluated_alias else "")
                for alias in small.names
                if (alias.evaluated_alias or alias.evaluated_name) in used
            ]
            if not kept:
                continue
            module = cst.Module([]).code_for_node(small.module) if small.module else ""
            dots = "." * (len(small.relative) + 1) if small.relative else ""
            lines.append(f"from {dots}{module} import {', '.join(kept)}")
    return lines


def split_models(module: cst.Module, ir: SchemaIR, header: str) -> dict[str, str]:
    """`{path under the version package: source}` of the models package (unformatted)."""
    definitions = {ir.py_name(name) for name in ir.definitions}
    units, helpers = _units(module, definitions)
    found = {unit.name for unit in units}
    if found != definitions:
        raise BindgenError(f"cannot split the models: no statement defines {sorted(definitions - found)}")
    imports = [stmt for stmt in module.body if _is_import(stmt)]
    uses = {unit.name: _uses(unit.statements, definitions) for unit in units}
    order = [unit.name for unit in units]
    graph = {name: (uses[name] & definitions) - {name} for name in order}
    groups = _components(graph, order)
    home = {name: module_name(group[0]) for group in groups for name in group}
    modules = list(dict.fromkeys(home.values()))
    if len(modules) != len(groups) or SUPPORT in modules:
        raise BindgenError(
            f"{ir.version}: two groups of models map to one module name; rename one in policy/type_names.json"
        )
    files: dict[str, str] = {}
    by_name = {unit.name: unit for unit in units}
    if helpers:
        helper_uses = _uses(tuple(helpers.values()), set())
        # Public inside the private `_support` (each user imports it under its private name).
        public = [
            h.with_changes(name=cst.Name(n.lstrip("_"))) for n, h in helpers.items() if isinstance(h, cst.FunctionDef)
        ]
        body = "\n\n".join(module.code_for_node(h) for h in public)
        files[f"models/{SUPPORT}.py"] = "\n".join([header, "", *_import_lines(imports, helper_uses), "", "", body])
    for group in groups:
        used = set().union(*(uses[name] for name in group))
        lines = [header, "", *_import_lines(imports, used)]
        lines += [f"from .{SUPPORT} import {h.lstrip('_')} as {h}" for h in sorted(used & set(helpers))]
        deps = sorted({dep for name in group for dep in graph[name]} - set(group))
        if deps:
            # Through the index, which keeps every name it loaded: pydantic resolves a deferred
            # annotation in the namespace of the class's `__module__`, the index.
            lines.append(f"from . import {', '.join(deps)}")
        body = "\n\n".join(module.code_for_node(stmt) for name in group for stmt in by_name[name].statements)
        # Classes only: an alias resolves its forward references in this module, where it is.
        classes = [name for name in group if isinstance(by_name[name].statements[0], cst.ClassDef)]
        public = [f'{name}.__module__ = __name__.rpartition(".")[0]' for name in classes]
        files[f"models/{home[group[0]]}.py"] = "\n".join(
            [
                *lines,
                "",
                "",
                body,
                *(
                    ["", "# Shown where exported (repr, pickle); deferred annotations resolve there.", *public]
                    if public
                    else []
                ),
            ]
        )
    files["models/__init__.py"] = render(
        "models_index.py.j2",
        header=header,
        version=ir.version,
        names=[{"name": name, "module": home[name]} for name in order],
    )
    return files
