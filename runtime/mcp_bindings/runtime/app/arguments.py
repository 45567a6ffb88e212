"""A tool's arguments as the keyword arguments of its function, checked once.

The runtime's tool checks (`server.tool_schemas`) have already held the arguments against the
tool's inputSchema, which the arguments model wrote (`signature.analyse`). Where every parameter is a
plain JSON type (`str`, `int`, `float`, `bool`, `Any`, or one of them `| None`, without constraints
or aliases), the model has nothing to add: the arguments are taken as they are, with the defaults
filled in. Any value whose type is not exactly the parameter's (an integral float for an `int`, a
missing required argument, an unknown key) goes to the model, which converts it or says what is
wrong; so the result never depends on the schema check having run. Other signatures always go to the
model: it converts (models, dates, enums, containers) as well as validates.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, Union, cast, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

__all__ = ["Arguments", "arguments_reader"]

Arguments = Callable[[Any], dict[str, Any]]  # the call's arguments (a dict) -> keyword arguments

_PLAIN: dict[Any, tuple[type, ...]] = {str: (str,), int: (int,), float: (float,), bool: (bool,)}
_ANY = ()  # every type is taken as it is
_SHARED_SAFE = (str, int, float, bool, type(None))  # defaults passed to every call as they are


def _accepted(annotation: Any) -> tuple[type, ...] | None:
    """The exact value types a parameter takes without conversion; `_ANY` for `Any`; None: not plain."""
    if annotation is Any:
        return _ANY
    plain = _PLAIN.get(annotation)
    if plain is not None:
        return plain
    if get_origin(annotation) in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        if len(members) == 1 and len(get_args(annotation)) == 2:
            inner = _accepted(members[0])
            if inner is not None and inner is not _ANY:
                return (*inner, type(None))
    return None


def arguments_reader(model: type[BaseModel]) -> Arguments:
    """What turns a call's arguments into the function's keyword arguments (see the module's doc)."""
    validate = model.__pydantic_validator__.validate_python

    def by_model(arguments: Any) -> dict[str, Any]:
        return dict(validate(arguments).__dict__)

    plan: list[tuple[str, tuple[type, ...], Any, Callable[[], Any] | None]] = []
    for name, field in model.model_fields.items():
        accepted = _accepted(field.annotation)
        if accepted is None or field.metadata or field.alias is not None or field.validation_alias is not None:
            return by_model
        default = None if field.is_required() else field.default
        factory: Any = field.default_factory
        if factory is None and (default is PydanticUndefined or not isinstance(default, _SHARED_SAFE)):
            return by_model  # a mutable default is the model's to copy
        plan.append((name, accepted, default, factory))
    if not plan:
        return by_model
    names = frozenset(name for name, *_ in plan)
    required = frozenset(name for name, field in model.model_fields.items() if field.is_required())

    def as_given(arguments: Any) -> dict[str, Any]:
        if type(arguments) is not dict or not required <= arguments.keys() or not names >= arguments.keys():
            return by_model(arguments)
        given = cast("dict[str, Any]", arguments)
        kwargs: dict[str, Any] = {}
        for name, accepted, default, factory in plan:
            if name in given:
                value = given[name]
                if accepted and type(value) not in accepted:
                    return by_model(arguments)  # converted (5.0 -> 5) or refused by the model
                kwargs[name] = value
            else:
                kwargs[name] = factory() if factory is not None else default
        return kwargs

    return as_given
