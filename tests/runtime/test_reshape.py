"""`protocol.reshape`: a definition's content moved between a list of tagged items and plain fields
(PROTOCOL.reshapes, from the generator's policy/reshapes.json), or to a field's other name (a
crossing table's renames), on small models that read like the spec: `New` holds `outputs`, `Old`
holds `content` and `structured`. Where a definition sits in a target (`places`) is the generator's
(tests/generator/test_crossing_tables.py); here it is written out. A policy's entry is compiled by the
generator (`render.fill`), as in the generated tables."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mcp_bindgen.render.fill import function
from mcp_bindgen.render.surface_modules import reshape_record
from mcp_bindings.runtime.protocol.reshape import reshaped
from mcp_bindings.runtime.protocol.spec import Degrade, Rename, Reshape


def compiled(source: str) -> Any:
    """What the generator writes (a template's function, a reshape record), as a generated module holds it."""
    return eval(source, {"MappingProxyType": MappingProxyType, "Reshape": Reshape})  # noqa: S307 - the generator's


PLACES = MappingProxyType({"Result": ((),), "OldPage": (("results", "*"),)})

ENTRY = {  # a policy/reshapes.json entry
    "type": "Result",
    "field": "outputs",
    "gather": [
        {"where": {"audience": ["assistant", "user"]}, "take": "content", "into": "content", "join": "concat"},
        {"where": {"audience": ["program"]}, "take": "data", "into": "structured", "join": "first"},
    ],
    "spread": [
        {"from": "content", "item": {"audience": "assistant", "content": "{content}"}},
        {"from": "structured", "item": {"audience": "program", "data": "{structured}"}},
    ],
}
RULE: Reshape = compiled(reshape_record(ENTRY, dict(PLACES)))
RULES = [RULE]  # into a version with the list field
TO_OLD = [dataclasses.replace(RULE, listed=False)]  # into a version with the plain fields


class Old(BaseModel):
    model_config = ConfigDict(extra="allow")
    content: list[Any]
    structured: dict[str, Any] | None = None


class New(BaseModel):
    model_config = ConfigDict(extra="allow")
    outputs: list[dict[str, Any]]


Old.__name__ = New.__name__ = "Result"  # two versions' models of one definition


class OldPage(BaseModel):
    results: list[Old] = Field(default_factory=list)


NEW_VALUE = {
    "outputs": [
        {"audience": "assistant", "content": [{"type": "text", "text": "a"}]},
        {"audience": "user", "content": [{"type": "text", "text": "b"}]},
        {"audience": "program", "data": {"x": 1}},
        {"audience": "program", "data": {"x": 2}},
    ],
    "isError": False,
}


def test_items_are_gathered_into_the_plain_fields_of_a_version_without_the_list() -> None:
    old = reshaped(NEW_VALUE, Old, TO_OLD)
    assert old == {
        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        "structured": {"x": 1},  # join: first
        "isError": False,  # what the rule does not name is left as it is
    }
    assert "outputs" in NEW_VALUE  # the value given is not changed: a copy is


def test_plain_fields_are_spread_into_items_of_a_version_with_the_list() -> None:
    old = {"content": [{"type": "text", "text": "a"}], "structured": {"x": 1}}
    assert reshaped(old, New, RULES) == {
        "outputs": [
            {"audience": "assistant", "content": [{"type": "text", "text": "a"}]},
            {"audience": "program", "data": {"x": 1}},
        ]
    }
    assert reshaped({"content": []}, New, RULES) == {"outputs": [{"audience": "assistant", "content": []}]}


def test_a_value_in_the_target_shape_or_without_rules_is_returned_as_it_is() -> None:
    assert reshaped(NEW_VALUE, New, RULES) == NEW_VALUE
    old = {"content": []}
    assert reshaped(old, Old, TO_OLD) is old  # nothing of the rule's in the target: no copy
    assert reshaped(NEW_VALUE, Old, []) is NEW_VALUE
    assert reshaped(NEW_VALUE, New, [dataclasses.replace(RULE, places=MappingProxyType({}))]) is NEW_VALUE


def test_the_definition_is_found_wherever_the_target_type_holds_it() -> None:
    page = reshaped({"results": [NEW_VALUE, {"outputs": []}]}, OldPage, TO_OLD)
    assert page["results"][0]["structured"] == {"x": 1}
    assert page["results"][1] == {"content": []}  # no item for the assistant: an empty list, still valid
    assert OldPage.model_validate(page).results[0].content[1]["text"] == "b"


def test_items_that_are_not_objects_are_left_out() -> None:
    assert reshaped({"outputs": ["junk", 3, {"audience": "user", "content": [1]}]}, Old, TO_OLD) == {"content": [1]}


def test_a_renamed_field_moves_to_the_targets_name_wherever_its_definition_sits() -> None:
    rename = Rename("Result", "structured", "data", PLACES)
    page = {"results": [{"content": [], "structured": {"x": 1}}, {"content": [], "data": 2, "structured": 3}]}
    assert reshaped(page, OldPage, [rename]) == {
        "results": [{"content": [], "data": {"x": 1}}, {"content": [], "data": 2, "structured": 3}]
    }  # a value that has both names is left as it is (the target's name wins)
    assert page["results"][0] == {"content": [], "structured": {"x": 1}}  # a copy


def test_a_content_block_the_target_lacks_becomes_the_policys_template_where_the_generator_placed_it() -> None:
    link = Degrade(
        "resource_link",
        compiled(function({"type": "text", "text": "{title|name}: {uri}[ ({description})]", "_meta": "{_meta}"})),
        MappingProxyType({"OldPage": (("results", "*", "content", "*"),)}),
    )
    blocks = [
        {"type": "resource_link", "uri": "file:///a", "name": "a", "description": "notes", "_meta": {"k": 1}},
        {"type": "resource_link", "uri": "file:///b", "name": "b", "title": "B"},
        {"type": "text", "text": "t"},
    ]
    page = {"results": [{"content": blocks, "structured": {"type": "resource_link"}}]}
    assert reshaped(page, OldPage, [link])["results"][0] == {
        "content": [
            {"type": "text", "text": "a: file:///a (notes)", "_meta": {"k": 1}},
            {"type": "text", "text": "B: file:///b"},  # no description: its part left out; no _meta: no key
            {"type": "text", "text": "t"},
        ],
        "structured": {"type": "resource_link"},  # open content at no place of the rule: left as it is
    }
    assert reshaped(page, Old, [link]) is page  # the rule places nothing in this target
