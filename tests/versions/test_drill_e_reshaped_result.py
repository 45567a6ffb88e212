"""Drill e: a result that changes shape (SEP-3279): `CallToolResult.outputs` in place of `content` and
`structuredContent`, `Tool.outputVariants` in place of `outputSchema`. Two policy entries
(policy/reshapes.json, passed with `generate --policy`) say how the shapes map; with them, results
cross to and from every older version, valid in each version's schema."""

from __future__ import annotations

from typing import Any

from tests.fixtures.drill_versions import DRILL_WIRE
from tests.support.drill import NEEDS, TRANSPORTS, call_text, check_common, every_visit, ok, step, valid_in

CHANGE = "e"
STRUCTURED = {"audience": "program", "data": None}


def test_every_client_of_every_version_gets_results_valid_in_its_own_schema(seen: dict[str, Any]) -> None:
    check_common(seen)
    assert NEEDS[CHANGE] == ["generator/mcp_bindgen/policy/reshapes.json (2 entries)"]


def _outputs(call: dict[str, Any]) -> dict[str, Any]:
    return {output["audience"]: output for output in call["outputs"]}


def test_a_new_server_reaches_older_clients_in_their_shape(seen: dict[str, Any]) -> None:
    for key, version, visit in every_visit(seen, ["stub"]):
        call, tools = step(visit, "call", key), step(visit, "tools", key)["tools"]
        assert call_text(call) == f"echo {version}", key
        if version == DRILL_WIRE:
            assert _outputs(call)["program"]["data"] == {"echo": version}, key
            assert tools[0]["outputVariants"][0]["schema"] == {"type": "object"}, key
            continue
        assert "outputs" not in call and "outputVariants" not in tools[0], key
        if version >= "2025-06-18":  # the versions with structured output
            assert call["structuredContent"] == {"echo": version}, key
            assert tools[0]["outputSchema"] == {"type": "object"}, key


def test_servers_written_before_it_reach_the_new_client_in_its_shape(seen: dict[str, Any]) -> None:
    for transport in TRANSPORTS:
        for kind in ("old", "app"):
            key = f"{kind}/{transport}/{DRILL_WIRE}"
            visit = ok(seen, key)
            outputs = _outputs(step(visit, "call", key))
            assert outputs["program"]["data"] == {"echo": DRILL_WIRE}, key
            assert outputs["assistant"]["content"][0]["type"] == "text", key
        app_tool = step(ok(seen, f"app/{transport}/{DRILL_WIRE}"), "tools")["tools"][0]
        assert app_tool["outputVariants"][0]["audience"] == "program"


def test_an_output_schema_keeps_every_keyword_across_the_reshape(seen: dict[str, Any]) -> None:
    """The authoring layer's schema for `dict[str, str]` reaches every version with structured output
    whole, through the new version's `outputVariants` and back into `outputSchema`."""
    schema = {"type": "object", "additionalProperties": {"type": "string"}}
    for key, version, visit in every_visit(seen, ["app"]):
        tool = step(visit, "tools", key)["tools"][0]
        if version == DRILL_WIRE:
            assert tool["outputVariants"][0]["schema"] == schema, key
        elif version >= "2025-06-18":
            assert tool["outputSchema"] == schema, key


def test_a_middleware_denial_is_a_tool_error_in_every_version_s_shape(seen: dict[str, Any]) -> None:
    """`raise ToolError` in the authoring layer's middleware answers in the new version's shape
    (`outputs`), crossed to each older client's `content`."""
    for key, version, visit in every_visit(seen, ["app"]):
        denied = step(visit, "denied", key)
        assert denied["isError"] is True and call_text(denied) == "denied by middleware", key
        valid_in(version, seen, "CallToolResult", denied)
        assert ("outputs" in denied) == (version == DRILL_WIRE), key


def test_arguments_the_input_schema_refuses_are_a_tool_error_in_every_version_s_shape(seen: dict[str, Any]) -> None:
    """The runtime's own refusal of arguments that violate the listed inputSchema, from a server on
    the new stub and from the authoring layer, crossed to each older client."""
    for key, version, visit in every_visit(seen, ["stub", "app"]):
        refused = step(visit, "refused", key)
        assert refused["isError"] is True and "Input validation error" in call_text(refused), key
        valid_in(version, seen, "CallToolResult", refused)
