"""Values on the wire: decoded JSON validated with a version's models (strict, by wire names), models
written as JSON, and what a side sends checked on the way out.
"""

from __future__ import annotations

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


def defines(target: Any, key: str) -> bool:
    """Whether a model class has a field with the wire name `key` (False for anything else)."""
    return attribute(target, key) is not None


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
    """`validate`, for what this side is about to send or a handler gets: failure is an internal
    error naming `what`, not sent."""
    try:
        return validate(target, data)
    except ValidationError as exc:
        raise _refused(exc, what) from None


def first_error(exc: ValidationError, under: str = "") -> str:
    """`where: message` of a validation error's first error (`tools.0.name: Field required`; `where`
    below `under`; "(root)": the value itself)."""
    first = exc.errors(include_url=False)[0]
    where = ".".join([*([under] if under else []), *(str(p) for p in first["loc"])])
    return f"{where or '(root)'}: {first['msg']}"


def _refused(exc: ValidationError, what: str) -> McpError:
    log.error("%s is invalid: %s", what, first_error(exc))
    return McpError(INTERNAL_ERROR, f"Internal error: {what} is invalid ({first_error(exc)})")


@cache
def attribute(target: Any, key: str) -> str | None:
    """The attribute of a model class's field whose wire name is `key` (None: no such field, or not
    a model class; `defines` says whether there is one)."""
    if not (isinstance(target, type) and issubclass(target, BaseModel)):
        return None
    return next((name for name, field in target.model_fields.items() if (field.alias or name) == key), None)
