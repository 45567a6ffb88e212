"""Emit the IR as the JSON Schema that datamodel-code-generator renders model bodies from.

Every object is a named `$defs` entry (the IR already hoisted anonymous ones), so the generator
never invents a name. Two choices are made here rather than left to it: JSON `number` becomes
`integer | number` so ints stay ints, and IR-detected discriminators are written as `discriminator`.
"""

from __future__ import annotations

from typing import Any

from ..ir import (
    NO_DEFAULT,
    AliasDef,
    ArrayOf,
    Const,
    Enum,
    Field,
    MapOf,
    ObjectDef,
    Ref,
    Scalar,
    SchemaIR,
    TypeExpr,
    UnionOf,
)


def type_schema(expr: TypeExpr, py_names: dict[str, str]) -> dict[str, Any]:
    if isinstance(expr, Ref):
        return {"$ref": f"#/$defs/{py_names.get(expr.name, expr.name)}"}
    if isinstance(expr, Scalar):
        if expr.kind == "any":
            return {}
        # Keep 1 as int and 1.5 as float: a bare `number` renders as `float` and turns 1 into 1.0.
        kind: Any = ["integer", "number"] if expr.kind == "number" else expr.kind
        return {"type": kind, **dict(expr.constraints)}
    if isinstance(expr, Const):
        return {"const": expr.value}
    if isinstance(expr, Enum):
        return {"enum": list(expr.values)}
    if isinstance(expr, ArrayOf):
        return {"type": "array", "items": type_schema(expr.items, py_names), **dict(expr.constraints)}
    if isinstance(expr, MapOf):
        return {"type": "object", "additionalProperties": type_schema(expr.values, py_names)}
    if isinstance(expr, UnionOf):
        nullable = _nullable_constrained(expr)
        if nullable is not None:
            # One `type` list, so the tool keeps the constraints inline instead of naming the member.
            return {**type_schema(nullable, py_names), "type": [nullable.kind, "null"]}
        scalars = _constrained_scalars(expr)
        if scalars is not None:
            # `string | integer(minimum, maximum)` (a JSON-RPC id): one `type` list with the constraints,
            # which apply only to the kind they are for, so the tool does not name the member.
            return _scalar_list(scalars)
        out: dict[str, Any] = {"anyOf": [type_schema(m, py_names) for m in expr.members]}
        if expr.discriminator:
            out = {"oneOf": out["anyOf"], "discriminator": {"propertyName": expr.discriminator}}
        return out
    raise TypeError(f"unknown type expression {expr!r}")


def _nullable_constrained(expr: UnionOf) -> Scalar | None:
    """The constrained scalar of a `scalar-with-constraints | null` union (a task's `ttlMs`)."""
    if len(expr.members) != 2 or Scalar("null") not in expr.members:
        return None
    other = next(m for m in expr.members if m != Scalar("null"))
    if isinstance(other, Scalar) and other.constraints and other.kind in ("string", "integer", "boolean"):
        return other
    return None


def _constrained_scalars(expr: UnionOf) -> list[Scalar] | None:
    """The members of a union of scalars of different kinds, one or more with constraints none of
    the others shares (each keyword applies to one JSON type only); None for any other union."""
    members = expr.members
    if expr.discriminator or not all(isinstance(m, Scalar) for m in members):
        return None
    scalars = [m for m in members if isinstance(m, Scalar)]
    kinds = [m.kind for m in scalars]
    if len(set(kinds)) != len(kinds) or "any" in kinds or not any(m.constraints for m in scalars):
        return None
    if "number" in kinds and "integer" in kinds:  # numeric constraints would apply to both
        return None
    keywords = [k for m in scalars for k, _ in m.constraints]
    if len(set(keywords)) != len(keywords) or any(m.format for m in scalars):
        return None
    return scalars


def _scalar_list(scalars: list[Scalar]) -> dict[str, Any]:
    types: list[str] = []
    for m in scalars:
        types += ["integer", "number"] if m.kind == "number" else [m.kind]
    out: dict[str, Any] = {"type": types}
    for m in scalars:
        out.update(dict(m.constraints))
    return out


def definition_schema(definition: ObjectDef | AliasDef, py_names: dict[str, str]) -> dict[str, Any]:
    if isinstance(definition, AliasDef):
        out = type_schema(definition.type, py_names)
    else:
        out = {
            "type": "object",
            "properties": {f.wire_name: _field_schema(f, py_names) for f in definition.fields},
        }
        required = [f.wire_name for f in definition.fields if f.required]
        if required:
            out["required"] = required
        # "allow" is the base model's default, so only the other two are spelled out.
        if definition.extra == "forbid":
            out["additionalProperties"] = False
        elif definition.extra != "allow":
            out["additionalProperties"] = type_schema(definition.extra, py_names)
    return _described(out, definition.description)


def _field_schema(field: Field, py_names: dict[str, str]) -> dict[str, Any]:
    schema = _described(type_schema(field.type, py_names), field.description)
    if field.default is not NO_DEFAULT:
        schema = {**schema, "default": field.default}
    return schema


def _described(schema: dict[str, Any], description: str | None) -> dict[str, Any]:
    if description and "$ref" not in schema:
        return {**schema, "description": description}
    return schema


def dcg_document(ir: SchemaIR) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {ir.py_name(name): definition_schema(d, ir.py_names) for name, d in ir.definitions.items()},
    }


def field_aliases(ir: SchemaIR) -> dict[str, str]:
    """Wire name -> Python attribute, for every field of every object (one rule, so one global map)."""
    aliases: dict[str, str] = {}
    for definition in ir.definitions.values():
        if isinstance(definition, ObjectDef):
            for f in definition.fields:
                if f.py_name == f.wire_name:
                    continue
                previous = aliases.setdefault(f.wire_name, f.py_name)
                assert previous == f.py_name, (f.wire_name, previous, f.py_name)
    return dict(sorted(aliases.items()))
