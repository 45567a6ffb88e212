"""Drill a: a new optional field on `Tool` (`version`) and on `tools/call` params (`toolVersion`), echoed
back. Nothing outside generated/ changes; the field is seen only at the new version."""

from __future__ import annotations

from typing import Any

from tests.fixtures.drill_versions import DRILL_WIRE
from tests.support.drill import NEEDS, call_text, check_common, every_visit, step

CHANGE = "a"


def test_every_client_of_every_version_gets_results_valid_in_its_own_schema(seen: dict[str, Any]) -> None:
    check_common(seen)
    assert NEEDS[CHANGE] == []


def test_the_version_id_is_listed_and_echoed_at_the_new_version_only(seen: dict[str, Any]) -> None:
    for key, version, visit in every_visit(seen, ["stub"]):
        echo = step(visit, "tools", key)["tools"][0]
        text = call_text(step(visit, "call", key))
        if version == DRILL_WIRE:
            assert echo["version"] == "3" and text == f"echo {version} v3", key
        else:
            assert "version" not in echo and text == f"echo {version}", key


def test_a_server_not_regenerated_ignores_the_new_param(seen: dict[str, Any]) -> None:
    """The new client sends `toolVersion`; a server on the 2026-07-28 stub gets the params it knows."""
    for key, version, visit in every_visit(seen, ["old"]):
        assert call_text(step(visit, "call", key)) == f"echo {version}", key
        assert "version" not in step(visit, "tools", key)["tools"][0], key
