"""Values on the wire: validating decoded JSON with a version's models, and moving values between versions.

A server or client is written against one version's stub; its peer may speak another. Values
cross by wire JSON: validated with the sending side's models, then re-validated with the other
version's generated models and projected onto the fields that version defines (unknown fields of
models are dropped, open maps such as `_meta` keep their keys). A value the target version cannot
express fails validation there and becomes an internal error naming the type and version.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from mcp_bindings.runtime.protocol.spec import MethodSpec
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, McpError
from mcp_bindings.runtime.rpc.jsonrpc import invalid_field, validation_error

log = logs.logger("server")


@cache
def adapter(target: Any) -> TypeAdapter[Any]:
    return TypeAdapter(target)


# Marks decoded peer input, so the models refuse an explicit null where the schema does (`_base.not_null`).
# Pass it as `context=` of every validation of wire data (never mutated).
WIRE_CONTEXT = {"mcp_wire": True}


@cache
def validator(target: Any) -> Any:
    """The `validate_python` of a model class or a type alias (built now if it was deferred). Call it
    as `validate` does: `(data, by_name=False, context=WIRE_CONTEXT)`."""
    if isinstance(target, type) and issubclass(target, BaseModel):
        return target.__pydantic_validator__.validate_python
    return adapter(target).validator.validate_python


@cache
def defines(target: Any, key: str) -> bool:
    """Whether a model class has a field with the wire name `key` (False for anything else)."""
    if not (isinstance(target, type) and issubclass(target, BaseModel)):
        return False
    return any((field.alias or name) == key for name, field in target.model_fields.items())


def prepare(target: Any) -> None:
    """Build the validator and serializer of a model class or type alias now (None: nothing)."""
    if target is None:
        return
    if isinstance(target, type) and issubclass(target, BaseModel):
        target.model_rebuild()
    validator(target)


def validate(target: Any, data: Any) -> Any:
    """Validate decoded wire JSON against a model class or a type alias: strict like the schema,
    and by wire names only (snake_case attribute names are for Python code, not for peers)."""
    return validator(target)(data, by_name=False, context=WIRE_CONTEXT)


def validate_params(spec: MethodSpec, params: Any) -> Any:
    """A request's or notification's params, typed by its version's model (-32602 naming each bad field)."""
    if params is None:
        if spec.params_required:
            raise invalid_field("params", f"{spec.method} requires params", "missing")
        return None
    if spec.params is None:
        return params
    try:
        return validate(spec.params, params)
    except ValidationError as exc:
        raise validation_error(exc) from None


def dump(value: Any) -> Any:
    """A model (or anything holding models) -> decoded wire JSON."""
    # The serializers directly: `model_dump` / `TypeAdapter.dump_python` are Python wrappers around
    # the same call and cost about as much again as the serialization of a small model.
    if isinstance(value, BaseModel):
        return value.__pydantic_serializer__.to_python(value, mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, (list, dict)):
        return adapter(type(value)).serializer.to_python(value, mode="json", by_alias=True, exclude_none=True)
    return value


def to_json(value: Any, target: Any = None) -> bytes:
    """Serialise a model (the hot path: pydantic writes the bytes, nothing is re-encoded)."""
    if isinstance(value, BaseModel):
        return value.__pydantic_serializer__.to_json(value, by_alias=True, exclude_none=True)
    return adapter(target if target is not None else type(value)).dump_json(value, by_alias=True, exclude_none=True)


def results_always_checked() -> bool:
    """Whether every outgoing result is re-validated whatever the server class says
    (`MCP_BINDINGS_CHECK_RESULTS=1`: tests and debugging)."""
    return os.environ.get("MCP_BINDINGS_CHECK_RESULTS") == "1"


def checked_json(value: BaseModel, what: str) -> bytes:
    """A result model's wire JSON, checked against its model on the way out: a model built with
    `model_construct`, changed after validation or holding NaN/Infinity (written as null) is refused
    with an internal error naming `what`, instead of reaching the peer."""
    data = value.__pydantic_serializer__.to_json(value, by_alias=True, exclude_none=True)
    check_json(type(value), data, what)
    return data


def check_json(model: type[BaseModel], data: bytes, what: str) -> None:
    """JSON about to be sent, validated against `model`: failure is an internal error naming `what`
    (large results: `result_checks.ResultChecks`)."""
    try:
        model.__pydantic_validator__.validate_json(data, by_name=False, context=WIRE_CONTEXT)
    except ValidationError as exc:
        raise _refused(exc, what) from None


def checked(target: Any, data: Any, what: str) -> Any:
    """`validate`, for what this side is about to send: failure is an internal error naming `what`."""
    try:
        return validate(target, data)
    except ValidationError as exc:
        raise _refused(exc, what) from None


def _refused(exc: ValidationError, what: str) -> McpError:
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in first["loc"]) or "(root)"
    log.error("%s is invalid and was not sent: %s: %s", what, where, first["msg"])
    return McpError(INTERNAL_ERROR, f"Internal error: {what} is invalid ({where}: {first['msg']})")


META = "_meta"


def project(value: Any, source: Any = None) -> Any:
    """Wire JSON of a converted value with only what the target version can carry.

    Keys of the target's models are kept; a key the target model does not define (an "extra") is
    kept only if it was open content in the source too (an extra of the source model, or inside a
    plain JSON value such as a tool's `inputSchema` keywords or `_meta`), and dropped if the source
    version defined it as a field (e.g. `resultType`, `ttlMs` going to a handshake-era client). A
    JSON Schema document (a tool's `inputSchema`) keeps every keyword.
    """
    if isinstance(value, BaseModel):
        out: dict[str, Any] = {}
        for name, field in type(value).model_fields.items():
            item = getattr(value, name)
            if item is not None:
                key = field.alias or name
                out[key] = project(item, _source_child(source, key))
        for key, item in (value.__pydantic_extra__ or {}).items():
            # `_meta` is metadata in every version (reserved on any object since 2024-11-05): it
            # crosses even where the target's model has no such field (a tool's `_meta.ui`).
            if key == META or _open_in(source, key) or _json_schema(type(value)):
                out[key] = item  # extras are kept as the decoded JSON they arrived as
        return out
    if isinstance(value, list):
        items = source if isinstance(source, list) and len(source) == len(value) else [None] * len(value)
        return [project(item, src) for item, src in zip(value, items, strict=False)]
    if isinstance(value, dict):
        return {key: project(item, _source_child(source, key)) for key, item in value.items()}
    return value


@cache
def _json_schema(model: type[BaseModel]) -> bool:
    """A model of a JSON Schema document (a tool's `inputSchema` / `outputSchema`: it has the
    `$schema` keyword): every keyword is its content, whichever of them a version names as fields
    (2025-11-25 names `type`, `properties`, `required`; 2026-07-28 only `$schema`)."""
    return any(field.alias == "$schema" for field in model.model_fields.values())


class _Made:
    """The source of a part the crossing made rather than carried (a reshaped or degraded part: the
    source value has no such key): what it holds is kept as made, at every depth."""


_MADE = _Made()


def _source_child(source: Any, key: str) -> Any:
    if isinstance(source, BaseModel):
        for name, field in type(source).model_fields.items():
            if (field.alias or name) == key:
                return getattr(source, name)
        return (source.__pydantic_extra__ or {}).get(key, _MADE)
    if isinstance(source, dict):
        return source.get(key)
    return source if source is _MADE else None


def _open_in(source: Any, key: str) -> bool:
    """`key` was open content of the source value (not a field its version defines)."""
    if isinstance(source, BaseModel):
        return key in (source.__pydantic_extra__ or {})
    return isinstance(source, dict) or source is _MADE


def convert(data: Any, target: Any, *, what: str, source: str, destination: str) -> Any:
    """Decoded wire JSON of version `source` -> a validated value of `destination`'s type."""
    try:
        return validate(target, data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        raise McpError(
            INTERNAL_ERROR, f"cannot express {what} of MCP {source} in MCP {destination}: {where}: {first['msg']}"
        ) from None
