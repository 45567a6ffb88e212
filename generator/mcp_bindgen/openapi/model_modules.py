"""Cut a description's rendered models into the generated package's `models/`: private modules of at
most `CHUNK` definitions, each importing what it uses from the ones before it, an index creating
them on first use (PEP 562), and a base whose models build their validators on first use too
(`defer_build`).

A description as large as GitHub's (3,000 models) makes one module pyright gives up on ("code is
too complex to analyze") and that costs seconds of start-up building every model. The cut follows
the reference graph the protocol models' split reads (`render.split`): groups of definitions that
refer to each other stay together, in an order where every module's references come before it, so
no two modules import each other.
"""

from __future__ import annotations

import libcst as cst

from ..errors import BindgenError
from ..render import passes
from ..render.passes import _is_import
from ..render.split import _components, _import_lines, _units, _uses, module_name
from ..render.templates import render

CHUNK = 100  # definitions per module: a few thousand lines, which pyright checks in a second or two
BASE_MODULE = "_base"
BASE_NAME = "_Model"  # private: never the name of a schema (`Model` is one in amazonaws.com apigateway)
# A model narrowing what its base declares is what the description says: typed extra keys
# (`__pydantic_extra__: dict[str, T]`, pydantic's documented way, narrower than `BaseModel`'s) and an
# `allOf` member redefining a property. pyright (standard) would report each as an incompatible override.
_OVERRIDES = "# pyright: reportIncompatibleVariableOverride=false"


def base_class(package: str) -> str:
    """The dotted name of the generated models' base (in `models/_base.py`)."""
    return f"{package}.models.{BASE_MODULE}.{BASE_NAME}"


def _chunks(groups: list[list[str]]) -> list[list[str]]:
    """Groups (dependencies first) packed in order into modules of at most CHUNK definitions (a larger
    group makes a module of its own)."""
    chunks: list[list[str]] = []
    for group in groups:
        if not chunks or (chunks[-1] and len(chunks[-1]) + len(group) > CHUNK):
            chunks.append([])
        chunks[-1].extend(group)
    return chunks


def _module_names(chunks: list[list[str]]) -> list[str]:
    """Each module named after its first definition (`_pull_request`), unique and never the base's."""
    taken = {BASE_MODULE}
    out: list[str] = []
    for chunk in chunks:
        name, n = module_name(chunk[0]), 2
        while name in taken:
            name, n = f"{module_name(chunk[0])}_{n}", n + 1
        taken.add(name)
        out.append(name)
    return out


def split_models(module: cst.Module, header: str, title: str) -> dict[str, str]:
    """`{path under the package: source}` of `models/` (unformatted)."""
    order = passes.top_level_names(module)
    definitions = set(order)
    units, helpers = _units(module, definitions)
    if helpers:
        raise BindgenError(f"cannot split the models: module-level helpers {sorted(helpers)} (expected none)")
    # Every module starts with its own `from __future__ import annotations` (kept out of the imports a
    # module takes by the names it uses: a field may be named `annotations`).
    imports = [s for s in module.body if _is_import(s) and not module.code_for_node(s).startswith("from __future__")]
    by_name = {unit.name: unit for unit in units}
    uses = {unit.name: _uses(unit.statements, definitions) for unit in units}
    graph = {name: (uses[name] & definitions) - {name} for name in order}
    chunks = _chunks(_components(graph, order))
    names = _module_names(chunks)
    home = {name: module for module, chunk in zip(names, chunks, strict=True) for name in chunk}
    files: dict[str, str] = {}
    for module_file, chunk in zip(names, chunks, strict=True):
        used = set().union(*(uses[name] for name in chunk))
        # Annotations stay unevaluated (a group's members refer to each other), resolved when a model
        # is first built, in this module's namespace, which imports every name they use.
        lines = [header, _OVERRIDES, "", "from __future__ import annotations", "", *_import_lines(imports, used)]
        elsewhere: dict[str, list[str]] = {}
        for dep in sorted({dep for name in chunk for dep in graph[name]} - set(chunk)):
            elsewhere.setdefault(home[dep], []).append(dep)
        lines += [f"from .{m} import {', '.join(deps)}" for m, deps in sorted(elsewhere.items())]
        body = "\n\n".join(module.code_for_node(stmt) for name in chunk for stmt in by_name[name].statements)
        files[f"models/{module_file}.py"] = "\n".join([*lines, "", "", body, ""])
    files[f"models/{BASE_MODULE}.py"] = render("openapi/models_base.py.j2", header=header, title=title)
    files["models/__init__.py"] = render(
        "openapi/models_index.py.j2",
        header=header,
        title=title,
        names=[{"name": name, "module": home[name]} for name in order],
    )
    return files
