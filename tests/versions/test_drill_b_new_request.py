"""Drill b: a new request (`widgets/list`) gated by a new capability (`widgets`), and a new notification
(`notifications/widgets/list_changed`) with its `subscriptions/listen` filter. The gate comes from the
capability policy's naming convention and the filter from the schema's own link: no edit."""

from __future__ import annotations

from typing import Any

from tests.fixtures.drill_versions import DRILL_WIRE
from tests.support.drill import NEEDS, TRANSPORTS, check_common, error_code, ok, step

CHANGE = "b"


def test_every_client_of_every_version_gets_results_valid_in_its_own_schema(seen: dict[str, Any]) -> None:
    check_common(seen)
    assert NEEDS[CHANGE] == []


def test_the_new_request_is_gated_on_the_new_capability(seen: dict[str, Any]) -> None:
    assert (
        "widgets/list (client to server): no rule in policy/capabilities.json: gated on server:widgets"
        in (seen["_generate"])
    )
    stdio = ok(seen, f"stub/stdio/{DRILL_WIRE}")
    assert stdio["capabilities"]["widgets"] == {"listChanged": True}  # declared, advertised by server/discover
    for transport in TRANSPORTS:
        key = f"stub/{transport}/{DRILL_WIRE}"
        assert step(ok(seen, key), "widgets", key)["widgets"] == [{"name": "dial"}]
        # Servers without widgets: the authoring layer's, and one on the 2026-07-28 stub.
        for kind in ("app", "old"):
            assert error_code(ok(seen, f"{kind}/{transport}/{DRILL_WIRE}"), "widgets") == -32601


def test_the_new_notification_reaches_a_listening_client(seen: dict[str, Any]) -> None:
    for transport in TRANSPORTS:
        key = f"stub/{transport}/{DRILL_WIRE}"
        listened = step(ok(seen, key), "listen", key)
        assert listened["agreed"] == {"toolsListChanged": True, "widgetsListChanged": True}, key
        assert listened["got"] == ["notifications/tools/list_changed", "notifications/widgets/list_changed"], key
        # A server on the 2026-07-28 stub agrees to what it can send, and sends it.
        key = f"old/{transport}/{DRILL_WIRE}"
        listened = step(ok(seen, key), "listen", key)
        assert listened == {"agreed": {"toolsListChanged": True}, "got": ["notifications/tools/list_changed"]}, key
