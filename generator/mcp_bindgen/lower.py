"""Lower a normalised schema into the IR.

Anonymous nested objects are hoisted into named definitions whose names come from their location
(`ClientCapabilities.roots` -> `ClientCapabilitiesRoots`, array items -> `...Item`, map values ->
`...Value`), so no generated name is ever a counter. `allOf` compositions are merged into one object.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import BindgenError
from .ir import (
    NO_DEFAULT,
    AliasDef,
    ArrayOf,
    Const,
    Definition,
    Enum,
    Extra,
    Field,
    MapOf,
    ObjectDef,
    Ref,
    Scalar,
    SchemaIR,
    TypeExpr,
    UnionOf,
)
from .naming import field_default, pascal_case, snake_case, type_renames
from .normalise import NormalisedSchema

_SCALAR_KINDS = ("string", "integer", "number", "boolean", "null")
_CONSTRAINT_KEYS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern")
_ARRAY_CONSTRAINT_KEYS = ("minItems", "maxItems")
# Preferred discriminators, in order; any other shared required constant is used after these.
_PREFERRED_DISCRIMINATORS = ("method", "type", "mode")
_REF_PREFIX = "#/$defs/"


def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def _is_object_schema(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "object" or "properties" in schema


class _Lowerer:
    def __init__(self, schema: NormalisedSchema) -> None:
        self.schema = schema
        self.defs: dict[str, Definition] = {}
        self.upstream = set(schema.defs)

    # -- definitions -------------------------------------------------------------------------

    def run(self) -> SchemaIR:
        for name in sorted(self.schema.defs):
            self._definition(name, self.schema.defs[name], f"/$defs/{_escape(name)}", hoisted=False)
        ordered = {name: self.defs[name] for name in sorted(self.defs)}
        return SchemaIR(
            version=self.schema.version,
            sha256=self.schema.sha256,
            dialect=self.schema.dialect,
            definitions=ordered,
            upstream_names=tuple(sorted(self.upstream)),
            py_names={name: py for name, py in type_renames().items() if name in ordered},
            patches=tuple(p.pointer for p in self.schema.patches),
        )

    def _claim(self, name: str, origin: str, hoisted: bool) -> None:
        if name in self.defs or (hoisted and name in self.upstream):
            raise BindgenError(
                f"{self.schema.version}: the name {name!r} for {origin} is already taken; "
                "give one of them another name in the lowering rules"
            )

    def _definition(self, name: str, schema: dict[str, Any], origin: str, hoisted: bool) -> None:
        self._claim(name, origin, hoisted)
        description = schema.get("description")
        if "allOf" in schema:
            self.defs[name] = self._merged_object(name, schema, origin, hoisted)
        elif _is_object_schema(schema) and schema.get("properties"):
            self.defs[name] = self._object(name, schema, origin, hoisted)
        else:
            self.defs[name] = AliasDef(name, origin, self._expr(schema, name, origin, top=True), description, hoisted)

    def _object(self, name: str, schema: dict[str, Any], origin: str, hoisted: bool) -> ObjectDef:
        properties: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        fields = []
        for wire in properties:
            prop = properties[wire]
            default = field_default(name, wire, prop) if wire in required else NO_DEFAULT
            fields.append(
                Field(
                    wire_name=wire,
                    py_name=snake_case(wire),
                    type=self._expr(prop, name + pascal_case(wire), f"{origin}/properties/{_escape(wire)}"),
                    required=wire in required and default is NO_DEFAULT,
                    description=prop.get("description"),
                    default=default,
                )
            )
        for wire in sorted(required - set(properties)):
            # Required but untyped: JSON Schema accepts any value there.
            fields.append(Field(wire, snake_case(wire), Scalar("any"), True, None))
        self._check_unique_py_names(name, fields)
        extra = self._extra(schema, name, origin)
        return ObjectDef(name, origin, tuple(fields), extra, schema.get("description"), hoisted)

    def _check_unique_py_names(self, name: str, fields: list[Field]) -> None:
        seen: dict[str, str] = {}
        for f in fields:
            if f.py_name in seen:
                raise BindgenError(
                    f"{self.schema.version}: {name} has two wire keys {seen[f.py_name]!r} and {f.wire_name!r} "
                    f"that both map to the attribute {f.py_name!r}; add a rename to policy/field_names.json"
                )
            seen[f.py_name] = f.wire_name

    def _extra(self, schema: dict[str, Any], name: str, origin: str) -> Extra:
        extra = schema.get("additionalProperties", True)
        if extra is False:
            return "forbid"
        if extra is True or extra == {}:
            return "allow"
        return self._expr(extra, name + "Value", f"{origin}/additionalProperties")

    def _merged_object(self, name: str, schema: dict[str, Any], origin: str, hoisted: bool) -> ObjectDef:
        """Merge `allOf` parts (references to object definitions or inline objects) into one object."""
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for index, part in enumerate(schema["allOf"]):
            part_schema = self._deref(part, f"{origin}/allOf/{index}")
            if not _is_object_schema(part_schema):
                raise BindgenError(f"{self.schema.version}: allOf part {origin}/allOf/{index} is not an object")
            merged["properties"].update(part_schema.get("properties", {}))
            merged["required"] += [r for r in part_schema.get("required", []) if r not in merged["required"]]
            if part_schema.get("additionalProperties") is False:
                merged["additionalProperties"] = False
        merged["description"] = schema.get("description") or self._deref(schema["allOf"][0], origin).get("description")
        return self._object(name, merged, origin, hoisted)

    def _deref(self, schema: dict[str, Any], origin: str) -> dict[str, Any]:
        seen = set()
        while "$ref" in schema:
            target = schema["$ref"][len(_REF_PREFIX) :]
            if target in seen or target not in self.schema.defs:
                raise BindgenError(f"{self.schema.version}: unresolvable $ref {schema['$ref']!r} at {origin}")
            seen.add(target)
            schema = self.schema.defs[target]
        return schema

    # -- type expressions --------------------------------------------------------------------

    def _expr(self, schema: Any, context: str, origin: str, top: bool = False) -> TypeExpr:
        """The type of `schema`; `context` names anything hoisted from it, `top` marks a definition's own body."""
        if schema is True or schema == {}:
            return Scalar("any")
        if not isinstance(schema, dict):
            raise BindgenError(f"{self.schema.version}: unsupported schema at {origin}: {schema!r}")
        if "$ref" in schema:
            target = schema["$ref"][len(_REF_PREFIX) :]
            if target not in self.schema.defs:
                raise BindgenError(f"{self.schema.version}: unresolvable $ref {schema['$ref']!r} at {origin}")
            return Ref(target)
        if "allOf" in schema:
            self._definition(context, schema, origin, hoisted=True)
            return Ref(context)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                discriminator = self._discriminator(schema[key])
                if discriminator and not top:
                    # A named alias, so the model renderer never has to invent a name for it.
                    self._definition(context, schema, origin, hoisted=True)
                    return Ref(context)
                members = tuple(
                    self._expr(member, f"{context}Variant{index}", f"{origin}/{key}/{index}")
                    for index, member in enumerate(schema[key])
                )
                return UnionOf(members, discriminator)
        if "const" in schema:
            return Const(schema["const"])
        if "enum" in schema:
            return Enum(tuple(schema["enum"]))
        kind = schema.get("type")
        if isinstance(kind, list):
            return UnionOf(tuple(self._expr({**schema, "type": k}, context, origin) for k in kind))
        if kind == "object" or "properties" in schema:
            if schema.get("properties"):
                self._definition(context, schema, origin, hoisted=True)
                return Ref(context)
            extra = schema.get("additionalProperties", True)
            if extra is True or extra == {}:
                return MapOf(Scalar("any"))
            if extra is False:
                raise BindgenError(f"{self.schema.version}: closed empty object at {origin} is not supported")
            return MapOf(self._expr(extra, context + "Value", f"{origin}/additionalProperties"))
        if kind == "array":
            items = schema.get("items", {})
            constraints = tuple(sorted((k, schema[k]) for k in _ARRAY_CONSTRAINT_KEYS if k in schema))
            return ArrayOf(self._expr(items, context + "Item", f"{origin}/items"), constraints)
        if kind in _SCALAR_KINDS:
            constraints = tuple(sorted((k, schema[k]) for k in _CONSTRAINT_KEYS if k in schema))
            return Scalar(kind, schema.get("format"), constraints)
        if kind is None:
            return Scalar("any")
        raise BindgenError(f"{self.schema.version}: unsupported type {kind!r} at {origin}")

    # -- discriminated unions ----------------------------------------------------------------

    def _discriminator(self, members: list[Any]) -> str | None:
        """A required property holding a distinct constant in every member (all `$ref`s to objects)."""
        if len(members) < 2 or not all(isinstance(m, dict) and set(m) == {"$ref"} for m in members):
            return None
        objects = [self._deref(m, "") for m in members]
        if not all(_is_object_schema(o) and o.get("properties") and "allOf" not in o for o in objects):
            return None
        candidates: set[str] | None = None
        for obj in objects:
            consts = {k for k, v in obj["properties"].items() if k in obj.get("required", []) and "const" in v}
            candidates = consts if candidates is None else candidates & consts
        for key in sorted(candidates or (), key=lambda k: (_rank(k), k)):
            values = [json.dumps(o["properties"][key]["const"]) for o in objects]
            if len(set(values)) == len(values):
                return key
        return None


def _rank(key: str) -> int:
    return _PREFERRED_DISCRIMINATORS.index(key) if key in _PREFERRED_DISCRIMINATORS else len(_PREFERRED_DISCRIMINATORS)


def lower(schema: NormalisedSchema) -> SchemaIR:
    return _Lowerer(schema).run()
