"""Render the IR: the models (datamodel-code-generator over the IR's JSON Schema definitions, with
the protocol models' options and libcst passes), each tool's keyword parameters read from its
arguments model's fields (CST, never text), then the modules and files from `templates/openapi/`."""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from typing import Any

import libcst as cst
from datamodel_code_generator import generate

from mcp_bindings.openapi.ir import ApiIR, Operation, Scheme, resource_uri, tool_annotations

from .. import __version__
from ..errors import BindgenError
from ..format import format_python
from ..render import passes
from ..render.models import DCG_OPTIONS, base_passes
from ..render.templates import render
from .model_modules import base_class, split_models

# The types a tool gives back when its answer is not JSON validated into a model.
_RETURNS = {"text": "str", "binary": "Embedded", "empty": "str"}
# pydantic's protected namespaces: a field starting so is warned about at import (`model_dump_`).
_PROTECTED = ("model_dump", "model_validate")


@dataclass(frozen=True)
class ParamView:
    name: str  # the Python parameter
    annotation: str
    default: str | None
    prop: str  # the input schema's property, as a Python literal
    unaliased: str = ""  # the annotation without `alias=` (a resource template's variable is the parameter's name)


@dataclass(frozen=True)
class ToolView:
    function: str
    constant: str  # the operation's constant in operations.py
    tool: str  # literals below
    description: str
    annotations: str
    params: list[ParamView]
    returns: str
    op: str  # the Operation(...) expression
    resource: str | None  # a resource's URI (template), as a literal; None: a tool
    name: str  # the tool's (or resource's) name, plain
    what: str  # `GET /pets/{petId}`
    uri: str | None  # the resource's URI (template), plain


@dataclass(frozen=True)
class Models:
    module: cst.Module  # without the arguments classes
    imports: dict[str, tuple[str, str]]  # name -> (module, `name` or `name as alias`): the tool's own imports
    fields: dict[str, list[ParamView]]  # arguments class -> its fields as parameters
    names: set[str]  # the module's top-level names
    base_module: str  # where the models' base class is (never imported by the tools)


def render_models(ir: ApiIR, package: str) -> Models:
    document = {"$defs": ir.schemas}
    # The protocol models' options; descriptions in `Field(...)`, where the tools' schemas carry them.
    options: dict[str, Any] = {**DCG_OPTIONS, "use_field_description": False, "base_class": base_class(package)}
    try:
        source = generate(json.dumps(document), **options)
    except Exception as exc:  # the tool's own failure on a schema it cannot render: name it
        raise BindgenError(
            f"datamodel-code-generator could not render the schemas: {' '.join(str(exc).split())[:500]}"
        ) from exc
    if not isinstance(source, str):
        raise BindgenError("datamodel-code-generator returned several modules; expected one")
    module = passes.apply(source, *base_passes(), passes.DropRebuildCalls(), _RequiredOverrides(base_class(package)))
    arguments = {op.arguments for op in ir.operations}
    imports: dict[str, tuple[str, str]] = {}
    body: list[cst.BaseStatement] = []
    fields: dict[str, list[ParamView]] = {}
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.ImportFrom):
            node = stmt.body[0]
            origin = module.code_for_node(node.module) if node.module is not None else ""
            if origin != "__future__" and not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    # local name -> (module, what is imported: `list as list_aliased` where it is renamed)
                    local = module.code_for_node(alias.asname.name if alias.asname else alias.name)
                    imports[local] = (origin, module.code_for_node(alias).strip(", "))
        if isinstance(stmt, cst.ClassDef) and stmt.name.value in arguments:
            fields[stmt.name.value] = _fields(module, stmt)
            continue
        body.append(stmt)
    kept = module.with_changes(body=body)
    names = set(passes.top_level_names(kept))
    missing = sorted(arguments - set(fields)) + sorted(
        {op.response.schema for op in ir.operations if op.response.schema} - names
    )
    if missing:
        raise BindgenError(f"the rendered models lack {', '.join(missing)} (datamodel-code-generator renamed them)")
    return Models(kept, imports, fields, names, base_class(package).rsplit(".", 1)[0])


class _RequiredOverrides(cst.CSTTransformer):
    """A required field of a model deriving from another model (an `allOf`) as `name: T = Field()`:
    pydantic reads it as required either way, but pyright (standard) reports a bare `name: T` that
    redefines a base's field with a default ("overrides a field of the same name but is missing a
    default value"; GitHub's `AppsCreateFromManifestResponse.client_id`)."""

    def __init__(self, base: str) -> None:
        super().__init__()
        self.base = base.rsplit(".", 1)[1]
        self.changed = False

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        bases = [b.value.value for b in updated_node.bases if isinstance(b.value, cst.Name)]
        if bases == [self.base] or not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        body: list[cst.BaseStatement] = []
        for stmt in updated_node.body.body:
            first = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) else None
            if isinstance(first, cst.AnnAssign) and first.value is None and isinstance(first.target, cst.Name):
                stmt = stmt.with_changes(body=[first.with_changes(value=cst.parse_expression("Field()"))])
                self.changed = True
            body.append(stmt)
        return updated_node.with_changes(body=updated_node.body.with_changes(body=body))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if not self.changed:
            return updated_node
        return updated_node.with_changes(body=[cst.parse_statement("from pydantic import Field"), *updated_node.body])


def _fields(module: cst.Module, cls: cst.ClassDef) -> list[ParamView]:
    """An arguments class's fields, each `name: annotation = default` as a keyword parameter."""
    out: list[ParamView] = []
    statements = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else []
    for stmt in statements:
        if not isinstance(stmt, cst.SimpleStatementLine) or not isinstance(stmt.body[0], cst.AnnAssign):
            continue
        assign = stmt.body[0]
        if not isinstance(assign.target, cst.Name):
            continue
        name = assign.target.value
        annotation = module.code_for_node(assign.annotation.annotation)
        default = module.code_for_node(assign.value) if assign.value is not None else None
        alias = _alias(assign.annotation.annotation)
        unaliased = annotation
        if alias:
            dropped = assign.annotation.annotation.visit(_DropAlias())
            unaliased = module.code_for_node(dropped) if isinstance(dropped, cst.CSTNode) else annotation
        if name.startswith(_PROTECTED):  # pydantic warns about such a field of the tool's arguments model
            if not alias:
                alias, annotation = name, f"Annotated[{annotation}, Field(alias={name!r})]"
            name = f"field_{name}"
        out.append(ParamView(name, annotation, default, repr(alias or name), unaliased))
    return out


def _alias(node: cst.BaseExpression) -> str | None:
    """The `alias=` of an `Annotated[..., Field(alias=...)]`."""
    for call in _calls(node):
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "alias" and isinstance(arg.value, cst.SimpleString):
                value = arg.value.evaluated_value
                return value if isinstance(value, str) else None
    return None


class _DropAlias(cst.CSTTransformer):
    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg | cst.RemovalSentinel:
        keyword = updated_node.keyword
        return cst.RemoveFromParent() if keyword is not None and keyword.value == "alias" else updated_node


def _calls(node: cst.CSTNode) -> list[cst.Call]:
    found: list[cst.Call] = []

    class Collect(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found.append(node)

    node.visit(Collect())
    return found


def used_names(code: str) -> set[str]:
    found: set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

    cst.parse_module(code).visit(Collect())
    return found


def _operation(op: Operation, package: str) -> str:
    params = ", ".join(
        f"openapi.Param({p.prop!r}, {p.name!r}, {p.location!r}"
        + (", explode=False" if not p.explode else "")
        + (", deep=True" if p.deep else "")
        + ")"
        for p in op.params
    )
    body = (
        f"openapi.Body({op.body.prop!r}, {op.body.media_type!r}, {op.body.kind!r}, {op.body.files!r})"
        if op.body
        else "None"
    )
    response = op.response
    # The model, named for the runtime to import on the first answer (importing every model the tools
    # answer with would be most of a large API's start-up).
    returns = repr(f"{package}.models:{response.schema}") if response.schema else "None"
    answer = f"openapi.Answer({response.kind!r}, {response.media_type!r}, {returns})"
    return (
        f"openapi.Operation({op.tool!r}, {op.method!r}, {op.path!r}, params=({params}{',' if op.params else ''}), "
        f"body={body}, answer={answer}, security={op.security!r})"
    )


def tool_views(ir: ApiIR, models: Models, package: str) -> list[ToolView]:
    views: list[ToolView] = []
    for op in ir.operations:
        params = [_qualified(p, models.names) for p in models.fields[op.arguments]]
        required = [p for p in params if p.default is None]
        optional = [p for p in params if p.default is not None]
        returns = _RETURNS[op.response.kind] if op.response.kind != "json" else (op.response.schema or "Any")
        returns = _in_models(returns, models.names)
        views.append(
            ToolView(
                function=op.function,
                constant=op.function.upper().rstrip("_"),
                tool=repr(op.tool),
                description=repr(op.description),
                annotations=repr(tool_annotations(op.method)),
                params=[*required, *optional],
                returns=returns,
                op=_operation(op, package),
                resource=repr(_uri(ir, op, params)) if op.resource else None,
                name=op.tool,
                what=f"{op.method} {op.path}",
                uri=_uri(ir, op, params) if op.resource else None,
            )
        )
    return views


# What the server module calls its models package (`from . import models as MODELS`): a tool's
# annotations name a model as `_models.Pet`, resolved when the tool is first called (the module is
# written with `from __future__ import annotations`), so starting the server imports no model. No
# argument can take the name (arguments never start with `_`), nor can a model (they are classes).
MODELS = "_models"


class _Qualify(cst.CSTTransformer):
    """Each model name of an expression as `_models.Name` (an attribute's own name and a keyword
    argument's name are not expressions: left as they are)."""

    def __init__(self, names: set[str]) -> None:
        super().__init__()
        self.names = names

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        if updated_node.value in self.names:
            return cst.Attribute(value=cst.Name(MODELS), attr=updated_node)
        return updated_node

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.Attribute:
        return updated_node.with_changes(attr=original_node.attr)

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        return updated_node.with_changes(keyword=original_node.keyword)


def _in_models(code: str, names: set[str]) -> str:
    """`code` (an annotation or a default) with its model names as `_models.Name`."""
    if not names.intersection(used_names(code)):
        return code
    expression = cst.parse_expression(code)
    qualified = expression.visit(_Qualify(names))
    return cst.Module([]).code_for_node(qualified) if isinstance(qualified, cst.CSTNode) else code


def _qualified(param: ParamView, names: set[str]) -> ParamView:
    default = _in_models(param.default, names) if param.default is not None else None
    return ParamView(
        param.name, _in_models(param.annotation, names), default, param.prop, _in_models(param.unaliased, names)
    )


def _uri(ir: ApiIR, op: Operation, params: list[ParamView]) -> str:
    """A resource's URI (template), its variables named as the function's parameters."""
    python = {ast.literal_eval(p.prop): p.name for p in params}
    return resource_uri(op, ir.uri_scheme, lambda param: python[param.prop])


def _imports(code: str, models: Models, exclude: set[str]) -> list[str]:
    """The imports `code` (the tools' signatures) needs besides the models: their own imports
    (`from typing import Annotated`)."""
    used = used_names(code) - exclude
    by_module: dict[str, list[str]] = {}
    known = {"Any": ("typing", "Any"), "Annotated": ("typing", "Annotated"), "Field": ("pydantic", "Field")}
    known |= models.imports
    for name in sorted(used):
        origin, imported = known.get(name, ("", ""))
        if origin and name not in models.names and origin != models.base_module:
            by_module.setdefault(origin, []).append(imported)
    return [f"from {m} import {', '.join(ns)}" for m, ns in sorted(by_module.items())]


def _scheme(scheme: Scheme) -> str:
    where = f", location={scheme.location!r}, param={scheme.param!r}" if scheme.kind == "api_key" else ""
    where += f", token_url={scheme.token_url!r}, scopes={scheme.scopes!r}" if scheme.kind == "oauth2" else ""
    return f"{scheme.name!r}: openapi.Scheme({scheme.kind!r}, env={scheme.env!r}{where})"


def _instructions(ir: ApiIR) -> str:
    text = f"Tools calling the {ir.title} HTTP API at {ir.base_url}, one per operation of its OpenAPI description."
    return f"{text}\n\n{ir.description}" if ir.description else text


def render_package(ir: ApiIR, package: str, generator_command: str) -> dict[str, str]:
    """Path (relative to the output folder) -> content of every file of the generated project."""
    models = render_models(ir, package)
    views = tool_views(ir, models, package)
    header = render("header.py.j2", generator_version=__version__, source=ir.source).replace(
        "change the generator, its templates or policy files, then run `mcp-bindgen generate`",
        f"run `{generator_command}` again",
    )
    context: dict[str, Any] = {
        "ir": ir,
        "package": package,
        "tools": views,
        "header": header.rstrip("\n"),
        "name": repr(package),
        "version": repr(ir.api_version or "0.1.0"),
        "instructions": repr(_instructions(ir)),
        "base_url": repr(ir.base_url),
        "scheme_lines": [_scheme(s) for s in ir.schemes.values()],
    }
    signature_code = "\n".join(
        f"def f({', '.join(f'{p.name}: {p.annotation}' + (f' = {p.default}' if p.default else '') for p in v.params)})"
        f" -> {v.returns}: ..."
        for v in views
    )
    server_imports = _imports(signature_code, models, {"Embedded"})
    src = f"src/{package}"
    files = {
        **{
            f"{src}/{path}": format_python(source, f"{package}/{path}")
            for path, source in split_models(models.module, context["header"], ir.title).items()
        },
        f"{src}/operations.py": format_python(
            render("openapi/operations.py.j2", **context), f"{package}/operations.py"
        ),
        f"{src}/server.py": format_python(
            render(
                "openapi/server.py.j2", **context, models=MODELS in used_names(signature_code), imports=server_imports
            ),
            f"{package}/server.py",
        ),
        f"{src}/__init__.py": format_python(render("openapi/init.py.j2", **context), f"{package}/__init__.py"),
        f"{src}/__main__.py": format_python(render("openapi/main.py.j2", **context), f"{package}/__main__.py"),
        f"{src}/py.typed": "",
        "src/server.py": format_python(render("openapi/entry.py.j2", **context), "src/server.py"),
        "README.md": render("openapi/README.md.j2", **context, command=generator_command),
        "pyproject.toml": render("openapi/pyproject.toml.j2", **context),
    }
    return files
