"""Render a version's `crossing.py` from its crossing tables (`mcp_bindgen.crossing`)."""

from __future__ import annotations

from ..crossing import Pair
from .fill import function
from .surface_modules import reshape_record
from .templates import render


def _params(pair: Pair) -> str:
    methods = []
    for method, table in pair.params.items():
        entries = []
        for key, param in table.items():
            equals = f", equals={param.equals!r}" if param.equals is not None else ""
            entries.append(f"{key!r}: ParamOutcome({param.outcome!r}, {param.reason!r}{equals})")
        methods.append(f"{method!r}: {{{', '.join(entries)}}}")
    return "{" + ", ".join(methods) + "}"


def _moves(pair: Pair) -> dict[str, str]:
    """The pair's degrades, reshapes and renames as the `spec.Degrade` / `spec.Reshape` / `spec.Rename`
    records (none: left out)."""
    degrade = [f"Degrade({t!r}, {function(b)}, MappingProxyType({places!r}))" for t, b, places in pair.degrade]
    reshapes = [reshape_record(rule.entry, places, listed) for rule, listed, places in pair.reshapes]
    renames = [f"Rename({t!r}, {a!r}, {b!r}, MappingProxyType({places!r}))" for t, a, b, places in pair.renames]
    return {
        name: "(" + "".join(f"{r}, " for r in records) + ")"
        for name, records in (("degrade", degrade), ("reshapes", reshapes), ("renames", renames))
        if records
    }


def render_crossing(version: str, header: str, pairs: list[Pair]) -> str:
    views = [
        {
            "source": p.source,
            "destination": p.destination,
            "dropped": repr(p.drops),
            "params": _params(p),
            "codes": repr(p.codes),
            "overloaded": repr(p.overloaded),
            "moves": _moves(p),
        }
        for p in pairs
    ]
    names = {"Crossing"} | ({"ParamOutcome"} if any(p.params for p in pairs) else set())
    names |= {"Reshape"} if any(p.reshapes for p in pairs) else set()
    names |= {"Rename"} if any(p.renames for p in pairs) else set()
    names |= {"Degrade"} if any(p.degrade for p in pairs) else set()
    imports = ", ".join(sorted(names))
    return render("crossing.py.j2", header=header, version=version, pairs=views, imports=imports)
