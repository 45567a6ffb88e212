"""Route maps: which operations become tools, which resources (or resource templates), which are left
out (docs/openapi.md, "Route maps").

A route map is a list of rules read in order; the first rule an operation matches decides, and an
operation no rule matches is a tool (`DEFAULT_ROUTES` is empty: every operation a tool, as hosts
show tools and leave resources for the user to attach). A rule matches on any of methods, a path
glob (fnmatch over the path template) and tags (the operation has one of them); a rule naming none
matches everything. `resource` only turns an operation that can be read as a resource into one: a
GET with no body, its path and query parameters scalars (the URI template's variables), its header
and cookie parameters optional (a resource never sends them), answering JSON or text; any other
operation a `resource` rule matches stays a tool.

The file (`--routes FILE`, JSON or YAML)::

    routes:
      - {kind: exclude, tags: [admin]}
      - {kind: resource, methods: [GET], path: "/pets*"}
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from .errors import DescriptionError
from .load import parse, read_source

RouteKind = Literal["tool", "resource", "exclude"]
KINDS: tuple[RouteKind, ...] = ("tool", "resource", "exclude")
_KEYS = frozenset({"kind", "methods", "path", "tags"})


@dataclass(frozen=True)
class Route:
    kind: RouteKind
    methods: frozenset[str] = frozenset()  # upper case; empty: any
    path: str | None = None  # fnmatch glob over the path template; None: any
    tags: frozenset[str] = frozenset()  # the operation has one of these; empty: any

    def matches(self, method: str, path: str, tags: Iterable[str]) -> bool:
        return (
            (not self.methods or method.upper() in self.methods)
            and (self.path is None or fnmatch.fnmatchcase(path, self.path))
            and (not self.tags or not self.tags.isdisjoint(tags))
        )


DEFAULT_ROUTES: tuple[Route, ...] = ()


def route_kind(routes: Iterable[Route], method: str, path: str, tags: Iterable[str]) -> RouteKind:
    """The kind the first matching rule gives (`tool` when none matches)."""
    tags = tuple(tags)
    for route in routes:
        if route.matches(method, path, tags):
            return route.kind
    return "tool"


def _strings(rule: Mapping[str, Any], key: str, where: str) -> list[str]:
    value = rule.get(key, [])
    value = [value] if isinstance(value, str) else value
    if not isinstance(value, list) or not all(isinstance(v, str) for v in cast("list[Any]", value)):
        raise DescriptionError(f"{where}: `{key}` must be a string or a list of strings")
    return cast("list[str]", value)


def parse_routes(data: Any, origin: str) -> tuple[Route, ...]:
    """The rules of a route map document (`{"routes": [...]}`)."""
    rules = data.get("routes") if isinstance(data, dict) else None
    if not isinstance(rules, list):
        raise DescriptionError(f"{origin}: a route map is a list of rules under `routes`")
    out: list[Route] = []
    for index, rule in enumerate(cast("list[Any]", rules)):
        where = f"{origin}: rule {index + 1}"
        if not isinstance(rule, dict):
            raise DescriptionError(f"{where} is not an object")
        rule = cast("dict[str, Any]", rule)
        unknown = sorted(set(rule) - _KEYS)
        if unknown:
            raise DescriptionError(f"{where}: unknown key `{unknown[0]}` (known: {', '.join(sorted(_KEYS))})")
        kind = rule.get("kind")
        if kind not in KINDS:
            raise DescriptionError(f"{where}: `kind` must be one of {', '.join(KINDS)} (found {kind!r})")
        path = rule.get("path")
        if path is not None and not isinstance(path, str):
            raise DescriptionError(f"{where}: `path` must be a string (an fnmatch glob)")
        methods = frozenset(m.upper() for m in _strings(rule, "methods", where))
        out.append(Route(kind, methods, path, frozenset(_strings(rule, "tags", where))))
    return tuple(out)


def read_routes(source: str) -> tuple[Route, ...]:
    """The route map in a file (JSON or YAML)."""
    raw, _ = read_source(source)
    return parse_routes(parse(raw, source), source)
