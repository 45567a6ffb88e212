"""The routing and listen-filter tables (`PROTOCOL.routing`, `PROTOCOL.listen_filters`): generated
from policy/routing.json and policy/listen_filters.json wherever an entry attaches to a schema's
content (a request with that params field; a listen filter object with that key and a notification
the server sends), never by version name; an entry that attaches to no known schema is stale."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import MappingProxyType

import pytest

from mcp_bindgen import policy, review
from mcp_bindgen.cli import main
from mcp_bindgen.ir import ObjectDef, SchemaIR
from mcp_bindgen.pipeline import build_ir, pinned_extension_patches, pinned_source
from mcp_bindgen.surface import derive_surface
from mcp_bindings.runtime.protocol import registry
from tests.support.pipeline import PINNED_VERSIONS

ROUTED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
FILTERS = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
    "resourceSubscriptions": "notifications/resources/updated",
}


def _without_field(ir: SchemaIR, definition: str, wire: str) -> SchemaIR:
    obj = ir.object(definition)
    kept = tuple(f for f in obj.fields if f.wire_name != wire)
    definitions = {**ir.definitions, definition: dataclasses.replace(obj, fields=kept)}
    return dataclasses.replace(ir, definitions=definitions)


def test_the_generated_tables_of_every_pinned_version() -> None:
    for version in PINNED_VERSIONS:
        protocol = registry.protocol(version)
        assert dict(protocol.routing) == ROUTED, version  # every version has these requests and fields
        # only the stateless era has subscriptions/listen: its filters there, none before
        assert dict(protocol.listen_filters) == (FILTERS if protocol.stateless else {}), version


def test_an_entry_attaches_to_content_not_to_a_version_name() -> None:
    ir = build_ir(pinned_source("2026-07-28"))
    params = next(m.params_type for m in derive_surface(ir).methods if m.method == "resources/read")
    assert params is not None
    routed = dict(derive_surface(_without_field(ir, params, "uri")).routing)
    assert "resources/read" not in routed and routed["tools/call"] == "name"
    listen = next(m.params_type for m in derive_surface(ir).methods if m.method == "subscriptions/listen")
    assert listen is not None
    holder = ir.object(listen).field("notifications")
    assert holder is not None and isinstance(ir.definitions[holder.type.name], ObjectDef)  # type: ignore[union-attr]
    filters = dict(derive_surface(_without_field(ir, holder.type.name, "toolsListChanged")).listen_filters)  # type: ignore[union-attr]
    assert "toolsListChanged" not in filters and filters["resourceSubscriptions"] == FILTERS["resourceSubscriptions"]


def test_a_stale_entry_is_named_by_the_review(monkeypatch: pytest.MonkeyPatch) -> None:
    grown = MappingProxyType({**policy.routing(), "tools/frobnicate": "name"})
    for module in (policy, review):
        monkeypatch.setattr(module, "routing", lambda: grown)
    filters = policy.listen_filters()
    more = dataclasses.replace(filters, filters=MappingProxyType({**filters.filters, "widgets": "notifications/w"}))
    for module in (policy, review):
        monkeypatch.setattr(module, "listen_filters", lambda: more)
    known = []
    for version in PINNED_VERSIONS:
        ir = build_ir(pinned_source(version))
        known.append(review.Known(version, ir, derive_surface(ir), True))
    patched = pinned_extension_patches()  # what the extension schemas had applied, as `generate` reports
    stale = {item.subject for item in review.review(known, patched=patched).items}
    assert stale == {"routing.json tools/frobnicate", "listen_filters.json widgets"}


def test_a_reshape_entry_attaches_where_its_definition_has_the_field_and_is_named_when_stale(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """policy/reshapes.json holds no entry while no pinned version needs one; an entry for a field no
    pinned schema has (SEP-3279's `outputs`) is named by the review, one for a field one has attaches."""
    entries = {
        field: policy.ReshapeRule("CallToolResult", field, MappingProxyType({"type": "CallToolResult"}), "a reason")
        for field in ("outputs", "content")
    }
    for module in (policy, review):
        monkeypatch.setattr(module, "reshapes", lambda: tuple(entries.values()))
    known = []
    for version in PINNED_VERSIONS:
        ir = build_ir(pinned_source(version))
        known.append(review.Known(version, ir, derive_surface(ir), True))
    assert [r.field for r in known[-1].surface.reshapes] == ["content"]
    stale = {item.subject for item in review.review(known, patched=pinned_extension_patches()).items}
    assert stale == {"reshapes.json CallToolResult.outputs"}


def test_a_policy_folder_holds_only_policy_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", "--policy", str(tmp_path / "missing")]) == 1
    assert capsys.readouterr().err.strip().endswith(f"--policy {tmp_path / 'missing'}: no such folder")
    (tmp_path / "capabilites.json").write_text("{}")
    assert main(["generate", "--policy", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "capabilites.json is no policy file of mcp-bindgen" in err
