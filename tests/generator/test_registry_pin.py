"""The MCP Registry's server.json schema is pinned like the protocol schemas: committed under
schema/ (no network here; the registry serves it at the pinned URL), its source (repository, commit,
path) and sha256 in schema/manifest.json, verified on every read and by `schema sync`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_bindgen import pins, registry
from mcp_bindgen.errors import BindgenError
from mcp_bindgen.pins import RegistryPin, load_registry_pins, read_registry_schema, verify_registry_schemas
from tests.support import REPO_ROOT


def test_the_committed_schema_is_the_pinned_one() -> None:
    pin = load_registry_pins()["2025-12-11"]
    assert pin.file == "schema/mcp-registry-server.2025-12-11.schema.json"
    assert (pin.repository, pin.path) == (
        "modelcontextprotocol/registry",
        "internal/validators/schemas/2025-12-11.json",
    )
    assert len(pin.commit) == 40
    data = (REPO_ROOT / pin.file).read_bytes()
    assert pins.sha256_of(data) == pin.sha256
    schema = json.loads(data)
    # the URL it is published at is its own $id, and what a server.json names in "$schema"
    assert schema["$id"] == pin.url == "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert registry.CURRENT == "2025-12-11" and registry.pin().url == pin.url


def test_a_changed_copy_is_refused(tmp_path: Path) -> None:
    pin = load_registry_pins()["2025-12-11"]
    edited = tmp_path / "schema" / "edited.json"
    edited.parent.mkdir()
    edited.write_bytes((REPO_ROOT / pin.file).read_bytes().replace(b'"maxLength": 100', b'"maxLength": 1000', 1))
    tampered = RegistryPin(**{**pin.__dict__, "file": str(edited)})
    with pytest.raises(BindgenError, match=r"sha256 mismatch .*\(MCP Registry server\.json schema 2025-12-11\)"):
        read_registry_schema(tampered)
    missing = RegistryPin(**{**pin.__dict__, "file": str(tmp_path / "schema" / "gone.json")})
    with pytest.raises(BindgenError, match=r"gone\.json is missing"):
        read_registry_schema(missing)


def test_schema_sync_verifies_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pin = load_registry_pins()["2025-12-11"]
    assert verify_registry_schemas() == [
        f"verified the MCP Registry's server.json schema 2025-12-11 (sha256 {pin.sha256[:12]})"
    ]
    edited = tmp_path / "schema" / "edited.json"
    edited.parent.mkdir()
    edited.write_bytes((REPO_ROOT / pin.file).read_bytes() + b" ")
    monkeypatch.setattr(
        pins,
        "load_registry_pins",
        lambda path=None: {pin.version: RegistryPin(**{**pin.__dict__, "file": str(edited)})},
    )
    with pytest.raises(BindgenError, match="sha256 mismatch"):
        verify_registry_schemas()


@pytest.mark.parametrize(
    "version", ["^1.2.3", "~1.2.3", ">=1.0.0", "<2", "=1.0.0", "1.2.3 - 2.0.0", "1.2 || 1.3", "1.x", "1.2.*", "X.1"]
)
def test_ranges_are_found(version: str) -> None:
    assert (
        registry.version_problem(version)
        == f"{version!r} is a range: give the one exact version published (e.g. 1.0.0)"
    )


@pytest.mark.parametrize("version", ["1.0.2", "2.1.0-alpha", "v1.0.0", "2025.12.1", "1.0.0-rc.1", "0.1.0.dev3"])
def test_exact_versions_pass(version: str) -> None:
    assert registry.version_problem(version) is None


def test_mcp_name_must_be_whole() -> None:
    name = "io.github.alice/foo"
    assert registry.declares_mcp_name("x\n<!-- mcp-name: io.github.alice/foo -->\n", name)
    assert registry.declares_mcp_name("mcp-name: io.github.alice/foo", name)
    assert not registry.declares_mcp_name("mcp-name: io.github.alice/foo-evil", name)
    assert not registry.declares_mcp_name("mcp-name: io.github.alice/foo.", name)  # a sentence's full stop
    assert registry.declares_mcp_name("mcp-name: io.github.alice/foo-evil\nmcp-name: io.github.alice/foo\n", name)
