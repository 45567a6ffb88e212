"""Tool models: the merged schema document -> datamodel-code-generator -> the same libcst passes as
the bindings, and what the client template needs to know of each input model's fields."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import libcst as cst
from datamodel_code_generator import generate

from mcp_bindgen.errors import BindgenError
from mcp_bindgen.render import passes
from mcp_bindgen.render.models import DCG_OPTIONS, base_passes

# Defaults copied into a method's signature; anything else (a list, a call) becomes `= None`.
_LITERAL_NODES = (cst.SimpleString, cst.Integer, cst.Float, cst.UnaryOperation)
_LITERAL_NAMES = ("True", "False", "None")


@dataclass(frozen=True)
class Param:
    name: str  # the Python name (the model's field)
    annotation: str
    default: str | None  # source of the default, None when required
    description: str

    @property
    def required(self) -> bool:
        return self.default is None


@dataclass(frozen=True)
class RenderedModels:
    body: str  # the model classes and aliases (no imports)
    imports: dict[str, set[str]]  # module -> names, as datamodel-code-generator imported them
    classes: dict[str, list[Param] | None]  # model -> its fields (None: not an object model)


def render_tool_models(document: dict[str, Any]) -> RenderedModels:
    try:
        source = generate(
            json.dumps(document),
            **DCG_OPTIONS,
            extra_fields="allow",
            allow_population_by_field_name=True,
        )
    except Exception as exc:  # the tool's own failure on a schema it cannot render: name it
        raise BindgenError(f"datamodel-code-generator could not render the tool schemas: {exc}") from exc
    if not isinstance(source, str):
        raise BindgenError("datamodel-code-generator returned several modules; expected one")
    module = passes.apply(
        source,
        *base_passes(),
        passes.DropRebuildCalls(),
    )
    imports: dict[str, set[str]] = {}
    body: list[cst.BaseStatement] = []
    classes: dict[str, list[Param] | None] = {}
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.ImportFrom):
            node = stmt.body[0]
            name = module.code_for_node(node.module) if node.module is not None else ""
            if name != "__future__" and not isinstance(node.names, cst.ImportStar):
                imports.setdefault(name, set()).update(module.code_for_node(alias.name) for alias in node.names)
            continue
        if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Import):
            raise BindgenError("datamodel-code-generator emitted a plain import; expected `from` imports only")
        body.append(stmt)
        if isinstance(stmt, cst.ClassDef):
            classes[stmt.name.value] = _fields(module, stmt)
    code = module.with_changes(body=body, header=[]).code
    used = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code))
    imports = {m: {n for n in names if n.split(" as ")[-1] in used} for m, names in imports.items()}
    return RenderedModels(code, {m: names for m, names in imports.items() if names}, classes)


def _fields(module: cst.Module, cls: cst.ClassDef) -> list[Param] | None:
    bases = [module.code_for_node(arg.value) for arg in cls.bases]
    if bases != ["BaseModel"]:
        return None
    params: list[Param] = []
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else []
    for index, stmt in enumerate(body):
        if not isinstance(stmt, cst.SimpleStatementLine) or not isinstance(stmt.body[0], cst.AnnAssign):
            continue
        assign = stmt.body[0]
        if not isinstance(assign.target, cst.Name) or assign.target.value.startswith("_"):
            continue
        annotation, description = _unannotated(module, assign.annotation.annotation)
        default: str | None = None
        if assign.value is not None:
            value = assign.value
            simple = isinstance(value, _LITERAL_NODES) or (
                isinstance(value, cst.Name) and value.value in _LITERAL_NAMES
            )
            default = module.code_for_node(value) if simple else "None"
            if default == "None" and not _admits_none(annotation):
                annotation = f"{annotation} | None"
        description = description or _attribute_doc(body[index + 1] if index + 1 < len(body) else None)
        params.append(Param(assign.target.value, annotation, default, description))
    return params


def _attribute_doc(stmt: cst.BaseStatement | None) -> str:
    """The docstring datamodel-code-generator writes under a field (its schema description)."""
    if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr):
        value = stmt.body[0].value
        if isinstance(value, cst.SimpleString):
            evaluated = value.evaluated_value
            return " ".join(evaluated.split()) if isinstance(evaluated, str) else ""
    return ""


def _admits_none(annotation: str) -> bool:
    return annotation == "None" or annotation.endswith("| None") or annotation == "Any"


def _unannotated(module: cst.Module, node: cst.BaseExpression) -> tuple[str, str]:
    """`Annotated[T, Field(description="d")]` -> ("T", "d"); anything else as it is."""
    if (
        isinstance(node, cst.Subscript)
        and isinstance(node.value, cst.Name)
        and node.value.value == "Annotated"
        and node.slice
    ):
        first = node.slice[0].slice
        inner = module.code_for_node(first.value) if isinstance(first, cst.Index) else module.code_for_node(node)
        description = ""
        for element in node.slice[1:]:
            call = element.slice.value if isinstance(element.slice, cst.Index) else None
            if isinstance(call, cst.Call):
                for arg in call.args:
                    if arg.keyword is not None and arg.keyword.value == "description":
                        if isinstance(arg.value, cst.SimpleString):
                            evaluated = arg.value.evaluated_value
                            description = evaluated if isinstance(evaluated, str) else ""
        return inner, description
    return module.code_for_node(node), ""
