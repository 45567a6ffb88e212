"""Fail on any import cycle between runtime modules, counting imports inside functions.

Python only complains about a cycle when it runs at import time; a cycle closed by an import inside
a function (or a lazy one) is still two modules that cannot be understood, tested or replaced apart.
This check reads every `import` of `runtime/mcp_bindings/runtime` with `ast` (at module level and
inside functions; not the `if TYPE_CHECKING:` ones, which never run), and every string that names a
runtime module (what `importlib.import_module` is given, a list of plug-ins), and fails on a strongly
connected component of more than one module.

`scripts/import_cycles.allow` lists the edges that still close a cycle today, each with the step
that removes it; they are left out of the graph. The list may only shrink: an allowed edge that no
longer exists, or no longer closes a cycle, fails the check too (delete its line).

    python scripts/import_cycles.py [--root DIR] [--allow FILE]
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "mcp_bindings.runtime"


def modules(root: Path) -> dict[str, Path]:
    """Module name -> file, for every module under `root` (the runtime package's folder)."""
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join([PACKAGE, *parts])] = path
    return found


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking_only(node):
            for child in node.orelse:
                yield from _imports(child)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _imports(node)


def _absolute(name: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = name.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def edges(found: dict[str, Path]) -> set[tuple[str, str]]:
    """(importer, imported) for every import of one runtime module by another."""
    out: set[tuple[str, str]] = set()
    for name, path in found.items():
        is_package = path.name == "__init__.py"
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = _absolute(name, is_package, node)
                # `from pkg import module` imports the module; `from module import name` the module
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in found else base for a in node.names]
            for target in targets:
                while target and target not in found:
                    target = target.rpartition(".")[0]
                if target and target != name and target != PACKAGE:
                    out.add((name, target))
        out |= {(name, target) for target in _named(path, found) if target != name}
    return out


def _named(path: Path, found: dict[str, Path]) -> set[str]:
    """Runtime modules a module names by a string (`importlib.import_module("...")`, a `PLUGINS`
    tuple): an import all the same, made at run time, that `import` statements do not show."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    strings: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name) and node.args:
            if (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "import_module":
                strings.append(node.args[0])
    for node in tree.body:  # a module-level list of modules to import (`PLUGINS = ("...",)`)
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Tuple | ast.List):
            strings += node.value.elts
    return {n.value for n in strings if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in found}


def cycles(graph: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    succ: dict[str, list[str]] = {}
    for a, b in sorted(graph):
        succ.setdefault(a, []).append(b)
        succ.setdefault(b, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in succ:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(succ[node]):
                work.append((node, i + 1))
                nxt = succ[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def read_allowed(path: Path) -> set[tuple[str, str]]:
    allowed: set[tuple[str, str]] = set()
    if not path.exists():
        return allowed
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            importer, _, imported = line.partition(" -> ")
            allowed.add((f"{PACKAGE}.{importer.strip()}", f"{PACKAGE}.{imported.strip()}"))
    return allowed


def check(root: Path, allow: Path) -> list[str]:
    """What is wrong, one line each (empty: no cycle)."""
    graph = edges(modules(root))
    allowed = read_allowed(allow)
    short = len(PACKAGE) + 1
    problems = [
        f"allowed edge {a[short:]} -> {b[short:]} no longer exists: delete it from {allow.name}"
        for a, b in sorted(allowed - graph)
    ]
    rest = graph - allowed
    for component in cycles(rest):
        inner = sorted((a[short:], b[short:]) for a, b in rest if a in component and b in component)
        problems.append(
            f"import cycle of {len(component)} runtime modules: "
            + ", ".join(m[short:] for m in component)
            + "\n    edges: "
            + "; ".join(f"{a} -> {b}" for a, b in inner)
        )
    whole = cycles(graph)
    for edge in sorted(allowed & graph):  # an allowed edge must still sit in a cycle
        if not any(edge[0] in c and edge[1] in c for c in whole):
            problems.append(f"allowed edge {edge[0][short:]} -> {edge[1][short:]} is in no cycle: delete it")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=REPO / "runtime" / "mcp_bindings" / "runtime")
    parser.add_argument("--allow", type=Path, default=REPO / "scripts" / "import_cycles.allow")
    args = parser.parse_args(argv)
    problems = check(args.root, args.allow)
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print("import cycles: none between runtime modules (counting imports inside functions)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
