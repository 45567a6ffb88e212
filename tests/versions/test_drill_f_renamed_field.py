"""Drill f: a renamed field (`ToolAnnotations.openWorldHint` -> `openWorld`) and a new capability flag
(`tools.versioned`). The flag needs nothing; the rename needs one policy entry (policy/crossing.json
`renamed_fields`, passed with `generate --policy`: the schema cannot say that two names are one
field), and with it a value set under either name reaches every client under its own version's name."""

from __future__ import annotations

from typing import Any

from tests.fixtures.drill_versions import DRILL_WIRE
from tests.support.drill import NEEDS, TRANSPORTS, check_common, every_visit, ok, step, valid_in

CHANGE = "f"


def test_every_client_of_every_version_gets_results_valid_in_its_own_schema(seen: dict[str, Any]) -> None:
    check_common(seen)
    assert NEEDS[CHANGE] == ["generator/mcp_bindgen/policy/crossing.json (1 entry)"]


def _annotations(visit: dict[str, Any], key: str) -> Any:
    tools = step(visit, "tools", key)
    return tools["tools"][0].get("annotations")


def test_a_value_set_under_the_new_name_reaches_older_clients_under_the_old_name(seen: dict[str, Any]) -> None:
    for key, version, visit in every_visit(seen, ["stub"]):
        annotations = _annotations(visit, key)
        if version == DRILL_WIRE:
            assert annotations == {"openWorld": True}, key
        elif version >= "2025-03-26":  # the versions with tool annotations
            assert annotations == {"openWorldHint": True}, key
            valid_in(version, seen, "ListToolsResult", step(visit, "tools", key))
        else:
            assert annotations is None, key
    for transport in TRANSPORTS:  # the official SDK's client speaks 2025-11-25
        assert _annotations(seen[f"stub/{transport}/sdk"], transport) == {"openWorldHint": True}


def test_a_value_set_under_the_old_name_reaches_the_new_client_under_the_new_name(seen: dict[str, Any]) -> None:
    """A server written on the 2026-07-28 stub and not regenerated sets `openWorldHint`."""
    for key, version, visit in every_visit(seen, ["old"]):
        expected = {"openWorld": True} if version == DRILL_WIRE else {"openWorldHint": True}
        assert _annotations(visit, key) == (expected if version >= "2025-03-26" else None), key
        valid_in(version, seen, "ListToolsResult", step(visit, "tools", key))


def test_the_new_flag_is_advertised_at_the_new_version_only(seen: dict[str, Any]) -> None:
    assert ok(seen, f"stub/stdio/{DRILL_WIRE}")["capabilities"]["tools"] == {"listChanged": True, "versioned": True}
    for version in ("2025-11-25", "2026-07-28"):
        assert ok(seen, f"stub/stdio/{version}")["capabilities"]["tools"] == {"listChanged": True}
