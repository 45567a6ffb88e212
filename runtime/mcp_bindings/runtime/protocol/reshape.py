"""Moving a definition's content where two versions hold it differently: between a list of tagged
items and plain fields (SEP-3279's `CallToolResult.outputs` in place of `content` / `structuredContent`:
a version's generated `PROTOCOL.reshapes`, from the generator's policy/reshapes.json), from one field
name to another (a pair's crossing table's renames), or from a content block the destination lacks
to what it becomes there (the table's degrades: the generator compiles policy/crossing.json's
templates into functions). Each rule names its `places`, computed by the generator: where its
definition sits in a value of each target definition, so nothing here walks a type. `reshaped` moves
wire JSON into a target's shape; a value with nothing to move is returned as it is (no copy).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import cache
from typing import Any, cast

from mcp_bindings.runtime.protocol import registry, versions
from mcp_bindings.runtime.protocol.spec import Degrade, Rename, Reshape

Path = tuple[str, ...]  # keys from the value's root; "*" is every item of a list or value of a map
Rule = Reshape | Rename | Degrade


def reshaped(data: Any, target: Any, rules: Iterable[Rule]) -> Any:
    """`data` (wire JSON) with every node `rules` place in a `target` moved into the target's shape."""
    name = getattr(target, "__name__", "")
    moves = [(path, rule) for rule in rules for path in rule.places.get(name, ())]
    if not any(_due(node, rule) for path, rule in moves for node in _nodes(data, path)):
        return data
    out = copy.deepcopy(data)
    for path, rule in moves:
        for node in _nodes(out, path):
            if _due(node, rule):
                _move(node, rule)
    return out


def dropped(data: Any, target: Any, drops: Mapping[str, Mapping[Path, tuple[str, ...]]]) -> Any:
    """Wire JSON of a `target` (changed in place) without the keys a crossing table `drops` there."""
    for path, keys in drops.get(getattr(target, "__name__", ""), {}).items():
        for node in _nodes(data, path):
            for key in keys:
                node.pop(key, None)
    return data


def _due(node: dict[str, Any], rule: Rule) -> bool:
    """Whether `node` is in the other shape than its target's."""
    if isinstance(rule, Degrade):
        return node.get("type") == rule.type
    if isinstance(rule, Rename):
        return rule.source in node and rule.destination not in node
    if rule.listed:
        return rule.field not in node and any(source in node for source in rule.sources)
    return rule.field in node


def _move(node: dict[str, Any], rule: Rule) -> None:
    if isinstance(rule, Rename):
        node[rule.destination] = node.pop(rule.source)
        return
    moved = rule.becomes(node) if isinstance(rule, Degrade) else (rule.spread if rule.listed else rule.gather)(node)
    node.clear()
    node.update(moved)


def _nodes(data: Any, path: Path) -> Iterator[dict[str, Any]]:
    if not path:
        if isinstance(data, dict):
            yield cast("dict[str, Any]", data)
        return
    step, rest = path[0], path[1:]
    if step == "*":
        items: Any = data.values() if isinstance(data, dict) else data if isinstance(data, list) else ()
        for item in cast("Iterable[Any]", items):
            yield from _nodes(item, rest)
    elif isinstance(data, dict) and step in data:
        yield from _nodes(cast("dict[str, Any]", data)[step], rest)


# -- the rules of a version ---------------------------------------------------------------------


def reshapes(version: str) -> Mapping[str, Reshape]:
    """The generated reshapes of a version (by name or wire version; an unknown one has none)."""
    try:
        return registry.protocol(version).reshapes
    except (KeyError, LookupError, ValueError):
        return {}


@cache
def _own(target: Any) -> tuple[Reshape, ...]:
    """The reshapes of the version whose generated package defines `target`."""
    module = getattr(target, "__module__", "")
    found = (name for name in registry.names() if module.startswith(f"{registry.load_version(name).__name__}."))
    return tuple(reshapes(next(found, "")).values())


def shape(data: Any, target: Any, version: str | None = None) -> Any:
    """Wire JSON built in another version's shape, moved into `target`'s where `version` (None: the
    version `target` is of, whichever it is) holds it differently."""
    rules = tuple(reshapes(version).values()) if version is not None else _own(target)
    return reshaped(data, target, rules) if rules else data


def carries(target: Any, key: str, version: str) -> bool:
    """Whether `version`'s model `target` holds what other versions write as `key`: a field of its
    own, or the list field a reshape spreads `key` into."""
    if versions.defines(target, key):
        return True
    rule = reshapes(version).get(getattr(target, "__name__", ""))
    return rule is not None and key in rule.sources


def shaped(target: Any, version: str) -> Callable[[Any], Any]:
    """The validator of `target` of `version` (`versions.validator`), for wire JSON built in another
    version's shape (the authoring layer writes `content`): reshaped first where the version needs it."""
    validate = versions.validator(target)
    rules = tuple(reshapes(version).values())
    if not rules:
        return validate
    return lambda data: validate(reshaped(data, target, rules))
