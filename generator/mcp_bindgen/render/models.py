"""Render one version's models: IR -> JSON Schema -> datamodel-code-generator -> libcst passes."""

from __future__ import annotations

from typing import Any

import libcst as cst
from datamodel_code_generator import InputFileType, LiteralType, PythonVersion, generate
from datamodel_code_generator.enums import DataModelType, StrictTypes

from ..errors import BindgenError
from ..ir import NO_DEFAULT, ObjectDef, Scalar, SchemaIR, TypeExpr, UnionOf, references
from . import passes
from .dcg_schema import dcg_document, field_aliases

# The tool names the (schema-less) document root; this name marks it for removal.
_ROOT_PLACEHOLDER = "DocumentRootPlaceholder"
BASE_CLASS = "MCPModel"

# The datamodel-code-generator options the version models and the contract tools' models share
# (`contract/models.py`); each caller adds its own (base class, aliases, strictness, extra fields).
DCG_OPTIONS: dict[str, Any] = {
    "input_file_type": InputFileType.JsonSchema,
    "output_model_type": DataModelType.PydanticV2BaseModel,
    "target_python_version": PythonVersion.PY_311,
    "class_name": _ROOT_PLACEHOLDER,
    "snake_case_field": True,
    "use_annotated": True,
    "field_constraints": True,
    "use_union_operator": True,
    "use_standard_collections": True,
    "enum_field_as_literal": LiteralType.All,
    "use_type_alias_type": True,
    "strict_nullable": True,
    "use_schema_description": True,
    "use_field_description": True,
    "use_double_quotes": True,
    "disable_timestamp": True,
    "formatters": [],
}


def base_passes() -> list[cst.CSTTransformer]:
    """The libcst passes every output of the tool goes through first: the placeholder root dropped,
    the tool's header comments stripped, typed extras, recursive aliases before their users."""
    return [
        passes.DropTopLevel({_ROOT_PLACEHOLDER}),
        passes.StripHeaderComments(),
        passes.TypedExtras(),
        passes.RecursiveAliasesFirst(),
        passes.ConstrainedAsAnnotated(),
    ]


def render_models(ir: SchemaIR, package: str) -> str:
    """Source of `models.py` (unformatted) with exactly one top-level name per IR definition.

    `package` is the dotted name of the version package, where `_base.MCPModel` lives.
    """
    return render_models_module(ir, package).code


def render_models_module(ir: SchemaIR, package: str) -> cst.Module:
    """`render_models` as a CST (what `split.split_models` cuts into a package)."""
    source = generate(
        dcg_document(ir),
        **DCG_OPTIONS,
        base_class=f"{package}._base.{BASE_CLASS}",
        aliases=field_aliases(ir),
        # Strict scalars everywhere, so an alias validated on its own (RequestId) is as strict as a model;
        # a field with a policy default is still never null.
        strict_types=[StrictTypes.str, StrictTypes.int, StrictTypes.float, StrictTypes.bool],
    )
    if not isinstance(source, str):
        raise BindgenError("datamodel-code-generator returned several modules; expected one")
    module = passes.apply(
        source,
        *base_passes(),
        passes.RejectNullForOptional(_optional_non_nullable(ir)),
        passes.WriteRequiredNulls(_required_nullable(ir)),
        passes.DropRebuildCalls(),
        passes.EagerAnnotations(_references(ir)),
    )
    _check_names(ir, passes.top_level_names(module))
    return module


def _admits_null(ir: SchemaIR, expr: TypeExpr) -> bool:
    target = ir.resolve(expr)
    if isinstance(target, Scalar):
        return target.kind in ("null", "any")
    if isinstance(target, UnionOf):
        return any(_admits_null(ir, member) for member in target.members)
    return False


def _optional_non_nullable(ir: SchemaIR) -> dict[str, set[str]]:
    """Class name -> Python names of its fields that may be absent but never null."""
    out: dict[str, set[str]] = {}
    for name, definition in ir.definitions.items():
        if isinstance(definition, ObjectDef):
            names = {
                f.py_name
                for f in definition.fields
                if not f.required and f.default is NO_DEFAULT and not _admits_null(ir, f.type)
            }
            if names:
                out[ir.py_name(name)] = names
    return out


def _required_nullable(ir: SchemaIR) -> dict[str, tuple[tuple[str, str], ...]]:
    """Class name -> (Python name, wire name) of its fields the schema requires and lets be null
    (`ttl: integer | null`, or any JSON value), which must be written even when None."""
    out: dict[str, tuple[tuple[str, str], ...]] = {}
    for name, definition in ir.definitions.items():
        if isinstance(definition, ObjectDef):
            pairs = tuple(
                (f.py_name, f.wire_name) for f in definition.fields if f.required and _admits_null(ir, f.type)
            )
            if pairs:
                out[ir.py_name(name)] = pairs
    return out


def _references(ir: SchemaIR) -> dict[str, set[str]]:
    """Class name -> the class and alias names its fields refer to."""
    return {ir.py_name(name): {ir.py_name(r) for r in references(d)} for name, d in ir.definitions.items()}


def _check_names(ir: SchemaIR, rendered: list[str]) -> None:
    expected = {ir.py_name(name) for name in ir.definitions}
    public = {n for n in rendered if not n.startswith("_")}
    missing = sorted(expected - public)
    invented = sorted(public - expected)
    if missing or invented:
        raise BindgenError(
            f"{ir.version}: rendered models do not match the IR: missing {missing}, invented by the tool {invented}"
        )
