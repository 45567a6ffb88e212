"""`mcp-bindgen openapi diff OLD NEW`: which tools (and resources) of the packages two descriptions
generate changed, and whether each change breaks a caller.

Both descriptions are lowered with the same options and route map, and their surfaces (`surface.py`)
compared by `compat.compare_surfaces`, the comparison `mcp-bindgen lock --check` makes of a live
server: the same change classes, `breaking` or `additive` (an input schema that accepts less, a
removed tool or output field, breaks; docs/contract.md gives the rules).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any, Literal

from mcp_bindings.openapi.lower import Options

from ..compat import Change, compare_surfaces
from . import build_ir
from .surface import surface

Format = Literal["markdown", "json"]
_SUBJECT = re.compile(r"^((?:tool|resource template|resource) `[^`]*`)\s*(.*)$")


@dataclass(frozen=True)
class ApiDiff:
    old: str
    new: str
    changes: list[Change]

    @property
    def breaking(self) -> list[Change]:
        return [c for c in self.changes if c.kind == "breaking"]

    def subjects(self) -> dict[str, list[tuple[str, Change]]]:
        """`tool `name`` -> its changes, each with where in the tool it is."""
        out: dict[str, list[tuple[str, Change]]] = {}
        for change in self.changes:
            found = _SUBJECT.match(change.where)
            subject, rest = (found.group(1), found.group(2)) if found else (change.where, "")
            out.setdefault(subject, []).append((rest, change))
        return out

    def render(self, fmt: Format = "markdown") -> str:
        subjects = self.subjects()
        if fmt == "json":
            data: dict[str, Any] = {
                "old": self.old,
                "new": self.new,
                "breaking": len(self.breaking),
                "additive": len(self.changes) - len(self.breaking),
                "changed": {
                    subject: {
                        "breaks_a_caller": any(c.kind == "breaking" for _, c in entries),
                        "changes": [{"where": where, "what": c.what, "kind": c.kind} for where, c in entries],
                    }
                    for subject, entries in sorted(subjects.items())
                },
            }
            return json.dumps(data, indent=2, sort_keys=True) + "\n"
        lines = ["# OpenAPI description diff", "", f"`{self.old}` -> `{self.new}`", ""]
        if not self.changes:
            return "\n".join([*lines, "No changes: both describe the same tools and resources.", ""])
        breaking = sum(1 for entries in subjects.values() if any(c.kind == "breaking" for _, c in entries))
        lines.append(
            f"{len(subjects)} changed, {breaking} of them breaking a caller: "
            f"{len(self.breaking)} breaking, {len(self.changes) - len(self.breaking)} additive change(s)."
        )
        lines += ["", "| changed | breaks a caller | where | change |", "|---|---|---|---|"]
        for subject, entries in sorted(subjects.items()):
            for where, c in sorted(entries, key=lambda e: (e[1].kind != "breaking", e[0], e[1].what)):
                row = f"| {subject} | {'yes' if c.kind == 'breaking' else 'no'} | {where or '-'} | {c.what} |"
                lines.append(row.replace("\n", " "))
        return "\n".join(lines) + "\n"


def diff_descriptions(old: str, new: str, options: Options) -> ApiDiff:
    """The changes from the package `old` generates to the one `new` does (the same options)."""
    # The base URL is no part of the surface: a description naming no server still compares.
    options = replace(options, base_url=options.base_url or "https://api.example.invalid")
    before, after = surface(build_ir(old, options)), surface(build_ir(new, options))
    return ApiDiff(old, new, compare_surfaces(before, after, ""))
