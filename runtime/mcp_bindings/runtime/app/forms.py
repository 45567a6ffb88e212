"""Elicitation forms: the `requestedSchema` a `ctx.elicit(schema=...)` sends for a pydantic model, one
bool / int / float / str / Enum value, or a requestedSchema given as JSON, checked once against
what the app's protocol version allows (flat string, number, integer, boolean and enum fields).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Any, cast

from pydantic import BaseModel, ValidationError, create_model

from mcp_bindings.runtime.app.errors import AppDefinitionError, first_error
from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.spec import ProtocolTables
from mcp_bindings.v2026_07_28 import names as v2026

__all__ = ["ELICIT", "Form", "elicitation_schema", "form_of"]

ELICIT = v2026.ELICITATION_CREATE


def elicitation_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The `requestedSchema` of an elicitation form for a pydantic model: a flat object of primitive
    properties (what MCP allows), with `Optional` fields not required and enums inlined."""
    schema = model.model_json_schema()
    defs: dict[str, Any] = schema.get("$defs", {})
    properties: dict[str, Any] = {}
    for name, prop in cast("dict[str, Any]", schema.get("properties", {})).items():
        prop = dict(prop)
        options = prop.pop("anyOf", None)
        if isinstance(options, list):
            kept = [o for o in cast("list[dict[str, Any]]", options) if o.get("type") != "null"]
            if len(kept) != 1:
                raise AppDefinitionError(f"elicitation schema {model.__name__}: field {name!r} must have one type")
            prop = {**kept[0], **prop}
        ref = prop.pop("$ref", None)
        if isinstance(ref, str):
            prop = {**defs.get(ref.rsplit("/", 1)[-1], {}), **prop}
        if "default" in prop and prop["default"] is None:
            del prop["default"]  # an Optional field's None default: no default for the form
        properties[name] = prop
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if schema.get("required"):
        out["required"] = schema["required"]
    return out


@dataclass(frozen=True, slots=True)
class Form:
    schema: dict[str, Any]  # the requestedSchema
    model: type[BaseModel] | None  # validates the answer (None: a requestedSchema given as JSON, answered as a dict)
    wrapped: bool  # a single value asked as a form with one field, `value`


_SINGLE = (bool, int, float, str)


def form_of(stub: ProtocolTables, kind: Any) -> Form:
    """The elicitation form of `kind` (a pydantic model, one bool / int / float / str / Enum value, or
    a requestedSchema as JSON), checked once against what the stub's version allows."""
    if isinstance(kind, Mapping):
        schema = dict(cast("Mapping[str, Any]", kind))
        _check_form(stub, schema, "the requestedSchema")
        return Form(schema, None, False)
    return _typed_form(stub, kind)


@cache  # once per version and type
def _typed_form(stub: ProtocolTables, kind: Any) -> Form:
    model: type[BaseModel]
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        model, wrapped = kind, False
    elif kind in _SINGLE or (isinstance(kind, type) and issubclass(kind, Enum)):
        model, wrapped = create_model("Answer", value=(kind, ...)), True
    else:
        raise AppDefinitionError(
            "ctx.elicit(schema=...) takes a pydantic model class, bool, int, float, str, an Enum, or a "
            f"requestedSchema as a dict; not {kind!r}"
        )
    schema = elicitation_schema(model)
    _check_form(stub, schema, getattr(kind, "__name__", repr(kind)))
    return Form(schema, model, wrapped)


def _check_form(stub: ProtocolTables, schema: dict[str, Any], what: str) -> None:
    spec = stub.server_requests.get(ELICIT) or stub.input_requests.get(ELICIT)
    if spec is None or spec.params is None:
        return
    try:
        versions.validate(spec.params, {"message": "?", "requestedSchema": schema})
    except ValidationError as exc:
        raise AppDefinitionError(
            f"{what} cannot be an elicitation form in MCP {stub.version} (forms hold flat string, number, "
            f"integer, boolean and enum fields): {first_error(exc)}"
        ) from None
