"""Stable Python identifiers for a server's tools, prompts and resource templates.

`get-user.v2` -> method `get_user_v2`, models `GetUserV2Input` / `GetUserV2Output`. The rule
depends on the name alone, so an identifier never changes while its name does not. Names that map
to one identifier are told apart by a numeric suffix in the order of their wire names (`a-b` ->
`a_b`, `a_b` -> `a_b_2`), and every such collision is reported.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

# Attributes of the generated client class that a tool method must not shadow.
RESERVED = frozenset({"client", "session", "server_info", "protocol_version", "call", "close", "self"})


def identifier(name: str, fallback: str) -> str:
    """A snake_case Python identifier for a wire name; `fallback` when nothing usable is left."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    text = re.sub(r"[^0-9A-Za-z]+", "_", words)
    text = re.sub(r"_+", "_", text).strip("_").lower()
    if not text:
        text = fallback
    if text[0].isdigit():
        text = f"{fallback}_{text}"
    if keyword.iskeyword(text) or keyword.issoftkeyword(text) or text in RESERVED:
        text += "_"
    return text


def pascal(ident: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in ident.split("_") if part)


@dataclass(frozen=True)
class Collision:
    kind: str
    identifier: str
    names: tuple[str, ...]  # the wire names that mapped to it, in order: the first keeps it

    def message(self) -> str:
        others = ", ".join(f"`{n}` -> `{self.identifier}_{i + 2}`" for i, n in enumerate(self.names[1:]))
        return (
            f"{self.kind} names {', '.join(f'`{n}`' for n in self.names)} all map to `{self.identifier}`: "
            f"`{self.names[0]}` keeps it, {others}"
        )


def assign(kind: str, names: list[str], fallback: str, taken: set[str]) -> tuple[dict[str, str], list[Collision]]:
    """Wire name -> unique identifier (not in `taken`, which is updated), and the collisions resolved."""
    groups: dict[str, list[str]] = {}
    for name in sorted(set(names)):
        groups.setdefault(identifier(name, fallback), []).append(name)
    out: dict[str, str] = {}
    collisions: list[Collision] = []
    for ident, members in sorted(groups.items()):
        if len(members) > 1:
            collisions.append(Collision(kind, ident, tuple(members)))
        for i, name in enumerate(members):
            candidate = ident if i == 0 else f"{ident}_{i + 1}"
            while candidate in taken:
                candidate += "_"
            taken.add(candidate)
            out[name] = candidate
    return out, collisions
