"""`WWW-Authenticate` challenges (RFC 9110 §11.6.1, RFC 6750 §3): parsing and formatting.

parse_challenges('Bearer resource_metadata="https://h/.well-known/x", scope="a b"')
-> [Challenge(scheme="bearer", params={"resource_metadata": "https://h/.well-known/x", "scope": "a b"})]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, Self, overload

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_PARAM_START = re.compile(r"([!#$%&'*+\-.^_`|~0-9A-Za-z]+)[ \t]*=(?!=)")
_UNESCAPE = re.compile(r"\\(.)")


class _Named(Protocol):
    @property
    def params(self) -> Mapping[str, str]: ...


class Param:
    """A parameter of `obj.params` by the attribute's name: `challenge.scope`, `response.code` (None
    where absent)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type) -> Self: ...
    @overload
    def __get__(self, obj: _Named, owner: type) -> str | None: ...
    def __get__(self, obj: _Named | None, owner: type) -> Self | str | None:
        return self if obj is None else obj.params.get(self.name)


@dataclass(frozen=True)
class Challenge:
    scheme: str  # lower-cased
    params: Mapping[str, str] = field(default_factory=dict)  # names lower-cased
    token68: str | None = None

    resource_metadata = Param()
    scope = Param()
    error = Param()
    error_description = Param()

    def get(self, name: str) -> str | None:
        return self.params.get(name.lower())

    @property
    def scopes(self) -> list[str]:
        return (self.scope or "").split()


def parse_challenges(headers: str | Iterable[str]) -> list[Challenge]:
    """Every challenge in one or more `WWW-Authenticate` field values. Malformed parts are skipped."""
    values = [headers] if isinstance(headers, str) else list(headers)
    challenges: list[Challenge] = []
    for value in values:
        challenges.extend(_parse_one(value))
    return challenges


def bearer_challenge(headers: str | Iterable[str]) -> Challenge | None:
    """The first `Bearer` challenge, if any."""
    for challenge in parse_challenges(headers):
        if challenge.scheme == "bearer":
            return challenge
    return None


def _parse_one(value: str) -> list[Challenge]:
    out: list[Challenge] = []
    pos, end = 0, len(value)
    scheme: str | None = None
    params: dict[str, str] = {}
    token68: str | None = None

    def flush() -> None:
        if scheme is not None:
            out.append(Challenge(scheme.lower(), dict(params), token68))

    while pos < end:
        pos = _skip_space(value, pos)
        if pos < end and value[pos] == ",":
            pos += 1
            continue
        if pos >= end:
            break
        param = _PARAM_START.match(value, pos)
        if param is not None and scheme is not None:
            name = param.group(1).lower()
            pos = _skip_space(value, param.end())
            quoted = _QUOTED.match(value, pos)
            if quoted is not None:
                params.setdefault(name, _UNESCAPE.sub(r"\1", quoted.group(1)))
                pos = quoted.end()
                continue
            bare = _TOKEN.match(value, pos)
            if bare is not None:
                params.setdefault(name, bare.group(0))
                pos = bare.end()
                continue
            pos = _skip_to_comma(value, pos)  # malformed value
            continue
        token = _TOKEN.match(value, pos)
        if token is None:
            pos = _skip_to_comma(value, pos + 1)
            continue
        # A new challenge: `scheme [token68 | auth-params]`.
        flush()
        scheme, params, token68 = token.group(0), {}, None
        pos = _skip_space(value, token.end())
        if pos < end and _PARAM_START.match(value, pos) is None:
            t68 = _TOKEN68.match(value, pos)
            if t68 is not None:
                after = _skip_space(value, t68.end())
                if after >= end or value[after] == ",":
                    token68, pos = t68.group(0), after
    flush()
    return out


def _skip_space(value: str, pos: int) -> int:
    while pos < len(value) and value[pos] in " \t":
        pos += 1
    return pos


def _skip_to_comma(value: str, pos: int) -> int:
    comma = value.find(",", pos)
    return len(value) if comma < 0 else comma + 1


def quote(value: str) -> str:
    """An RFC 9110 quoted-string (CR/LF are not allowed in a header and are replaced by spaces)."""
    cleaned = value.replace("\r", " ").replace("\n", " ")
    return '"' + cleaned.replace("\\", "\\\\").replace('"', '\\"') + '"'


def format_challenge(scheme: str, params: Mapping[str, str | None]) -> str:
    """`Bearer error="insufficient_scope", scope="a b"`; parameters whose value is None are left out."""
    parts = [f"{name}={quote(value)}" for name, value in params.items() if value is not None]
    return scheme + (" " + ", ".join(parts) if parts else "")
