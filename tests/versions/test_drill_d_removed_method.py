"""Drill d: a removed method (`completion/complete`, with the `completions` capability): refused at the
new version, by the client before sending and by the server on the wire, and still served to older
clients by a server whose stub has it."""

from __future__ import annotations

from typing import Any

from tests.fixtures.drill_versions import DRILL_WIRE
from tests.support.drill import NEEDS, TRANSPORTS, check_common, error_code, every_visit, ok, step

CHANGE = "d"


def test_every_client_of_every_version_gets_results_valid_in_its_own_schema(seen: dict[str, Any]) -> None:
    check_common(seen)
    assert NEEDS[CHANGE] == []


def test_the_new_version_refuses_the_removed_method(seen: dict[str, Any]) -> None:
    for kind in ("stub", "app", "old"):
        for transport in TRANSPORTS:
            key = f"{kind}/{transport}/{DRILL_WIRE}"
            raw = step(ok(seen, key), "complete_raw", key)
            assert raw["client"]["mcp_error"]["message"].startswith("completion/complete does not exist in MCP"), key
            assert raw["wire"]["mcp_error"]["code"] == -32601, key  # even from a server whose stub has it


def test_older_clients_are_served_by_a_stub_that_has_it_and_refused_by_one_that_does_not(seen: dict[str, Any]) -> None:
    for key, version, visit in every_visit(seen, ["old"]):
        if version != DRILL_WIRE:
            assert step(visit, "complete", key)["completion"]["values"] == ["red"], key
    for key, version, visit in every_visit(seen, ["stub"]):
        if version != DRILL_WIRE:
            assert error_code(visit, "complete") == -32601, key  # the new stub has no completions
    for transport in TRANSPORTS:
        assert step(seen[f"old/{transport}/sdk"], "complete")["completion"]["values"] == ["red"]
        assert "completions" not in step(seen[f"stub/{transport}/sdk"], "initialize")["capabilities"]
