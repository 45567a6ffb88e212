"""Drill f: a renamed field (`ToolAnnotations.openWorldHint` -> `openWorld`) and a new capability flag
(`tools.versioned`). Both cross with no edit: each side gets what its schema defines (a renamed
field's value does not reach the other name: the schema cannot say it is the same field)."""

from __future__ import annotations

from typing import Any

from tests.fixtures.drill_versions import DRILL_WIRE
from tests.support.drill import NEEDS, check_common, every_visit, ok, step

CHANGE = "f"


def test_every_client_of_every_version_gets_results_valid_in_its_own_schema(seen: dict[str, Any]) -> None:
    check_common(seen)
    assert NEEDS[CHANGE] == []


def test_the_renamed_field_is_sent_under_its_new_name_only_at_the_new_version(seen: dict[str, Any]) -> None:
    for key, version, visit in every_visit(seen, ["stub"]):
        annotations = step(visit, "tools", key)["tools"][0].get("annotations", {})
        if version == DRILL_WIRE:
            assert annotations == {"openWorld": True}, key
        else:
            assert "openWorld" not in annotations, key


def test_the_new_flag_is_advertised_at_the_new_version_only(seen: dict[str, Any]) -> None:
    assert ok(seen, f"stub/stdio/{DRILL_WIRE}")["capabilities"]["tools"] == {"listChanged": True, "versioned": True}
    for version in ("2025-11-25", "2026-07-28"):
        assert ok(seen, f"stub/stdio/{version}")["capabilities"]["tools"] == {"listChanged": True}
