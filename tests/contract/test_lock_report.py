"""`lock --check`'s markdown report counts changes as its tables show them (issue 45, item 6): a
change found at every locked version is one row "all 3" and one change in the count, not three."""

from __future__ import annotations

from mcp_bindgen.compat import Change
from mcp_bindings.live.contract.lock import CheckResult

VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")


def test_the_count_agrees_with_the_table() -> None:
    removed = [Change("tools/forecast", "tool removed", "breaking", version) for version in VERSIONS]
    added = Change("tools/radar", "tool added", "additive", "2025-11-25")
    report = CheckResult([*removed, added], VERSIONS).render()
    assert report == (
        "# Surface check\n\n"
        "1 breaking, 1 additive change(s).\n\n"
        "## Breaking\n\n| where | change | versions |\n|---|---|---|\n| tools/forecast | tool removed | all 3 |\n\n"
        "## Additive\n\n| where | change | versions |\n|---|---|---|\n| tools/radar | tool added | 2025-11-25 |\n"
    )
