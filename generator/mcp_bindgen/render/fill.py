"""A policy's JSON template (policy/crossing.json's content `becomes`, policy/reshapes.json's `spread`
items) compiled into the source of a function that builds it from a value's fields, for the generated
tables (`spec.Degrade.becomes`, `spec.Spread.item`): the runtime calls it and interprets nothing.

In a template, a string that is one `{a|b}` is the value of the first of fields a, b the value has
(its key left out where it has none); in other strings each `{a|b}` is the text of the first of those
fields that is not null, a `[...]` part is left out where a field in it is missing or null, and the
whole string (its key) is left out where a field outside such parts is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_FIELD = re.compile(r"\{([^{}]+)\}")
_OPTIONAL = re.compile(r"\[([^\[\]]*)\]")
Code = tuple[str, str | None]  # an expression, and the condition under which it is there (None: always)


def function(template: Any) -> str:
    """The source of `lambda b: <template filled from the fields of mapping b>`."""
    return f"lambda b: {_value(template)[0]}"


def _value(template: Any) -> Code:
    if isinstance(template, Mapping):
        items = [(key, _value(item)) for key, item in template.items()]  # pyright: ignore[reportUnknownVariableType]
        parts = [f"{k!r}: {v}" if c is None else f"**({{{k!r}: {v}}} if {c} else {{}})" for k, (v, c) in items]
        return "{" + ", ".join(parts) + "}", None
    if isinstance(template, (list, tuple)):
        values = [_value(item) for item in template]  # pyright: ignore[reportUnknownVariableType]
        return "[" + ", ".join(v if c is None else f"*([{v}] if {c} else [])" for v, c in values) + "]", None
    if not isinstance(template, str):
        return repr(template), None
    whole = _FIELD.fullmatch(template)
    if whole is not None:
        names = whole[1].split("|")
        value = f"b[{names[-1]!r}]"
        for name in reversed(names[:-1]):
            value = f"(b[{name!r}] if {name!r} in b else {value})"
        return value, " or ".join(f"{name!r} in b" for name in names)
    parts: list[str] = []
    required: list[str] = []  # the conditions of the fields outside `[...]`
    for index, segment in enumerate(_OPTIONAL.split(template)):
        if not segment:
            continue
        text, present = _text(segment)
        if index % 2 == 0 or present is None:
            parts.append(text)
            required += [present] if present is not None else []
        else:
            parts.append(f"({text} if {present} else '')")
    return " + ".join(parts) or "''", " and ".join(f"({c})" for c in required) or None


def _text(segment: str) -> Code:
    """A string of literal text and `{a|b}` fields: their text concatenated, and when all are not null."""
    pieces: list[str] = []
    conditions: list[str] = []
    for index, piece in enumerate(_FIELD.split(segment)):
        if index % 2 == 0:
            pieces += [repr(piece)] if piece else []
            continue
        names = piece.split("|")
        value = f"b[{names[-1]!r}]"
        for name in reversed(names[:-1]):
            value = f"(b[{name!r}] if b.get({name!r}) is not None else {value})"
        pieces.append(f"str({value})")
        conditions.append(" or ".join(f"b.get({name!r}) is not None" for name in names))
    return " + ".join(pieces) or "''", " and ".join(f"({c})" for c in conditions) or None


def gathered(entry: Mapping[str, Any]) -> str:
    """The source of a policy/reshapes.json entry's move into plain fields: `lambda b: <b without the
    list field, each `gather`'s `into` made from the items (objects) whose fields match `where`>`."""
    field = entry["field"]
    items = f"(i for i in (b[{field!r}] if isinstance(b[{field!r}], list) else ()) if isinstance(i, dict))"
    parts = [f"**{{k: v for k, v in b.items() if k != {field!r}}}"]
    for gather in entry.get("gather", ()):
        take, into = gather["take"], gather["into"]
        where = "".join(f" and i.get({k!r}) in {tuple(v)!r}" for k, v in gather.get("where", {}).items())
        chosen = f"for i in {items} if {take!r} in i{where}"
        if gather.get("join", "concat") == "concat":
            value = f"[x {chosen} for x in (i[{take!r}] if isinstance(i[{take!r}], list) else [i[{take!r}]])]"
            parts.append(f"{into!r}: {value}")
        else:  # the first value, where an item has one
            parts.append(f"**{{{into!r}: v for v in [i[{take!r}] {chosen}][:1]}}")
    return "lambda b: {" + ", ".join(parts) + "}"


def spread(entry: Mapping[str, Any]) -> str:
    """The source of a policy/reshapes.json entry's move into the list field: `lambda b: <b without
    the plain fields, the list an item per plain field it has (its `spread` `item` filled from b)>`."""
    sources = tuple(dict.fromkeys(s["from"] for s in entry.get("spread", ())))
    items = ", ".join(f"*([{_value(s['item'])[0]}] if {s['from']!r} in b else [])" for s in entry.get("spread", ()))
    rest = f"**{{k: v for k, v in b.items() if k not in {sources!r}}}"
    return f"lambda b: {{{rest}, {entry['field']!r}: [{items}]}}"
