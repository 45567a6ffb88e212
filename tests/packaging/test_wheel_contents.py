"""What the wheel must hold, listed: every generated version and extension package (with `py.typed`),
the runtime, the generator with its templates and policy JSON, the pinned schemas, and the metadata
(version, extras, the command). `scripts/release` runs this file on the wheel it built
(`MCP_BINDGEN_WHEEL`); the suite runs it on the wheel of the checkout (`tests/support/wheel.py`)."""

from __future__ import annotations

import zipfile
from email.parser import HeaderParser
from pathlib import Path

import pytest

from mcp_bindgen import __version__
from mcp_bindgen.pins import load_pins
from tests.support import REPO_ROOT
from tests.support.pipeline import PINNED_VERSIONS
from tests.support.wheel import built_wheel

pytestmark = pytest.mark.slow  # builds the wheel where .cache/wheel/ has none of this tree

# Source folder -> where hatchling puts it in the wheel ([tool.hatch.build.targets.wheel]).
LAYOUT = {
    "generated/mcp_bindings": "mcp_bindings",
    "runtime/mcp_bindings": "mcp_bindings",
    "generator/mcp_bindgen": "mcp_bindgen",
    "templates": "mcp_bindgen/_templates",
    "schema": "mcp_bindgen/_schema",  # the pin manifest and the schemas `schema sync` placed
}


def _names() -> set[str]:
    with zipfile.ZipFile(built_wheel()) as wheel:
        return set(wheel.namelist())


def _source_files(folder: str) -> list[Path]:
    root = REPO_ROOT / folder
    return sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


def _expected() -> dict[str, str]:
    """Wheel path -> the source file it comes from, for everything of the checkout the wheel carries."""
    expected = {
        f"{target}/{path.relative_to(REPO_ROOT / folder).as_posix()}": path.relative_to(REPO_ROOT).as_posix()
        for folder, target in LAYOUT.items()
        for path in _source_files(folder)
    }
    # Every pinned schema, synced or not: a wheel built before `schema sync` lacks them.
    pinned = [f"{version}/schema.json" for version in load_pins()]
    expected.update({f"mcp_bindgen/_schema/{rel}": f"schema/{rel} (pinned)" for rel in pinned})
    return expected


def test_the_wheel_holds_every_file_it_is_built_from() -> None:
    names = _names()
    missing = sorted(f"{path} (from {source})" for path, source in _expected().items() if path not in names)
    assert not missing, "missing from the wheel:\n" + "\n".join(missing)
    foreign = sorted(
        n
        for n in names
        if not n.startswith(("mcp_bindings/", "mcp_bindgen/", "mcp_bindgen-"))
        or "__pycache__" in n
        or n.endswith(".pyc")
    )
    assert not foreign, f"the wheel holds what no user needs: {foreign}"


def test_the_wheel_lists_the_generated_packages_templates_policies_and_markers() -> None:
    """The same, named: what a user of the wheel imports or the generator reads at run time."""
    names = _names()
    packages = [f"v{version.replace('-', '_')}" for version in PINNED_VERSIONS]
    extensions = sorted({n.split("/")[2] for n in names if n.startswith("mcp_bindings/ext/") and n.count("/") >= 3})
    generated = REPO_ROOT / "generated" / "mcp_bindings" / "ext"
    assert extensions == sorted(p.name for p in generated.iterdir() if (p / "__init__.py").is_file())
    assert {"io_modelcontextprotocol_groups", "io_modelcontextprotocol_skills"} <= set(extensions)
    wanted = [
        *(
            f"mcp_bindings/{package}/{module}"
            for package in packages
            for module in ("__init__.py", "about.py", "names.py", "crossing.py", "client.py", "server.py", "py.typed")
        ),
        *(f"mcp_bindings/ext/{extension}/py.typed" for extension in extensions),
        "mcp_bindings/runtime/py.typed",
        "mcp_bindgen/py.typed",
        "mcp_bindgen/policy/crossing.json",
        "mcp_bindgen/policy/capabilities.json",
        "mcp_bindgen/policy/reshapes.json",
        "mcp_bindgen/_templates/header.py.j2",
        "mcp_bindgen/_templates/scaffold/pyproject.toml.j2",
        "mcp_bindgen/_templates/version_project/pyproject.toml.j2",
        "mcp_bindgen/_schema/manifest.json",
        *(f"mcp_bindgen/_schema/{version}/schema.json" for version in PINNED_VERSIONS),
    ]
    assert [n for n in wanted if n not in names] == []
    policies = {n for n in names if "/policy/" in n and n.endswith(".json")}
    folders = (
        REPO_ROOT / "generator" / "mcp_bindgen" / "policy",
        REPO_ROOT / "runtime" / "mcp_bindings" / "runtime" / "protocol" / "policy",
    )
    sources = {p.name for folder in folders for p in folder.glob("*.json")}
    assert {n.rsplit("/", 1)[1] for n in policies} == sources


def test_the_wheels_metadata() -> None:
    wheel = built_wheel()
    assert wheel.name == f"mcp_bindgen-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        metadata = HeaderParser().parsestr(archive.read(f"mcp_bindgen-{__version__}.dist-info/METADATA").decode())
        entry_points = archive.read(f"mcp_bindgen-{__version__}.dist-info/entry_points.txt").decode()
    assert metadata["Name"] == "mcp-bindgen" and metadata["Version"] == __version__
    extras = set(metadata.get_all("Provides-Extra") or [])
    assert {"runtime", "http", "generator", "mock", "skills"} <= extras
    assert "mcp-bindgen = mcp_bindgen.cli:main" in entry_points
