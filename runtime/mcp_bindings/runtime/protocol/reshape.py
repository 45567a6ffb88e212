"""Moving a definition's content between a list of tagged items and plain fields, where two versions
hold it differently (SEP-3279's `CallToolResult.outputs` in place of `content` / `structuredContent`).

The generated `PROTOCOL.reshapes` of a version says, per definition, which list field it has and how
the items map onto the plain fields another version has (the generator's policy/reshapes.json).
`reshaped` applies that to wire JSON on its way into a target type: where the target's definition
lacks the list field, the items are gathered into the plain fields; where it has it and the value
has the plain fields instead, they are spread into items. Nothing else is touched, and a value with
nothing to move is returned as it is (no copy).
"""

from __future__ import annotations

import copy
import types
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from types import MappingProxyType
from typing import Any, Union, cast, get_args, get_origin

from pydantic import BaseModel

from mcp_bindings.runtime.protocol import registry, versions
from mcp_bindings.runtime.protocol.spec import Reshape

Path = tuple[str, ...]  # keys from the value's root; "*" is every item of a list
MAX_DEPTH = 8  # how deep a target type is searched for a reshaped definition


def reshaped(data: Any, target: Any, rules: Mapping[str, Reshape]) -> Any:
    """`data` (wire JSON) with every node of a definition `rules` names moved into `target`'s shape."""
    places = _places(target, frozenset(rules)) if rules else ()
    moves = [
        (path, rules[model.__name__], versions.defines(model, rules[model.__name__].field)) for path, model in places
    ]
    if not any(_due(node, rule, has) for path, rule, has in moves for node in _nodes(data, path)):
        return data
    out = copy.deepcopy(data)
    for path, rule, has_field in moves:
        for node in _nodes(out, path):
            _move(node, rule, has_field)
    return out


def _due(node: dict[str, Any], rule: Reshape, has_field: bool) -> bool:
    """Whether `node` is in the other shape than its target's."""
    if has_field:
        return rule.field not in node and any(spread.source in node for spread in rule.spread)
    return rule.field in node


def _move(node: dict[str, Any], rule: Reshape, has_field: bool) -> None:
    if not _due(node, rule, has_field):
        return
    if not has_field:
        raw = node.pop(rule.field)
        items = (
            [cast("dict[str, Any]", i) for i in cast("list[Any]", raw) if isinstance(i, dict)]
            if isinstance(raw, list)
            else []
        )
        for gather in rule.gather:
            values = [
                item[gather.take]
                for item in items
                if gather.take in item and all(item.get(key) in accepted for key, accepted in gather.where.items())
            ]
            if gather.join == "concat":
                node[gather.into] = [x for v in values for x in (cast("list[Any]", v) if isinstance(v, list) else [v])]
            elif values:
                node[gather.into] = values[0]
    else:
        node[rule.field] = [
            _filled(spread.item, node.pop(spread.source)) for spread in rule.spread if spread.source in node
        ]


def _filled(template: Any, value: Any) -> Any:
    if template == "$":
        return value
    if isinstance(template, Mapping):
        return {key: _filled(item, value) for key, item in cast("Mapping[str, Any]", template).items()}
    if isinstance(template, (list, tuple)):
        return [_filled(item, value) for item in cast("list[Any]", template)]
    return template


def _nodes(data: Any, path: Path) -> Iterator[dict[str, Any]]:
    if not path:
        if isinstance(data, dict):
            yield cast("dict[str, Any]", data)
        return
    step, rest = path[0], path[1:]
    if step == "*":
        for item in cast("list[Any]", data) if isinstance(data, list) else []:
            yield from _nodes(item, rest)
    elif isinstance(data, dict) and step in data:
        yield from _nodes(cast("dict[str, Any]", data)[step], rest)


@cache
def _places(target: Any, names: frozenset[str]) -> tuple[tuple[Path, type[BaseModel]], ...]:
    """Where in a value of `target` a definition named in `names` sits (a model class of that name)."""
    out: list[tuple[Path, type[BaseModel]]] = []
    _walk(target, (), names, out, ())
    return tuple(out)


def _walk(
    tp: Any, path: Path, names: frozenset[str], out: list[tuple[Path, type[BaseModel]]], seen: tuple[type, ...]
) -> None:
    if len(path) > MAX_DEPTH:
        return
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        if tp in seen:
            return
        if tp.__name__ in names:
            out.append((path, tp))
        for name, field in tp.model_fields.items():
            _walk(field.annotation, (*path, field.alias or name), names, out, (*seen, tp))
        return
    origin = get_origin(tp)
    if origin in (list, tuple, set, frozenset) or (isinstance(origin, type) and issubclass(origin, (list, tuple))):
        for arg in get_args(tp):
            _walk(arg, (*path, "*"), names, out, seen)
    elif origin is Union or origin is types.UnionType or (origin is not None and origin is not dict):
        for arg in get_args(tp):
            _walk(arg, path, names, out, seen)


# -- the rules of installed versions ------------------------------------------------------------


@cache
def reshapes_between(*names: str) -> Mapping[str, Reshape]:
    """The generated reshapes of these versions (by name or wire version; an unknown one has none)."""
    out: dict[str, Reshape] = {}
    for name in names:
        try:
            out.update(registry.protocol(name).reshapes)
        except (KeyError, LookupError, ValueError):
            continue
    return MappingProxyType(out)


def shape(data: Any, target: Any, version: str | None = None) -> Any:
    """Wire JSON built in another version's shape, moved into `target`'s where `version` (None: the
    version `target` is of, whichever it is) holds it differently."""
    rules = reshapes_between(version) if version is not None else reshapes_between(*registry.names())
    return reshaped(data, target, rules) if rules else data


def carries(target: Any, key: str, version: str) -> bool:
    """Whether `version`'s model `target` holds what other versions write as `key`: a field of its
    own, or the list field a reshape spreads `key` into."""
    if versions.defines(target, key):
        return True
    rule = reshapes_between(version).get(getattr(target, "__name__", ""))
    return rule is not None and any(spread.source == key for spread in rule.spread)


def shaped(target: Any, version: str) -> Callable[[Any], Any]:
    """The validator of `target` of `version` (`versions.validator`), for wire JSON built in another
    version's shape (the authoring layer writes `content`): reshaped first where the version needs it."""
    validate = versions.validator(target)
    rules = reshapes_between(version)
    if not rules:
        return validate
    return lambda data: validate(reshaped(data, target, rules))
