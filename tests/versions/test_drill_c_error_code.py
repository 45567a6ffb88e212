"""Drill c: a new error code in the schema (`StaleDefinitionError`, -32030), raised by a handler and seen
by every client; the new version's clients name it from the generated tables."""

from __future__ import annotations

from typing import Any

from tests.fixtures.drill_versions import DRILL_WIRE, STALE_DEFINITION
from tests.support.drill import NEEDS, check_common, every_visit, step

CHANGE = "c"


def test_every_client_of_every_version_gets_results_valid_in_its_own_schema(seen: dict[str, Any]) -> None:
    check_common(seen)
    assert NEEDS[CHANGE] == []


def test_the_new_code_is_generated_raised_and_seen_by_name(seen: dict[str, Any]) -> None:
    assert seen["error_codes"]["STALE_DEFINITION"] == STALE_DEFINITION
    for key, version, visit in every_visit(seen, ["stub"]):
        stale = step(visit, "stale", key)
        assert stale["code"] == STALE_DEFINITION and stale["data"] == {"currentVersion": "4"}, key
        # The new version's tables name it; older versions do not, and get the code as it is.
        assert stale["name"] == ("STALE_DEFINITION" if version == DRILL_WIRE else None), key
