"""The crossing tables the generator emits per pair of versions (`mcp_bindgen.crossing`): what each
holds for the pinned schemas, read like a spec, and a failing test for every entry of
policy/crossing.json that no longer applies to any pair of pinned versions."""

from __future__ import annotations

import dataclasses
import importlib
from functools import cache

import pytest

from mcp_bindgen import crossing, policy
from mcp_bindgen.errors import BindgenError
from mcp_bindgen.pins import load_pins
from mcp_bindgen.pipeline import build_ir, package_name, pinned_source
from mcp_bindgen.surface import derive_surface


@cache
def pinned() -> dict[str, crossing.Version]:
    out = {}
    for version, pin in load_pins().items():
        if pin.local_path.is_file():
            ir = build_ir(pinned_source(version))
            out[version] = crossing.Version(version, ir, derive_surface(ir))
    return out


def table(source: str, destination: str) -> crossing.Pair:
    return crossing.pair(pinned()[source], pinned()[destination])


@pytest.mark.parametrize("rule", crossing.all_rules())
def test_every_policy_entry_applies_to_a_pair_of_pinned_versions(rule: str) -> None:
    versions = list(pinned().values())
    applied = {r for a in versions for b in versions if a is not b for r in crossing.pair(a, b).rules}
    assert rule in applied, f"{rule} applies to no pair of pinned versions (stale: remove or update it)"


def test_every_policy_entry_gives_its_reason() -> None:
    rules = policy.crossing()
    assert all(len(entry.reason) > 20 for entry in (*rules.content, *rules.params, *rules.codes))


def test_fields_the_destination_lacks_are_dropped_by_model_name() -> None:
    # 2025-06-18 added titles and output schemas; a 2024-11-05 peer gets neither.
    older = table("2025-06-18", "2024-11-05")
    assert older.dropped["Tool"] == ("annotations", "outputSchema", "title")
    assert older.dropped["CallToolResult"] == ("structuredContent",)
    # Nothing is lost going up, and `_meta` and a JSON Schema document's keywords always travel.
    assert table("2024-11-05", "2025-06-18").dropped == {}
    assert all("_meta" not in keys for keys in table("2026-07-28", "2024-11-05").dropped.values())
    assert "ToolInputSchema" not in table("2025-11-25", "2024-11-05").dropped


def test_dropped_fields_are_placed_in_each_value_that_crosses() -> None:
    # What the runtime looks up: by the params or result a value crosses as, where in it the fields sit.
    older = table("2025-06-18", "2024-11-05")
    assert older.drops["ListToolsResult"] == {("tools", "*"): ("annotations", "outputSchema", "title")}
    assert older.drops["CallToolResult"] == {(): ("structuredContent",)}
    assert older.drops["CompleteRequestParams"] == {(): ("context",), ("ref",): ("title",)}  # either reference
    # A definition held in a map sits at "*" too: the asks of an input round (no JSON-RPC envelope there).
    newer = table("2025-11-25", "2026-07-28")
    assert newer.drops["InputRequiredResult"][("inputRequests", "*")] == ("id", "jsonrpc")
    assert table("2024-11-05", "2025-06-18").drops == {}


def degraded(source: str, destination: str) -> dict[str, str]:
    return {kind: becomes["type"] for kind, becomes, _ in table(source, destination).degrade}


def test_content_the_destination_lacks_is_degraded_by_the_policy_where_the_source_holds_it() -> None:
    assert degraded("2025-06-18", "2024-11-05") == {"audio": "resource", "resource_link": "text"}
    assert degraded("2025-06-18", "2025-03-26") == {"resource_link": "text"}
    assert degraded("2024-11-05", "2025-06-18") == {}
    [(_, _, places)] = table("2025-06-18", "2025-03-26").degrade
    assert places["CallToolResult"] == (("content", "*"),)
    assert places["GetPromptResult"] == (("messages", "*", "content"),)


def test_a_content_template_naming_a_field_the_block_lacks_fails_the_generation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rule = policy.ContentRule("resource_link", {"type": "text", "text": "{label}: {uri}"}, "a reason long enough")
    monkeypatch.setattr(policy, "crossing", lambda: dataclasses.replace(RULES, content=(rule,)))
    with pytest.raises(BindgenError, match=r"resource_link content becomes 'text'.*\['label'\]"):
        table("2025-06-18", "2025-03-26")
    rule = dataclasses.replace(rule, becomes={"type": "resource_link", "text": "{uri}"})  # not in the destination
    monkeypatch.setattr(policy, "crossing", lambda: dataclasses.replace(RULES, content=(rule,)))
    with pytest.raises(BindgenError, match="which MCP 2025-03-26 must have"):
        table("2025-06-18", "2025-03-26")


RULES = policy.crossing()


def test_params_are_refused_dropped_or_made() -> None:
    down = table("2025-11-25", "2025-06-18").params
    assert down["sampling/createMessage"]["tools"].outcome == "error"
    assert "believe the model had tools" in down["sampling/createMessage"]["tools"].reason
    assert (down["elicitation/create"]["mode"].outcome, down["elicitation/create"]["mode"].equals) == ("drop", "form")
    assert down["tools/call"]["task"] == crossing.Param("error", "")  # no policy entry: the default refusal
    # made only for the union member that requires it: a URL elicitation
    made = crossing.Param("generate", policy_reason("elicitation/create"), {"mode": "url"})
    assert table("2025-06-18", "2025-11-25").params == {"elicitation/create": {"elicitationId": made}}


def policy_reason(method: str) -> str:
    return next(r.reason for r in policy.crossing().params if r.method == method and r.outcome == "generate")


def test_error_codes_follow_their_names() -> None:
    up = table("2025-11-25", "2026-07-28")
    assert up.codes == {-32002: -32602}  # RESOURCE_NOT_FOUND, which 2026-07-28 reports as invalid params
    assert table("2026-07-28", "2025-11-25").overloaded == (("resources/read", "uri", -32602, -32002),)


def test_each_pair_is_in_the_later_versions_package() -> None:
    names = list(pinned())
    for index, later in enumerate(names):
        module = importlib.import_module(f"mcp_bindings.{package_name(later)}.crossing")
        expected = {(a, b) for other in names[:index] for a, b in ((other, later), (later, other))}
        assert set(module.CROSSINGS) == expected


def test_places_say_where_a_definition_sits_in_each_definition_that_holds_it() -> None:
    ir = pinned()["2026-07-28"].ir
    where = crossing.places(ir, "ToolAnnotations")
    assert where["ToolAnnotations"] == ((),)
    assert where["Tool"] == (("annotations",),)
    assert where["ListToolsResult"] == (("tools", "*", "annotations"),)
    assert "CallToolResult" not in where
    assert crossing.places(ir, "CallToolResult")["CallToolResultResponse"] == (("result",),)


def _renamed(version: crossing.Version, name: str, old: str, new: str, wire: str) -> crossing.Version:
    """`version` as a later version that renames `name`'s field `old` to `new` (`wire`: its protocol version)."""
    definition = version.ir.object(name)
    fields = tuple(
        dataclasses.replace(f, wire_name=new, py_name=f"{f.py_name}_renamed") if f.wire_name == old else f
        for f in definition.fields
    )
    definitions = {**version.ir.definitions, name: dataclasses.replace(definition, fields=fields)}
    return crossing.Version(wire, dataclasses.replace(version.ir, definitions=definitions), version.surface)


def test_a_renamed_field_crosses_both_ways_by_one_policy_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """policy/crossing.json `renamed_fields` holds no entry while no pinned version renames a field;
    an entry attaches to the pairs where one side has the old name and the other the new one, and
    one that attaches to no pair of pinned versions is stale."""
    rule = policy.RenameRule("ToolAnnotations", "openWorldHint", "openWorld", "a reason long enough to read")
    rules = dataclasses.replace(policy.crossing(), renames=(rule,))
    monkeypatch.setattr(policy, "crossing", lambda: rules)
    old = pinned()["2026-07-28"]
    new = _renamed(old, "ToolAnnotations", "openWorldHint", "openWorld", "2026-12-15")
    down, up = crossing.pair(new, old), crossing.pair(old, new)
    listed = ("tools", "*", "annotations")
    assert [(t, a, b, p["ListToolsResult"]) for t, a, b, p in down.renames] == [
        ("ToolAnnotations", "openWorld", "openWorldHint", (listed,))
    ]
    assert [(t, a, b) for t, a, b, _ in up.renames] == [("ToolAnnotations", "openWorldHint", "openWorld")]
    assert crossing.rule_id(rule) in down.rules and crossing.rule_id(rule) in up.rules
    versions = list(pinned().values())
    applied = {r for a in versions for b in versions if a is not b for r in crossing.pair(a, b).rules}
    assert crossing.rule_id(rule) in crossing.all_rules() and crossing.rule_id(rule) not in applied  # stale


def test_a_policy_template_compiles_into_the_function_the_generated_table_holds() -> None:
    """policy/crossing.json's templates are compiled by the generator (`render.fill`), not read at run
    time: `{a|b}` alone is the first field the block has (its key left out otherwise), in text the
    first not null; a `[...]` part goes where a field in it is missing or null, the whole string
    (its key) where a field outside such parts is; a field's text is never read as a template."""
    from mcp_bindgen.render.fill import function

    link = eval(function({"type": "text", "text": "{title|name}: {uri}[ ({description})]", "_meta": "{_meta}"}))  # noqa: S307
    assert link({"name": "a", "uri": "u", "description": "{x}", "_meta": None}) == {
        "type": "text",
        "text": "a: u ({x})",
        "_meta": None,
    }
    assert link({"title": None, "name": "a", "uri": "u", "description": None}) == {"type": "text", "text": "a: u"}
    assert link({"title": "T", "name": "a"}) == {"type": "text"}  # no uri: no text
    spread = eval(function({"audience": "program", "data": "{structured|data}", "all": ["{x}", 1], "tag": "[{x}]"}))  # noqa: S307
    assert spread({"data": 0}) == {"audience": "program", "data": 0, "all": [1], "tag": ""}
    full = {"audience": "program", "data": None, "all": [2, 1], "tag": "2"}
    assert spread({"structured": None, "data": 0, "x": 2}) == full


def test_the_generated_degrade_is_the_policys_template_compiled() -> None:
    """The pinned 2025-06-18 package's table to 2025-03-26 turns a resource link into the text the
    policy's template says (a wrong or stale generated function fails here)."""
    crossings = importlib.import_module("mcp_bindings.v2025_06_18.crossing").CROSSINGS
    (link,) = [rule for rule in crossings["2025-06-18", "2025-03-26"].degrade if rule.type == "resource_link"]
    block = {"type": "resource_link", "uri": "file:///n", "name": "n", "title": "Notes", "annotations": {"priority": 1}}
    assert link.becomes(block) == {"type": "text", "text": "Notes: file:///n", "annotations": {"priority": 1}}
