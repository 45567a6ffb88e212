"""`mcp-bindgen new` writes the server's MCP Registry entry: a server.json valid against the
registry's published schema (the pinned 2025-12-11, read here with jsonschema directly, not through
`registry check`), naming the PyPI package it scaffolds, and the README line (`mcp-name:`) by which
the registry checks that the package is the publisher's."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from mcp_bindgen.cli import main
from mcp_bindgen.pins import load_registry_pins
from tests.support import REPO_ROOT

SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"


def _pinned_schema() -> dict[str, object]:
    pin = load_registry_pins()["2025-12-11"]
    return json.loads((REPO_ROOT / pin.file).read_text(encoding="utf-8"))


@pytest.mark.parametrize(("transport", "kind"), [("stdio", "stdio"), ("both", "stdio"), ("http", "streamable-http")])
def test_new_writes_a_server_json_valid_against_the_pinned_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], transport: str, kind: str
) -> None:
    target = tmp_path / "weather-server"
    assert main(["new", str(target), "--transport", transport, "--registry-name", "io.github.alice/weather"]) == 0
    entry = json.loads((target / "server.json").read_text(encoding="utf-8"))
    errors = [e.message for e in Draft7Validator(_pinned_schema()).iter_errors(entry)]
    assert errors == []
    project = tomllib.loads((target / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert entry["$schema"] == SCHEMA_URL
    assert entry["name"] == "io.github.alice/weather"
    assert entry["version"] == project["version"] == "0.1.0"
    [package] = entry["packages"]
    assert (package["registryType"], package["identifier"], package["version"]) == ("pypi", "weather-server", "0.1.0")
    assert package["identifier"] == project["name"] and package["transport"]["type"] == kind
    readme = (target / project["readme"]).read_text(encoding="utf-8")
    assert "<!-- mcp-name: io.github.alice/weather -->\n" in readme
    assert "your-github-user" not in capsys.readouterr().out  # no hint when the name is given


def test_the_default_name_is_a_placeholder_the_next_steps_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "weather"
    assert main(["new", str(target)]) == 0
    entry = json.loads((target / "server.json").read_text(encoding="utf-8"))
    assert entry["name"] == "io.github.your-github-user/weather"
    assert list(Draft7Validator(_pinned_schema()).iter_errors(entry)) == []
    assert "<!-- mcp-name: io.github.your-github-user/weather -->" in (target / "README.md").read_text(encoding="utf-8")
    out = capsys.readouterr().out
    assert "put your GitHub user in place of your-github-user there and in README.md" in out
    assert f"mcp-bindgen registry check {target / 'server.json'}" in out
