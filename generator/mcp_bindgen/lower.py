"""Lower a normalised schema into the IR.

Anonymous nested objects are hoisted into named definitions whose names come from their location
(`ClientCapabilities.roots` -> `ClientCapabilitiesRoots`, array items -> `...Item`, map values ->
`...Value`), so no generated name is ever a counter. `allOf` compositions are merged into one object
(or, with an `anyOf` part, into a union of merged objects named after the constant telling them apart).
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


# Keywords that describe a schema without constraining it.
_ANNOTATIONS = ("$schema", "$id", "$comment", "title", "description", "examples")


def _is_choice(schema: dict[str, Any]) -> bool:
    """An `anyOf`/`oneOf` with nothing else that constrains (an alternative among schemas)."""
    keys = set(schema) - set(_ANNOTATIONS)
    return keys == {"anyOf"} or keys == {"oneOf"}


def _closed(extra: Any) -> bool:
    """`additionalProperties` that admits nothing: `false`, or `{"not": {}}` (not anything)."""
    return extra is False or (isinstance(extra, dict) and set(extra) == {"not"} and extra["not"] in ({}, True))


def _constraints(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k not in _ANNOTATIONS}


def _is_any_object(schema: dict[str, Any]) -> bool:
    """`{"type": "object"}`, open to any keys: intersecting it with an object schema adds nothing."""
    rest = _constraints(schema)
    return (
        rest.get("type") == "object"
        and set(rest) <= {"type", "additionalProperties", "propertyNames"}
        and (rest.get("additionalProperties", True) in (True, {}))
    )


def _intersect(first: Any, second: Any, where: str) -> Any:
    """One schema for a property two `allOf` parts both define (the value must match both).

    The later, more specific part wins when it restates or refines the earlier (a `const` on a
    `string`); two objects are merged through a nested `allOf`; keywords that disagree are an error.
    """
    if first == second or first is True or first == {}:
        return second
    if second is True or second == {}:
        return first
    if not isinstance(first, dict) or not isinstance(second, dict):
        raise BindgenError(f"allOf parts disagree on {where}: {first!r} and {second!r}")
    a, b = _constraints(first), _constraints(second)
    if not a or a.items() <= b.items():
        return second
    if not b:
        return first
    a_object = _is_object_schema(a) or "allOf" in a or _is_choice(a)
    b_object = _is_object_schema(b) or "allOf" in b or _is_choice(b)
    if a_object and b_object:
        if _is_any_object(a):
            return second
        if _is_any_object(b):
            return first
        return {"allOf": [first, second]}
    clash = sorted(k for k in a.keys() & b.keys() if a[k] != b[k])
    if clash:
        raise BindgenError(f"allOf parts disagree on {where}: {', '.join(clash)} differ")
    return {**a, **second}


def _shared_const(alternatives: list[dict[str, Any]]) -> str | None:
    """A property every alternative requires with a distinct constant (`status`), for naming and parsing."""
    if len(alternatives) < 2 or not all(_is_object_schema(a) for a in alternatives):
        return None
    keys: set[str] | None = None
    for alt in alternatives:
        props = alt.get("properties", {})
        here = {k for k in alt.get("required", []) if isinstance(props.get(k), dict) and "const" in props[k]}
        keys = here if keys is None else keys & here
    for key in sorted(keys or (), key=lambda k: (_rank(k), k)):
        values = [json.dumps(a["properties"][key]["const"]) for a in alternatives]
        if len(set(values)) == len(values) and all(
            isinstance(a["properties"][key]["const"], str) for a in alternatives
        ):
            return key
    return None


def _inline_objects(members: list[Any]) -> bool:
    """Every member an object written in place (no `$ref`), with properties of its own."""
    return all(
        isinstance(m, dict) and "$ref" not in m and _is_object_schema(m) and m.get("properties") for m in members
    )


def _variant_suffix(alt: Any, resolved: dict[str, Any], discriminator: str | None, index: int) -> str:
    """How a distributed alternative is named: its constant, else the definition it references."""
    if discriminator is not None:
        suffix = pascal_case(str(resolved["properties"][discriminator]["const"]))
        if suffix:
            return suffix
    if isinstance(alt, dict) and "$ref" in alt:
        return pascal_case(str(alt["$ref"])[len(_REF_PREFIX) :])
    return f"Variant{index}"


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

    def _restates_upstream(self, name: str, schema: dict[str, Any]) -> bool:
        """Whether an inline schema is the upstream definition of the name it would be hoisted under,
        written out again (as schemas generated from TypeScript do): then it is that definition."""
        upstream = self.schema.defs.get(name)
        return isinstance(upstream, dict) and _constraints(upstream) == _constraints(schema)

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
            self.defs[name] = self._all_of(name, schema, origin, hoisted)
        elif _is_object_schema(schema) and (schema.get("properties") or _closed(schema.get("additionalProperties"))):
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
        if _closed(extra):
            return "forbid"
        if extra is True or extra == {}:
            return "allow"
        return self._expr(extra, name + "Value", f"{origin}/additionalProperties")

    def _all_of(self, name: str, schema: dict[str, Any], origin: str, hoisted: bool) -> Definition:
        """An `allOf`: its parts (references, inline objects, nested `allOf`s) merged into one object.

        A part that is an `anyOf`/`oneOf` is distributed over (`A and (B or C)` is `(A and B) or (A and C)`):
        the definition is then a union of merged objects, each named after the constant that tells it
        apart (`GetTaskResult` -> `GetTaskResultWorking`, ...), else after the referenced definition or
        its position.
        """
        parts = self._all_of_parts(schema, origin)
        branches = [part for part in parts if _is_choice(part[0])]
        if not branches:
            return self._merged_object(name, schema, [part for part, _ in parts], origin, hoisted)
        # Several choices are distributed one at a time: each variant keeps the other choices, and is
        # distributed over the next when it is lowered.
        choice, choice_origin = branches[0]
        key = "anyOf" if "anyOf" in choice else "oneOf"
        fixed = [part for part, where in parts if where != choice_origin]
        alternatives = [self._deref(alt, f"{choice_origin}/{key}/{i}") for i, alt in enumerate(choice[key])]
        for index, alt in enumerate(alternatives):
            if not _is_object_schema(alt) and not _is_choice(alt) and "allOf" not in alt:
                raise BindgenError(
                    f"{self.schema.version}: allOf at {origin}: alternative {choice_origin}/{key}/{index} "
                    "is not an object, so it cannot be merged with the other parts"
                )
        discriminator = _shared_const(alternatives)
        description = schema.get("description")
        members = []
        for index, alt in enumerate(choice[key]):
            suffix = _variant_suffix(alt, alternatives[index], discriminator, index)
            variant = {"allOf": [*fixed, alt], "description": alternatives[index].get("description") or description}
            self._definition(name + suffix, variant, f"{choice_origin}/{key}/{index}", hoisted=True)
            members.append(Ref(name + suffix))
        return AliasDef(name, origin, UnionOf(tuple(members), discriminator), schema.get("description"), hoisted)

    def _all_of_parts(self, schema: dict[str, Any], origin: str) -> list[tuple[dict[str, Any], str]]:
        """The parts of an `allOf`, references followed and nested `allOf`s flattened, each with where it is."""
        out: list[tuple[dict[str, Any], str]] = []
        for index, part in enumerate(schema["allOf"]):
            where = f"{origin}/allOf/{index}"
            if part is True or part == {}:
                continue
            if not isinstance(part, dict):
                raise BindgenError(f"{self.schema.version}: allOf part {where} is not a schema object: {part!r}")
            resolved = self._deref(part, where)
            if "allOf" in resolved:
                out += self._all_of_parts(resolved, where)
                rest = {k: v for k, v in resolved.items() if k not in ("allOf", *_ANNOTATIONS)}
                if rest:
                    out.append((rest, where))
            elif _is_choice(resolved) or _is_object_schema(resolved):
                out.append((resolved, where))
            else:
                raise BindgenError(
                    f"{self.schema.version}: allOf part {where} is neither an object nor an anyOf/oneOf of objects, "
                    "so it cannot be merged"
                )
        return out

    def _merged_object(
        self, name: str, schema: dict[str, Any], parts: list[dict[str, Any]], origin: str, hoisted: bool
    ) -> ObjectDef:
        """Object parts merged: properties intersected, `required` united, closed if any part is closed."""
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for part in parts:
            for key, prop in part.get("properties", {}).items():
                known = merged["properties"].get(key)
                merged["properties"][key] = prop if known is None else _intersect(known, prop, f"{origin}: {key}")
            merged["required"] += [r for r in part.get("required", []) if r not in merged["required"]]
            if _closed(part.get("additionalProperties")):
                merged["additionalProperties"] = False
        first = schema["allOf"][0] if schema["allOf"] else {}
        first_description = self._deref(first, origin).get("description") if isinstance(first, dict) else None
        merged["description"] = schema.get("description") or first_description
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
            return self._ref(schema["$ref"], origin)
        if "allOf" in schema:
            if not self._restates_upstream(context, schema):
                self._definition(context, schema, origin, hoisted=True)
            return Ref(context)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self._union(schema, key, context, origin, top)
        if "const" in schema:
            return Const(schema["const"])
        if "enum" in schema:
            return Enum(tuple(schema["enum"]))
        return self._typed(schema, context, origin)

    def _ref(self, ref: str, origin: str) -> TypeExpr:
        target = ref[len(_REF_PREFIX) :]
        if target not in self.schema.defs:
            raise BindgenError(f"{self.schema.version}: unresolvable $ref {ref!r} at {origin}")
        return Ref(target)

    def _union(self, schema: dict[str, Any], key: str, context: str, origin: str, top: bool) -> TypeExpr:
        """The type of an `anyOf` / `oneOf` (`key`): a union, or a named alias when it is discriminated."""
        inline = _inline_objects(schema[key])
        discriminator = self._discriminator(schema[key], f"{origin}/{key}") or (
            _shared_const(schema[key]) if inline else None
        )
        if discriminator and not top:
            # A named alias, so the model renderer never has to invent a name for it.
            self._definition(context, schema, origin, hoisted=True)
            return Ref(context)
        members = tuple(
            self._expr(
                member,
                context + _variant_suffix(member, member, discriminator if inline else None, index),
                f"{origin}/{key}/{index}",
            )
            for index, member in enumerate(schema[key])
        )
        return UnionOf(members, discriminator)

    def _typed(self, schema: dict[str, Any], context: str, origin: str) -> TypeExpr:
        """The type of a schema told by its `type` (or its `properties`)."""
        kind = schema.get("type")
        if isinstance(kind, list):
            return UnionOf(tuple(self._expr({**schema, "type": k}, context, origin) for k in kind))
        if kind == "object" or "properties" in schema:
            return self._object_expr(schema, context, origin)
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

    def _object_expr(self, schema: dict[str, Any], context: str, origin: str) -> TypeExpr:
        """An object with properties (or closed) is a hoisted definition; an open one a map."""
        extra = schema.get("additionalProperties", True)
        if schema.get("properties") or _closed(extra):
            self._definition(context, schema, origin, hoisted=True)
            return Ref(context)
        if extra is True or extra == {}:
            return MapOf(Scalar("any"))
        return MapOf(self._expr(extra, context + "Value", f"{origin}/additionalProperties"))

    # -- discriminated unions ----------------------------------------------------------------

    def _discriminator(self, members: list[Any], origin: str) -> str | None:
        """A required property holding a distinct constant in every member (all `$ref`s to objects);
        `origin`: where the members are (for errors)."""
        if len(members) < 2 or not all(isinstance(m, dict) and set(m) == {"$ref"} for m in members):
            return None
        objects = [self._deref(m, f"{origin}/{i}") for i, m in enumerate(members)]
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
