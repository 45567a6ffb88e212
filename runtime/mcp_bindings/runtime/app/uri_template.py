"""RFC 6570 URI templates for resource templates: a strict parser, a matcher, and expansion.

Expansion (values -> URI) is the maintained `uritemplate` library's. Matching (URI -> values) is
ours, because no maintained Python library does it: `uritemplate` only expands (and its parser is
lenient: `{a` is taken as a literal, `{a b}` as a variable named "a b"). So a template is parsed
here, strictly after the RFC's grammar (level 4), compiled once into a regular expression, and
checked at registration against its own expansion (`Template.check`): a template whose
expansions this matcher would not read back is refused then, not at the first `resources/read`.

What a match gives each variable (percent-decoded):
* `{x}`, `{+x}`, `{#x}`, `{.x}`, `{/x}`, `{;x}`, `{?x}`, `{&x}`: a string;
* exploded `{x*}` (any operator): a list of strings (`{/x*}`: the path segments, `{x*}`: the
  comma-separated items, `{?x*}`: every `x=` of the query);
* `{x:3}`: a string of at most 3 characters.
`{x}` and `{+x}` must match at least one character (so `users://{id}` does not match `users://`);
the other operators' variables may be absent (they expand to nothing when undefined), and are then
left out of the match. Query variables (`?`, `&`) are read by name, in any order. `{+x}` and `{#x}`
values are percent-decoded too; as their expansion passes a "%XX" in a value through unencoded, a
value that held a literal "%XX" reads back decoded. A template whose
variables follow one another with nothing between them (`{a}{b}`) cannot be matched unambiguously
and is refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import parse_qsl, unquote

__all__ = ["Template", "TemplateError", "VarSpec"]

# RFC 3986 scheme, then anything: what `resources/read` URIs and templates must start with.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
# varname = varchar *( ["."] varchar ); varchar = ALPHA / DIGIT / "_" / pct-encoded
_VARCHAR = r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})"
_VARNAME = re.compile(rf"{_VARCHAR}(?:\.?{_VARCHAR})*")
_PREFIX = re.compile(r"[1-9][0-9]{0,3}")
# Characters a literal part may not contain (RFC 6570 section 2.1).
_BAD_LITERAL = re.compile(r"[\x00-\x20\"'<>\\^`|{}\x7f]")
_OPERATORS = frozenset("+#./;?&")
_RESERVED_OPERATORS = frozenset("=,!@|")


class TemplateError(ValueError):
    """A URI template that is not RFC 6570, or that could not be matched."""


@dataclass(frozen=True, slots=True)
class VarSpec:
    name: str
    explode: bool = False
    prefix: int | None = None


@dataclass(frozen=True, slots=True)
class Expression:
    operator: str  # "" for simple string expansion
    variables: tuple[VarSpec, ...]


def parse(template: str) -> list[str | Expression]:
    """The literal parts and expressions of `template`; `TemplateError` naming the first fault."""
    parts: list[str | Expression] = []
    position = 0
    while position < len(template):
        start = template.find("{", position)
        close = template.find("}", position)
        if close != -1 and (start == -1 or close < start):
            raise TemplateError(f"unmatched '}}' at offset {close}")
        literal = template[position : len(template) if start == -1 else start]
        if literal:
            bad = _BAD_LITERAL.search(literal)
            if bad is not None:
                raise TemplateError(f"character {bad.group()!r} is not allowed outside an expression")
            parts.append(literal)
        if start == -1:
            break
        end = template.find("}", start)
        if end == -1:
            raise TemplateError(f"unclosed '{{' at offset {start}")
        parts.append(_expression(template[start + 1 : end]))
        position = end + 1
    return parts


def _expression(body: str) -> Expression:
    if not body:
        raise TemplateError("empty expression '{}'")
    operator = ""
    if body[0] in _OPERATORS:
        operator, body = body[0], body[1:]
    elif body[0] in _RESERVED_OPERATORS:
        raise TemplateError(f"operator {body[0]!r} is reserved for future extensions of RFC 6570")
    variables: list[VarSpec] = []
    for spec in body.split(","):
        explode = spec.endswith("*")
        if explode:
            spec = spec[:-1]
        name, colon, prefix = spec.partition(":")
        if "*" in name:
            raise TemplateError(f"{spec!r}: a prefix ':n' and explode '*' cannot be combined")
        if _VARNAME.fullmatch(name) is None:
            raise TemplateError(f"{name!r} in {{{operator}{body}}} is not a variable name")
        if colon and (_PREFIX.fullmatch(prefix) is None or explode):
            raise TemplateError(f"{spec!r}: a prefix is ':' and 1 to 9999 (and not combined with '*')")
        variables.append(VarSpec(name, explode, int(prefix) if colon else None))
    return Expression(operator, tuple(variables))


# Per operator: what comes first, and the characters a value may hold. Operators without reserved
# expansion percent-encode every reserved character of a value, so such a value holds none of
# them (anything else is let through, so a client that forgot to encode a space still matches);
# `+` and `#` pass reserved characters through. A lone unexploded `{+x}` / `{#x}` may hold commas.
_RESERVED = r"/?#\[\]@!$&'()*+,;="
_FIRST = {"": "", "+": "", "#": "#", ".": ".", "/": "/", ";": ";"}
_VALUE = {
    "": rf"[^{_RESERVED}]",
    "+": r"[^?#,]",
    "#": r"[^,]",
    ".": rf"[^{_RESERVED}.]",
    "/": rf"[^{_RESERVED}]",
    ";": rf"[^{_RESERVED}]",
}
_LONE_VALUE = {"+": r"[^?#]", "#": r"."}


class Template:
    """A parsed, compiled RFC 6570 template: `match(uri)` -> values or None; `expand(**values)`."""

    __slots__ = ("__dict__", "_groups", "_queries", "_regex", "parts", "template")

    def __init__(self, template: str) -> None:
        self.template = template
        if _SCHEME.match(template) is None:
            raise TemplateError(f"{template!r} does not start with a URI scheme (like 'file:' or 'users://')")
        self.parts = parse(template)
        names = [v.name for p in self.parts if isinstance(p, Expression) for v in p.variables]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise TemplateError(f"variable {duplicates[0]!r} appears more than once")
        for before, after in zip(self.parts, self.parts[1:], strict=False):
            if isinstance(before, Expression) and isinstance(after, Expression) and after.operator in ("", "+"):
                raise TemplateError(
                    f"{{{after.operator}{','.join(v.name for v in after.variables)}}} follows another expression "
                    "with nothing between them: no URI could tell where one value ends and the next begins"
                )
        self._groups: dict[str, tuple[VarSpec, str]] = {}  # regex group -> (variable, operator)
        self._queries: list[tuple[str, tuple[VarSpec, ...]]] = []  # (group, variables) of ? and &
        patterns: list[str] = []
        for index, part in enumerate(self.parts):
            after = self.parts[index + 1] if index + 1 < len(self.parts) else None
            # A value stops where the next expression starts: `{name}{.ext}` reads "a.b" as a, b.
            stop = _FIRST.get(after.operator, "?") if isinstance(after, Expression) else ""
            patterns.append(self._pattern(part, stop))
        self._regex = re.compile("".join(patterns), re.DOTALL)

    @property
    def variables(self) -> list[VarSpec]:
        return [v for p in self.parts if isinstance(p, Expression) for v in p.variables]

    @property
    def names(self) -> list[str]:
        return [v.name for v in self.variables]

    def _group(self, var: VarSpec, operator: str) -> str:
        group = f"v{len(self._groups)}"
        self._groups[group] = (var, operator)
        return group

    def _pattern(self, part: str | Expression, stop: str = "") -> str:
        if isinstance(part, str):
            return re.escape(part)
        operator = part.operator
        if operator in ("?", "&"):
            group = f"q{len(self._queries)}"
            self._queries.append((group, part.variables))
            return rf"(?:[?&](?P<{group}>[^#]*))?"
        lone = len(part.variables) == 1
        comma_joined = operator in ("", "+", "#")
        separator = "," if comma_joined else re.escape(operator)
        out: list[str] = []
        for index, var in enumerate(part.variables):
            group = self._group(var, operator)
            value = _LONE_VALUE.get(operator, _VALUE[operator]) if lone and not var.explode else _VALUE[operator]
            if stop and value.startswith("[^") and stop not in value:
                value = f"[^{re.escape(stop)}{value[2:]}"
            required = operator in ("", "+") and index == 0
            if operator == ";":
                name = re.escape(var.name)
                if var.explode:
                    out.append(rf"(?P<{group}>(?:;{name}(?:={value}*)?)*)")
                else:  # `;x` alone is x = ""
                    out.append(rf"(?P<{group}>;{name}(?:={value}*)?)?")
                continue
            if var.explode:
                body = rf"{value}+(?:{separator}{value}+)*"
            elif var.prefix is not None:
                body = f"{value}{{{1 if required else 0},{var.prefix}}}"
            else:
                body = f"{value}+" if required else f"{value}*"
            if required:
                out.append(rf"(?P<{group}>{body})")
            else:
                lead = re.escape(_FIRST[operator]) if index == 0 else separator
                out.append(rf"(?:{lead}(?P<{group}>{body}))?")
        return "".join(out)

    def match(self, uri: str) -> dict[str, str | list[str]] | None:
        """The variables of `uri` if it is an expansion of this template, else None."""
        found = self._regex.fullmatch(uri)
        if found is None:
            return None
        values: dict[str, str | list[str]] = {}
        for group, (var, operator) in self._groups.items():
            raw = found.group(group)
            if raw is None:
                continue
            if operator == ";":
                if var.explode:
                    if raw:
                        values[var.name] = [unquote(v.partition("=")[2]) for v in raw.split(";")[1:]]
                    continue
                values[var.name] = unquote(raw.partition("=")[2])
            elif var.explode:
                joiner = "," if operator in ("", "+", "#") else operator
                values[var.name] = [unquote(v) for v in raw.split(joiner)]
            else:
                values[var.name] = unquote(raw)
        if self._queries:  # one query however many expressions wrote it: read by name
            query = "&".join(raw for group, _ in self._queries if (raw := found.group(group)))
            pairs = parse_qsl(query, keep_blank_values=True)
            for _, variables in self._queries:
                for var in variables:
                    got = [v for k, v in pairs if k == var.name]
                    if got:
                        values[var.name] = got if var.explode else got[0]
        return values

    def expand(self, values: Mapping[str, str | Sequence[str]]) -> str:
        """The URI for `values` (RFC 6570 expansion, by the `uritemplate` library)."""
        return self._expander.expand(dict(values))

    @cached_property
    def _expander(self) -> Any:
        from uritemplate import URITemplate

        return URITemplate(self.template)

    def check(self) -> None:
        """Refuse a template whose expansions this matcher does not read back (`TemplateError`)."""
        sample: dict[str, str | list[str]] = {}
        for index, var in enumerate(self.variables):
            text = f"x{index}"
            sample[var.name] = [text, f"y{index}"] if var.explode else text
        uri = self.expand(sample)
        got = self.match(uri)
        if got != sample:
            raise TemplateError(
                f"{self.template!r} cannot be matched: its expansion {uri!r} reads back as {got!r}, not {sample!r}"
            )

    def __repr__(self) -> str:
        return f"Template({self.template!r})"


def is_uri(text: str) -> bool:
    """Whether `text` starts with a URI scheme."""
    return _SCHEME.match(text) is not None


def has_expression(text: str) -> bool:
    return "{" in text or "}" in text
