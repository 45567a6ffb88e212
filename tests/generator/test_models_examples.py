"""Every official 2026-07-28 example validates with the generated model of its type and round-trips exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel, TypeAdapter

import mcp_bindings.v2026_07_28 as v2026
from tests.support import shared_schema_dir

EXAMPLES = sorted((shared_schema_dir() / "2026-07-28" / "examples").glob("*/*.json"))


def test_all_examples_found() -> None:
    assert len(EXAMPLES) == 129


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_example_round_trips(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    target = getattr(v2026, path.parent.name)
    if isinstance(target, type) and issubclass(target, BaseModel):
        value = target.model_validate_json(text)
        dumped = value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    else:
        adapter = TypeAdapter(target)
        value = adapter.validate_json(text)
        dumped = adapter.dump_python(value, mode="json", by_alias=True, exclude_unset=True)
    # Compare text, not just values: 1 and 1.0 are equal in Python but not on the wire.
    assert json.dumps(dumped, sort_keys=True) == json.dumps(json.loads(text), sort_keys=True)
