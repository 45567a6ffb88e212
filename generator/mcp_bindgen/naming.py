"""Names: snake_case attributes for wire keys, and stable type names for anonymous nested schemas.

Every rule here is a pure function of the schema location, so a name only changes when the schema
does; the per-version name table is a golden file, so such a change shows up in review.
"""

from __future__ import annotations

import keyword
import re
from functools import cache
from pathlib import Path
from typing import Any

from . import policy
from .errors import BindgenError

# Attributes of pydantic's BaseModel a field must not shadow.
_RESERVED_ATTRIBUTES = frozenset(
    {
        "copy",
        "dict",
        "json",
        "schema",
        "schema_json",
        "construct",
        "validate",
        "fields",
        "parse_obj",
        "parse_raw",
        "parse_file",
        "from_orm",
        "update_forward_refs",
    }
)


@cache
def field_renames(path: Path | None = None) -> dict[str, str]:
    """Wire key -> Python attribute name (`policy/field_names.json`)."""
    return {wire: rename.py_name for wire, rename in policy.field_names(path).items()}


@cache
def type_renames(path: Path | None = None) -> dict[str, str]:
    """Schema definition -> class name in models.py (`policy/type_names.json`)."""
    return {name: rename.py_name for name, rename in policy.type_names(path).items()}


_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(wire_name: str) -> str:
    """`_meta` -> `meta`, `isError` -> `is_error`, `io.modelcontextprotocol/clientInfo` -> `client_info`."""
    renames = field_renames()
    if wire_name in renames:
        return renames[wire_name]
    local = wire_name.rsplit("/", 1)[-1].lstrip("_")
    words = _CAMEL_BOUNDARY.sub("_", local)
    name = re.sub(r"[^0-9a-zA-Z_]+", "_", words).strip("_").lower()
    if not name or not name.isidentifier():
        raise BindgenError(f"wire key {wire_name!r} has no Python name: add it to policy/field_names.json")
    if keyword.iskeyword(name) or name in _RESERVED_ATTRIBUTES:
        name += "_"
    return name


def pascal_case(wire_name: str) -> str:
    """`clientCapabilities` -> `ClientCapabilities`, `_meta` -> `Meta`, `oneOf` -> `OneOf`."""
    local = wire_name.rsplit("/", 1)[-1]
    parts = [p for p in re.split(r"[^0-9a-zA-Z]+", local) if p]
    return "".join(p[0].upper() + p[1:] for p in parts)


def field_default(definition: str, wire_name: str, schema: dict[str, Any]) -> Any:
    """The policy default of a required field (given its schema), or NO_DEFAULT."""
    from .ir import NO_DEFAULT

    entry = policy.field_defaults().get(wire_name)
    if entry is None:
        return NO_DEFAULT
    if entry.value_from_const:
        return schema["const"] if "const" in schema else NO_DEFAULT
    value = entry.per_definition.get(definition, entry.value)
    # A default never contradicts the field's schema (an extension's `resultType: "task"`), and a
    # field that may be null has no value the protocol fixes (a task's `ttlMs`: null is unlimited).
    if _nullable(schema) or not _admits(schema, value):
        return NO_DEFAULT
    return value


def _nullable(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_nullable(member) for key in ("anyOf", "oneOf") for member in schema.get(key, []))


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


def _admits(schema: Any, value: Any) -> bool:
    """Whether `value` may be valid under `schema`, as far as `const`, `enum`, `type` and `anyOf` tell."""
    if not isinstance(schema, dict):
        return True
    if "const" in schema and schema["const"] != value:
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    kind = schema.get("type")
    if isinstance(kind, str) and kind in _JSON_TYPES:
        if not isinstance(value, _JSON_TYPES[kind]) or (kind != "boolean" and isinstance(value, bool)):
            return False
    members = schema.get("anyOf") or schema.get("oneOf")
    return not members or any(_admits(member, value) for member in members)


def method_constant(method: str) -> str:
    """The constant a `names` module gives a method: `tools/call` -> `TOOLS_CALL`,
    `notifications/tools/list_changed` -> `NOTIFICATIONS_TOOLS_LIST_CHANGED`, `logging/setLevel` ->
    `LOGGING_SET_LEVEL`."""
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", method)
    return re.sub(r"[^0-9A-Za-z]+", "_", words).strip("_").upper()


def is_release(name: str, wire: str) -> bool:
    """Whether a version generated under `name`, speaking `wire`, is a released protocol version
    (`2026-07-28` as itself), not a draft (`draft` -> `DRAFT-2026-v1`) or a copy under another name:
    only a released version is ever a default (of `App`, `mcp-bindgen new`, a client's offer)."""
    return name == wire and re.fullmatch(r"\d{4}-\d{2}-\d{2}", name) is not None
