"""The intermediate representation the generator owns.

Everything after lowering (model rendering, method tables, stubs, diffs) reads this, never the raw
schema. Type expressions are small frozen dataclasses; definitions are named, ordered and carry the
JSON pointer they came from, so errors and golden files can point back at the schema.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

JSONScalar = str | int | float | bool | None
ScalarKind = Literal["string", "integer", "number", "boolean", "null", "any"]


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class Scalar:
    kind: ScalarKind
    format: str | None = None
    # Sorted (keyword, value) pairs, e.g. (("maximum", 1), ("minimum", 0)).
    constraints: tuple[tuple[str, JSONScalar], ...] = ()


@dataclass(frozen=True)
class Const:
    value: JSONScalar


@dataclass(frozen=True)
class Enum:
    values: tuple[JSONScalar, ...]


@dataclass(frozen=True)
class ArrayOf:
    items: TypeExpr
    constraints: tuple[tuple[str, JSONScalar], ...] = ()


@dataclass(frozen=True)
class MapOf:
    """An object with no named properties whose values all have one type."""

    values: TypeExpr


@dataclass(frozen=True)
class UnionOf:
    members: tuple[TypeExpr, ...]
    # Wire name of a required property that holds a distinct constant in every member.
    discriminator: str | None = None


TypeExpr = Ref | Scalar | Const | Enum | ArrayOf | MapOf | UnionOf

# What an object does with keys it does not name: keep them untyped, keep them typed, or reject them.
Extra = Literal["allow", "forbid"] | TypeExpr


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __reduce__(self) -> str:
        # Unpickled as the one NO_DEFAULT (an IR comes back from a render worker; `is` and `==` hold).
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()


@dataclass(frozen=True)
class Field:
    wire_name: str
    py_name: str
    type: TypeExpr
    required: bool
    description: str | None = None
    # A Python-side default for a field the schema requires (policy/field_defaults.json).
    default: Any = NO_DEFAULT


@dataclass(frozen=True)
class ObjectDef:
    name: str
    origin: str  # JSON pointer into the normalised schema
    fields: tuple[Field, ...]
    extra: Extra
    description: str | None = None
    hoisted: bool = False  # True for anonymous nested objects given a name by location

    def field(self, wire_name: str) -> Field | None:
        return next((f for f in self.fields if f.wire_name == wire_name), None)


@dataclass(frozen=True)
class AliasDef:
    """A named type that is not an object: a union, a scalar, an array, a map."""

    name: str
    origin: str
    type: TypeExpr
    description: str | None = None
    hoisted: bool = False


Definition = ObjectDef | AliasDef


@dataclass
class SchemaIR:
    version: str
    sha256: str
    dialect: str
    definitions: dict[str, Definition] = field(default_factory=dict)
    # Names that are definitions of the upstream schema (as opposed to hoisted ones).
    upstream_names: tuple[str, ...] = ()
    # Definition name -> class name inside models.py, where they differ (see policy/type_names.json).
    py_names: dict[str, str] = field(default_factory=dict)
    # JSON pointers of the schema patches applied before lowering (policy/schema_patches.json).
    patches: tuple[str, ...] = ()

    def py_name(self, name: str) -> str:
        return self.py_names.get(name, name)

    def get(self, name: str) -> Definition:
        return self.definitions[name]

    def resolve(self, expr: TypeExpr) -> TypeExpr | ObjectDef:
        """Follow Refs (through alias chains) to the object or non-Ref expression they name."""
        seen: set[str] = set()
        while isinstance(expr, Ref):
            if expr.name in seen:
                return expr
            seen.add(expr.name)
            target = self.definitions[expr.name]
            if isinstance(target, ObjectDef):
                return target
            expr = target.type
        return expr

    def object(self, name: str) -> ObjectDef:
        target = self.definitions[name]
        if not isinstance(target, ObjectDef):
            raise TypeError(f"{name} is not an object definition")
        return target


def _refs(expr: TypeExpr) -> set[str]:
    if isinstance(expr, Ref):
        return {expr.name}
    if isinstance(expr, ArrayOf):
        return _refs(expr.items)
    if isinstance(expr, MapOf):
        return _refs(expr.values)
    if isinstance(expr, UnionOf):
        return set().union(*(_refs(m) for m in expr.members))
    return set()


def references(definition: Definition) -> set[str]:
    """The definition names a definition refers to directly."""
    if isinstance(definition, AliasDef):
        return _refs(definition.type)
    out: set[str] = set()
    for f in definition.fields:
        out |= _refs(f.type)
    if not isinstance(definition.extra, str):
        out |= _refs(definition.extra)
    return out
