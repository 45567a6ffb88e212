"""OpenAPI's schemas as JSON Schema definitions, and the other references of a description resolved.

Every schema the renderer sees is JSON Schema with its references reading `#/$defs/<Name>`, the
names being Python class names chosen here (unique, never a name the generated modules use). What
OpenAPI adds to JSON Schema is brought to it (`nullable`, boolean `exclusiveMinimum`); what is only
documentation (`xml`, `example`, `discriminator` objects, `readOnly`) is left out; `format` is left
out as the protocol models leave it (a string stays the string the API sent), and so is a `pattern`
pydantic cannot run, so that every package imports.
"""

from __future__ import annotations

import keyword
import re
from functools import cache
from typing import Any, cast

from .errors import DescriptionError
from .ir import DEFS_PREFIX

SCHEMA_PREFIX = "#/components/schemas/"

# The validation keywords a schema keeps (a Swagger 2.0 parameter's too, `swagger2`).
CONSTRAINTS = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "multipleOf",
)
# Keywords kept (JSON Schema that datamodel-code-generator renders); anything else is dropped.
_KEPT = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "default",
        "description",
        "allOf",
        "anyOf",
        "oneOf",
        *CONSTRAINTS,
    }
)
_SCALAR_TYPES = frozenset({"string", "integer", "number", "boolean", "null", "array", "object"})
# Names of the generated modules' own (App, Api, typing, pydantic): a schema so named is renamed.
RESERVED_CLASSES = frozenset(
    {
        "Annotated",
        "Any",
        "Api",
        "ApiModel",
        "App",
        "AwareDatetime",
        "BaseModel",
        "ConfigDict",
        "Embedded",
        "Field",
        "Literal",
        "Operation",
        "RootModel",
        "TypeAliasType",
    }
)


def pascal(text: str, fallback: str = "Model") -> str:
    words = re.split(r"[^0-9A-Za-z]+", text)
    name = "".join(w[:1].upper() + w[1:] for w in words if w)
    if not name:
        name = fallback
    if name[0].isdigit():
        name = fallback + name
    if keyword.iskeyword(name) or name in RESERVED_CLASSES:
        name += "Model"
    return name


def unique(name: str, taken: set[str], sep: str = "") -> str:
    out, n = name, 2
    while out in taken:
        out, n = f"{name}{sep}{n}", n + 1
    taken.add(out)
    return out


@cache
def _pattern_runs(pattern: str) -> bool:
    """Whether pydantic (Rust's regex engine, which has no look-around nor back-references) runs it."""
    from pydantic_core import SchemaError, SchemaValidator, core_schema

    try:
        SchemaValidator(core_schema.str_schema(pattern=pattern))
    except SchemaError:
        return False
    return True


def as_dict(value: Any) -> dict[str, Any]:
    """A JSON object of the description, or an empty one where it holds something else."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def resolve(doc: dict[str, Any], node: Any, what: str) -> Any:
    """A parameter, body, response or path item with its local `$ref` followed (as deep as it goes)."""
    seen: set[str] = set()
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        ref: str = node["$ref"]
        if not ref.startswith("#/") or ref in seen:
            raise DescriptionError(f"{what}: cannot resolve $ref {ref!r} (only local references are read)")
        seen.add(ref)
        node = pointer(doc, ref, what)
    return node


def pointer(doc: dict[str, Any], ref: str, what: str) -> Any:
    node: Any = doc
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise DescriptionError(f"{what}: $ref {ref!r} points at nothing")
    return node


class Schemas:
    """The description's `components/schemas` under Python class names, and the conversion of any
    schema of it to JSON Schema (its references renamed)."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        raw = as_dict(as_dict(doc.get("components")).get("schemas"))
        self.taken: set[str] = set()
        self.names: dict[str, str] = {}  # component key -> class name
        for key in raw:
            self.names[key] = unique(pascal(key), self.taken)
        self.defs: dict[str, Any] = {}
        self._inlining: set[str] = set()
        for key, schema in raw.items():
            self.defs[self.names[key]] = self.convert(schema)

    def claim(self, name: str) -> str:
        """A class name for a definition the lowering adds (an operation's arguments or response)."""
        return unique(name, self.taken)

    def convert(self, schema: Any) -> Any:
        if isinstance(schema, bool):
            return schema
        if not isinstance(schema, dict):
            return {}
        if "$ref" in schema:
            return self._ref(schema["$ref"], schema)
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key not in _KEPT:
                continue
            if key == "properties" and isinstance(value, dict):
                out[key] = {str(k): self.convert(v) for k, v in value.items()}
            elif key in ("allOf", "anyOf", "oneOf") and isinstance(value, list):
                members = [self.convert(v) for v in value]
                if members:
                    out[key] = members
            elif key in ("items", "additionalProperties"):
                out[key] = self.convert(value) if isinstance(value, dict | bool) else {}
            elif key == "pattern":
                if isinstance(value, str) and _pattern_runs(value):
                    out[key] = value
            elif key == "required":
                if isinstance(value, list):
                    out[key] = [str(v) for v in value if isinstance(v, str)]
            else:
                out[key] = value
        return _json_schema_types(out, schema)

    def _ref(self, ref: Any, schema: dict[str, Any]) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return {}  # an external reference: any value (the package stays self-contained)
        if ref.startswith(SCHEMA_PREFIX):
            key = ref[len(SCHEMA_PREFIX) :].replace("~1", "/").replace("~0", "~")
            if key in self.names:
                target: dict[str, Any] = {"$ref": DEFS_PREFIX + self.names[key]}
                return _nullable(target) if schema.get("nullable") is True else target
            if "/" not in key:
                return {}  # a reference to a schema the description lacks
        # A schema written elsewhere in the document (`#/paths/.../schema`): inlined, once per path.
        if ref in self._inlining:
            return {}
        try:
            target_schema = pointer(self.doc, ref, "schema")
        except DescriptionError:
            return {}
        self._inlining.add(ref)
        try:
            return self.convert(target_schema)
        finally:
            self._inlining.discard(ref)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def _json_schema_types(out: dict[str, Any], original: dict[str, Any]) -> dict[str, Any]:
    """OpenAPI 3.0's `nullable`, boolean `exclusiveMinimum` / `exclusiveMaximum`, a `number` kept an
    int where it is one (`integer | number`, as the protocol models do), unknown types dropped."""
    kind = out.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
    kinds = [k for k in kinds if k in _SCALAR_TYPES]
    if original.get("type") == "file":
        kinds = ["string"]
    if original.get("nullable") is True and kinds and "null" not in kinds:
        kinds.append("null")
    if "number" in kinds and "integer" not in kinds:
        kinds.insert(kinds.index("number"), "integer")
    for bound, keyword_ in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        flag = out.get(keyword_)
        if isinstance(flag, bool):
            del out[keyword_]
            if flag and bound in out:
                out[keyword_] = out.pop(bound)
    if "enum" in out and not isinstance(out["enum"], list):
        del out["enum"]
    if "enum" in out and original.get("nullable") is True and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    if "default" in out and kinds:
        fitting = _fitting_default(out["default"], kinds)
        if fitting is _UNFIT:
            del out["default"]  # a default the schema itself refuses: left out, not generated as written
        else:
            out["default"] = fitting
    if not kinds:
        out.pop("type", None)
        if original.get("nullable") is True and any(k in out for k in ("allOf", "anyOf", "oneOf")):
            return _nullable(out)
        return out
    out["type"] = kinds[0] if len(kinds) == 1 else kinds
    return out


_UNFIT = object()
_FITS: dict[str, Any] = {
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def _fitting_default(value: Any, kinds: list[str]) -> Any:
    """A `default` of one of the schema's types: as written where it fits, else its string spelling
    read as the type (`"true"` of a boolean, `"5"` of an integer: descriptions written by hand do
    this), else `_UNFIT`."""
    if any(_FITS[kind](value) for kind in kinds):
        return value
    if isinstance(value, str):
        text = value.strip()
        if "boolean" in kinds and text in ("true", "false"):
            return text == "true"
        for kind, read in (("integer", int), ("number", float)):
            if kind in kinds:
                try:
                    return read(text)
                except ValueError:
                    pass
    return _UNFIT
