"""Render a version's `crossing.py` from its crossing tables (`mcp_bindgen.crossing`)."""

from __future__ import annotations

from ..crossing import Pair
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


def render_crossing(version: str, header: str, pairs: list[Pair]) -> str:
    views = [
        {
            "source": p.source,
            "destination": p.destination,
            "dropped": repr(p.dropped),
            "degrade": repr(p.degrade),
            "params": _params(p),
            "codes": repr(p.codes),
            "overloaded": repr(p.overloaded),
        }
        for p in pairs
    ]
    imports = "Crossing, ParamOutcome" if any(p.params for p in pairs) else "Crossing"
    return render("crossing.py.j2", header=header, version=version, pairs=views, imports=imports)
