"""`protocol.reshape`: a definition's content moved between a list of tagged items and plain fields
(PROTOCOL.reshapes, from the generator's policy/reshapes.json), on small models that read like the spec:
`New` holds `outputs`, `Old` holds `content` and `structured`."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mcp_bindings.runtime.protocol.reshape import reshaped
from mcp_bindings.runtime.protocol.spec import Gather, Reshape, Spread

RULE = Reshape(
    "Result",
    "outputs",
    (
        Gather(MappingProxyType({"audience": ("assistant", "user")}), "content", "content", "concat"),
        Gather(MappingProxyType({"audience": ("program",)}), "data", "structured", "first"),
    ),
    (
        Spread("content", MappingProxyType({"audience": "assistant", "content": "$"})),
        Spread("structured", MappingProxyType({"audience": "program", "data": "$"})),
    ),
)
RULES = {"Result": RULE}


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
    old = reshaped(NEW_VALUE, Old, RULES)
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
    assert reshaped(old, Old, RULES) is old  # nothing of the rule's in the target: no copy
    assert reshaped(NEW_VALUE, Old, {}) is NEW_VALUE


def test_the_definition_is_found_wherever_the_target_type_holds_it() -> None:
    page = reshaped({"results": [NEW_VALUE, {"outputs": []}]}, OldPage, RULES)
    assert page["results"][0]["structured"] == {"x": 1}
    assert page["results"][1] == {"content": []}  # no item for the assistant: an empty list, still valid
    assert OldPage.model_validate(page).results[0].content[1]["text"] == "b"


def test_items_that_are_not_objects_are_left_out() -> None:
    assert reshaped({"outputs": ["junk", 3, {"audience": "user", "content": [1]}]}, Old, RULES) == {"content": [1]}
