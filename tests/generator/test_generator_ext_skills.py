"""The Skills extension (`io.modelcontextprotocol/skills`) as generated bindings, from the schema this
project owns (`schema/io.modelcontextprotocol-skills.schema.json`, written from the specification,
which publishes none), through the same pipeline as the official extension schemas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from mcp_bindgen import pins, pipeline
from mcp_bindgen.errors import BindgenError
from mcp_bindgen.extension import extension_methods, policy_methods, spliced
from mcp_bindgen.lower import lower
from mcp_bindgen.normalise import normalise
from mcp_bindgen.pins import ExtensionPin, load_extension_pins, read_extension, sync_extensions
from tests.support import REPO_ROOT

SKILLS = "io.modelcontextprotocol/skills"


def skills_pin() -> ExtensionPin:
    return load_extension_pins()[SKILLS]


def needs_schema() -> bytes:
    raw = read_extension(skills_pin())
    if raw is None:
        pytest.skip(f"extension {SKILLS}: not verified: schema not synced ({skills_pin().local_path} is missing)")
    return raw


def test_the_owned_schema_is_pinned_with_the_specification_it_was_written_from() -> None:
    pin = skills_pin()
    assert pin.owned == "schema/io.modelcontextprotocol-skills.schema.json"
    assert (pin.repository, pin.path) == ("modelcontextprotocol/ext-skills", "specification/stable/skills.mdx")
    assert len(pin.commit) == 40 and pin.core_version == "2026-07-28"
    assert pins.sha256_of((REPO_ROOT / pin.owned).read_bytes()) == pin.sha256
    assert pin.source.startswith(f"{pin.owned} (written from modelcontextprotocol/ext-skills@{pin.commit}")


def test_every_own_definition_cites_its_section() -> None:
    pin = skills_pin()
    doc = json.loads((REPO_ROOT / pin.owned).read_text(encoding="utf-8"))
    core = pipeline.build_ir(pipeline.pinned_source(pin.core_version))
    ir = lower(normalise(json.dumps(doc).encode(), SKILLS, pin.sha256))
    own = set(ir.definitions) - spliced(ir, core)
    schema_own = {name for name in doc["$defs"] if name in own}
    assert {"Skill", "SkillResource", "SkillFrontmatter", "ListSkillsResult", "GetSkillRequest"} <= schema_own
    for name in schema_own:
        assert f"{pin.commit}, section" in doc["$defs"][name]["description"], name


def test_sync_verifies_the_owned_schema(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    needs_schema()
    target = tmp_path / "synced" / "schema.json"
    monkeypatch.setattr(ExtensionPin, "sync_path", property(lambda self: target))
    monkeypatch.setattr(pins, "load_extension_pins", lambda path=None: {SKILLS: skills_pin()})
    assert sync_extensions(None) == [f"synced {target}"]
    edited = tmp_path / "edited.json"
    edited.write_bytes((REPO_ROOT / skills_pin().owned).read_bytes() + b" ")
    tampered = ExtensionPin(**{**skills_pin().__dict__, "owned": str(edited)})
    monkeypatch.setattr(pins, "load_extension_pins", lambda path=None: {SKILLS: tampered})
    with pytest.raises(BindgenError, match=r"sha256 mismatch .*\(extension io\.modelcontextprotocol/skills\)"):
        sync_extensions(None)


def test_direction_policy_matches_the_schema() -> None:
    raw = needs_schema()
    pin = skills_pin()
    ir = lower(normalise(raw, SKILLS, pin.sha256))
    core = pipeline.build_ir(pipeline.pinned_source(pin.core_version))
    methods = extension_methods(SKILLS, ir, set(ir.definitions) - spliced(ir, core))
    assert {m.method for m in methods} == set(policy_methods(SKILLS))
    assert {m.method for m in methods} == {"skills/list", "skills/get", "resources/directory/read"}


def test_generated_models_take_the_specification_examples() -> None:
    needs_schema()
    from mcp_bindings.ext.io_modelcontextprotocol_skills import methods
    from mcp_bindings.ext.io_modelcontextprotocol_skills import models as m
    from mcp_bindings.v2026_07_28 import models as core

    assert m.Resource is core.Resource  # spliced: imported from the core package, not generated again
    entry = {
        "uri": "skill://acme/billing/refunds/SKILL.md",
        "frontmatter": {"name": "refunds", "description": "Process refunds", "license": "Apache-2.0"},
        "resources": [{"uri": "skill://acme/billing/refunds/SKILL.md", "digest": "sha256:" + "a" * 64, "size": 3871}],
    }
    assert m.Skill.model_validate(entry).model_dump(by_alias=True, exclude_none=True) == entry
    assert m.Skill.model_validate({**entry, "resources": "dynamic"}).resources == "dynamic"
    for bad in ({**entry, "resources": "static"}, {**entry, "frontmatter": {"name": "x"}}):
        with pytest.raises(ValidationError):
            m.Skill.model_validate(bad)
    with pytest.raises(ValidationError):
        m.SkillResource.model_validate({"uri": "u", "digest": "sha256:ABC", "size": 1})
    assert methods.EXTENSION["skills/get"].params is m.GetSkillRequestParams
