"""Redaction rules, as data: what never reaches a session file.

A rule set names HTTP headers (whole value replaced), JSON field names (the value of any object key
of that name, at any depth of a message, replaced), regular expressions (each match in any string
replaced) and literal secrets (each occurrence in any string replaced). The defaults cover
`Authorization`, cookies and the usual token fields; a JSON file (`--redaction FILE`) adds to them, or
replaces them with `"defaults": false`:

    {"headers": ["x-api-key"], "fields": ["password"], "patterns": ["sk-[A-Za-z0-9]+"], "values": []}
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

PLACEHOLDER = "[REDACTED]"

DEFAULT_HEADERS = (
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
    "api-key",
    "dpop",
)
DEFAULT_FIELDS = (
    "access_token",
    "refresh_token",
    "id_token",
    "client_secret",
    "password",
    "api_key",
    "apiKey",
    "token",
    "authorization",
)
# A bearer credential or a JWT inside any string (a token echoed by a tool, a header copied into a log).
DEFAULT_PATTERNS = (
    r"(?i)(?<=bearer )[A-Za-z0-9._~+/=-]{8,}",
    r"(?i)(?<=dpop )[A-Za-z0-9._~+/=-]{8,}",
    r"eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*",
)


class RedactionError(ValueError):
    """A redaction rule file that cannot be used (the message says which rule and why)."""


@dataclass(frozen=True)
class Redaction:
    headers: tuple[str, ...] = DEFAULT_HEADERS
    fields: tuple[str, ...] = DEFAULT_FIELDS
    patterns: tuple[str, ...] = DEFAULT_PATTERNS
    values: tuple[str, ...] = ()
    placeholder: str = PLACEHOLDER
    _compiled: tuple[re.Pattern[str], ...] = field(default=(), init=False, repr=False, compare=False)
    _header_names: frozenset[str] = field(default=frozenset(), init=False, repr=False, compare=False)
    _field_names: frozenset[str] = field(default=frozenset(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        compiled: list[re.Pattern[str]] = []
        for pattern in self.patterns:
            try:
                compiled.append(re.compile(pattern))
            except re.error as exc:
                raise RedactionError(f"redaction pattern {pattern!r} is not a regular expression: {exc}") from None
        object.__setattr__(self, "_compiled", tuple(compiled))
        object.__setattr__(self, "_header_names", frozenset(h.lower() for h in self.headers))
        object.__setattr__(self, "_field_names", frozenset(f.lower() for f in self.fields))

    def with_rules(
        self,
        *,
        headers: Iterable[str] = (),
        fields: Iterable[str] = (),
        patterns: Iterable[str] = (),
        values: Iterable[str] = (),
    ) -> Redaction:
        return Redaction(
            headers=(*self.headers, *headers),
            fields=(*self.fields, *fields),
            patterns=(*self.patterns, *patterns),
            values=(*self.values, *(v for v in values if v)),
            placeholder=self.placeholder,
        )

    def describe(self) -> dict[str, Any]:
        """What the session header says of the rules (never the literal secrets themselves)."""
        return {
            "headers": list(self.headers),
            "fields": list(self.fields),
            "patterns": list(self.patterns),
            "values": len(self.values),
            "placeholder": self.placeholder,
        }

    def text(self, value: str) -> str:
        for secret in self.values:
            value = value.replace(secret, self.placeholder)
        for pattern in self._compiled:
            value = pattern.sub(self.placeholder, value)
        return value

    def json(self, value: Any) -> Any:
        """A copy of a decoded JSON value with every named field and secret replaced."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(item) for item in cast("list[Any]", value)]
        if isinstance(value, dict):
            names = self._field_names
            out: dict[str, Any] = {}
            for key, item in cast("dict[str, Any]", value).items():
                if key.lower() in names and isinstance(item, str | int | float):
                    out[key] = self.placeholder
                else:
                    out[key] = self.json(item)
            return out
        return value

    def header_map(self, headers: Mapping[str, str]) -> dict[str, str]:
        names = self._header_names
        return {k.lower(): (self.placeholder if k.lower() in names else self.text(v)) for k, v in headers.items()}


DEFAULT = Redaction()


def load_redaction(path: str | Path) -> Redaction:
    """A rule file (see the module docstring) on top of the defaults, or instead of them."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise RedactionError(f"cannot read the redaction rules {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise RedactionError(f"{path}: the redaction rules are not JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise RedactionError(f"{path}: the redaction rules must be a JSON object with headers/fields/patterns/values")
    rules = cast("dict[str, Any]", data)
    unknown = sorted(set(rules) - {"headers", "fields", "patterns", "values", "defaults", "placeholder"})
    if unknown:
        raise RedactionError(f"{path}: unknown redaction key {unknown[0]!r} (use headers, fields, patterns, values)")
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("headers", "fields", "patterns", "values"):
        items = rules.get(key, [])
        if not isinstance(items, list) or not all(isinstance(i, str) for i in cast("list[Any]", items)):
            raise RedactionError(f"{path}: redaction {key!r} must be a list of strings")
        lists[key] = tuple(cast("list[str]", items))
    base = DEFAULT if rules.get("defaults", True) else Redaction(headers=(), fields=(), patterns=())
    merged = base.with_rules(**lists)
    placeholder = rules.get("placeholder")
    if isinstance(placeholder, str):
        merged = Redaction(merged.headers, merged.fields, merged.patterns, merged.values, placeholder)
    return merged
