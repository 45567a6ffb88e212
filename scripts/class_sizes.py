"""Fail on a class over 400 lines in the runtime or the generator, counting its bases from the same
package: a class whose body is split over mixins is as large as all of them together.

Each class is read with `ast`; its size is its own lines plus, once each, those of every base class
(transitively) that the same first-level package defines (`app.core.App` counts `app.serving.Serving`,
`app.mounting.Mounting`, ...). Bases from other packages, the generated bindings or libraries are
their own classes and are not counted.

`scripts/class_sizes.allow` lists the classes still over the ceiling, each with the size it may not
exceed and the step that brings it under. The list may only shrink and each size only go down: a
listed class that grew fails, and one that is gone or back under the ceiling fails too (delete its
line), as does a size above today's by more than SLACK lines (lower it).

    python scripts/class_sizes.py [--allow FILE]
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROOTS = {
    "mcp_bindings.runtime": REPO / "runtime" / "mcp_bindings" / "runtime",
    "mcp_bindings.live": REPO / "runtime" / "mcp_bindings" / "live",
    "mcp_bindgen": REPO / "generator" / "mcp_bindgen",
}
CEILING = 400
SLACK = 20  # how far an allowed size may sit above today's before it must be lowered


@dataclass
class Found:
    module: str
    name: str
    lines: int
    bases: list[str]  # dotted names of the bases, resolved through the module's imports where they can be


def _module_name(prefix: str, root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([prefix, *parts])


def _imported(tree: ast.Module, module: str) -> dict[str, str]:
    """Local name -> dotted name, for the `from X import Y` of a module (relative ones resolved)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = module.split(".")[: -node.level]
                base = ".".join([*parent, *([base] if base else [])])
            for alias in node.names:
                names[alias.asname or alias.name] = f"{base}.{alias.name}"
    return names


def classes() -> dict[str, Found]:
    """Every class of the two packages by dotted name."""
    found: dict[str, Found] = {}
    for prefix, root in ROOTS.items():
        for path in sorted(root.rglob("*.py")):
            module = _module_name(prefix, root, path)
            tree = ast.parse(path.read_text(encoding="utf-8"))
            imported = _imported(tree, module)
            for node in tree.body:
                if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                    bases = [imported.get(b.id, f"{module}.{b.id}") for b in node.bases if isinstance(b, ast.Name)]
                    lines = node.end_lineno - node.lineno + 1
                    found[f"{module}.{node.name}"] = Found(module, node.name, lines, bases)
    return found


def _package(dotted: str) -> str:
    """The first-level package a class lives in (`mcp_bindings.runtime.app`, `mcp_bindgen.render`)."""
    for prefix in ROOTS:
        if dotted.startswith(prefix + "."):
            rest = dotted[len(prefix) + 1 :].split(".")
            return f"{prefix}.{rest[0]}" if len(rest) > 2 else prefix
    return ""


def size(name: str, found: dict[str, Found]) -> int:
    """A class's lines with those of its same-package bases, each counted once."""
    package = _package(name)
    seen: set[str] = set()
    todo = [name]
    total = 0
    while todo:
        current = todo.pop()
        if current in seen or current not in found:
            continue
        seen.add(current)
        total += found[current].lines
        todo += [b for b in found[current].bases if _package(b) == package]
    return total


def read_allow(path: Path) -> dict[str, int]:
    allowed: dict[str, int] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            name, _, ceiling = line.partition(" ")
            allowed[name] = int(ceiling.split()[0])
    return allowed


def problems(allowed: dict[str, int]) -> list[str]:
    found = classes()
    sizes = {name: size(name, found) for name in found}
    out = [
        f"{name}: {lines} lines with its same-package bases, over {CEILING}: split it (scripts/class_sizes.py)"
        for name, lines in sorted(sizes.items())
        if lines > CEILING and name not in allowed
    ]
    for name, ceiling in sorted(allowed.items()):
        lines = sizes.get(name)
        if lines is None or lines <= CEILING:
            now = "gone" if lines is None else f"{lines} lines"
            out.append(f"{name}: allowed in class_sizes.allow but {now}: delete its line")
        elif lines > ceiling:
            out.append(f"{name}: {lines} lines, more than the {ceiling} class_sizes.allow lets it have")
        elif lines < ceiling - SLACK:
            out.append(
                f"{name}: {lines} lines, far under the {ceiling} class_sizes.allow gives it: lower it to {lines}"
            )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--allow", type=Path, default=REPO / "scripts" / "class_sizes.allow")
    args = parser.parse_args(argv)
    found = problems(read_allow(args.allow))
    for line in found:
        print(line, file=sys.stderr)
    if found:
        return 1
    print(f"class sizes: none over {CEILING} lines but the {len(read_allow(args.allow))} allowed (bases counted)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
