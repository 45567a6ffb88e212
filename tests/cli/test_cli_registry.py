"""`mcp-bindgen registry check` as a user runs it: on the server.json `mcp-bindgen new` wrote (valid,
exit 0), and on broken copies of it, each answered with the exact finding (`POINTER: what to do`,
exit 1): a bad name, no packages, a version range, the README's `mcp-name:` line missing, and the
other rules the registry enforces beyond its schema; a missing or non-JSON file is one sentence."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import bindgen

NAME = "io.github.alice/weather"
SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
RANGE = "'^1.0.0' is a range: give the one exact version published (e.g. 1.0.0)"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("registry") / "weather"
    done = bindgen("new", target, "--registry-name", NAME)
    assert done.returncode == 0, done.stderr
    return target


def _variant(project: Path, name: str, change: Callable[[dict[str, Any]], object]) -> Path:
    entry = json.loads((project / "server.json").read_text(encoding="utf-8"))
    change(entry)
    path = project / f"{name}.json"
    path.write_text(json.dumps(entry, indent=2), encoding="utf-8")
    return path


def test_the_scaffolded_entry_is_valid(project: Path) -> None:
    done = bindgen("registry", "check", cwd=project)  # ./server.json
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "server.json: a valid MCP Registry entry (server.json schema 2025-12-11)\n"
    as_json = bindgen("registry", "check", project / "server.json", "--json")
    assert as_json.returncode == 0
    assert json.loads(as_json.stdout) == {
        "path": str(project / "server.json"),
        "schema": SCHEMA_URL,
        "valid": True,
        "findings": [],
        "notes": [],
    }


def _set_package(key: str, value: object) -> Callable[[dict[str, Any]], object]:
    return lambda entry: entry["packages"][0].__setitem__(key, value)


BROKEN: dict[str, tuple[Callable[[dict[str, Any]], object], list[str]]] = {
    "bad-name": (
        lambda e: e.__setitem__("name", "weather"),
        ["/name: 'weather' has no namespace: write NAMESPACE/NAME in reverse-DNS form (e.g. io.github.USER/weather)"],
    ),
    "bad-name-part": (
        lambda e: e.__setitem__("name", "io.github.alice/_weather"),
        [
            "/name: the name '_weather' must start and end with a letter or digit and hold only letters, digits, "
            "'.', '_' and '-' (e.g. io.github.USER/weather)"
        ],
    ),
    "no-packages": (
        lambda e: e.pop("packages"),
        [
            '/packages: missing: add a package (e.g. {"registryType": "pypi", "identifier": "NAME", "version": '
            '"1.0.0", "transport": {"type": "stdio"}}) or a "remotes" URL, or no client can run the server'
        ],
    ),
    "version-range": (lambda e: e.__setitem__("version", "^1.0.0"), [f"/version: {RANGE}"]),
    "package-version-range": (_set_package("version", "^1.0.0"), [f"/packages/0/version: {RANGE}"]),
    "package-latest": (
        _set_package("version", "latest"),
        ["/packages/0/version: 'latest' is reserved: give the exact version published (e.g. 1.0.0)"],
    ),
    "no-mcp-name": (
        lambda e: e.__setitem__("name", "io.github.bob/weather"),
        [
            "/packages/0: README.md (the package's README on PyPI) lacks the line `mcp-name: io.github.bob/weather`: "
            "add `<!-- mcp-name: io.github.bob/weather -->` to it"
        ],
    ),
    "no-schema-no-description": (
        lambda e: (e.pop("$schema"), e.pop("description")),
        [
            f'/$schema: missing: add "$schema": "{SCHEMA_URL}" (the registry requires it)',
            "/description: missing: add the required field 'description'",
        ],
    ),
    "package-fields": (
        lambda e: (e["packages"][0].pop("registryType"), e["packages"][0].pop("transport")),
        [
            "/packages/0/registryType: missing: add the required field 'registryType'",
            "/packages/0/transport: missing: add the required field 'transport'",
        ],
    ),
    "unknown-registry-and-transport": (
        lambda e: (_set_package("registryType", "gems")(e), _set_package("transport", {"type": "ws"})(e)),
        [
            "/packages/0/registryType: 'gems' is no registry the MCP Registry publishes from: use one of npm, pypi, "
            "nuget, oci, mcpb, cargo, go",
            "/packages/0/transport/type: 'ws' is no transport a package runs on: use one of stdio, "
            "streamable-http, sse",
        ],
    ),
    "stdio-with-url": (
        _set_package("transport", {"type": "stdio", "url": "https://example.com/mcp"}),
        ['/packages/0/transport/url: a stdio transport has no url: remove it, or use "type": "streamable-http"'],
    ),
    "mirror": (
        _set_package("registryBaseUrl", "https://pypi.example.com"),
        [
            "/packages/0/registryBaseUrl: the registry only takes pypi packages from https://pypi.org: set that or "
            "leave the field out"
        ],
    ),
    "remote-http": (
        lambda e: e.__setitem__("remotes", [{"type": "sse", "url": "http://weather.example.com/sse"}]),
        [
            "/remotes/0/url: 'http://weather.example.com/sse' is not https: a remote is reached over https (a local "
            "server goes in packages)"
        ],
    ),
    "remote-localhost": (
        lambda e: e.__setitem__("remotes", [{"type": "streamable-http", "url": "https://localhost:3001/mcp"}]),
        [
            "/remotes/0/url: 'https://localhost:3001/mcp' is this machine: a remote must be reachable by others (a "
            "local server goes in packages)"
        ],
    ),
    "remote-variable": (
        lambda e: e.__setitem__("remotes", [{"type": "streamable-http", "url": "https://{tenant}.example.com/mcp"}]),
        ['/remotes/0/url: {tenant} is not declared: add it to the remote\'s "variables"'],
    ),
    "long-description": (
        lambda e: e.__setitem__("description", "x" * 101),
        [f"/description: '{'x' * 101}' is too long (schema rule properties/description/maxLength): change it to match"],
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_each_broken_entry_gets_its_finding(project: Path, case: str) -> None:
    change, expected = BROKEN[case]
    path = _variant(project, case, change)
    done = bindgen("registry", "check", path)
    assert done.returncode == 1, done.stdout
    assert done.stdout.splitlines() == expected
    assert done.stderr.splitlines()[-1] == (
        f"mcp-bindgen registry check: {len(expected)} finding(s) in {path}: fix each as it says"
    )


def test_json_output_names_each_pointer(project: Path) -> None:
    path = _variant(project, "json-report", lambda e: (e.__setitem__("name", "weather"), e.pop("packages")))
    done = bindgen("registry", "check", path, "--json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["valid"] is False and report["schema"] == SCHEMA_URL
    assert [f["pointer"] for f in report["findings"]] == ["/name", "/packages"]


def test_an_npm_package_needs_mcp_name_in_package_json(tmp_path: Path) -> None:
    entry = {
        "$schema": SCHEMA_URL,
        "name": NAME,
        "description": "Weather",
        "version": "1.0.0",
        "packages": [
            {"registryType": "npm", "identifier": "@alice/weather", "version": "1.0.0", "transport": {"type": "stdio"}}
        ],
    }
    (tmp_path / "server.json").write_text(json.dumps(entry), encoding="utf-8")
    (tmp_path / "package.json").write_text(json.dumps({"name": "@alice/weather", "version": "1.0.0"}), encoding="utf-8")
    done = bindgen("registry", "check", tmp_path)
    assert done.returncode == 1
    assert done.stdout == f'/packages/0: package.json must hold "mcpName": "{NAME}" (the registry checks it on npm)\n'
    (tmp_path / "package.json").write_text(
        json.dumps({"name": "@alice/weather", "version": "1.0.0", "mcpName": NAME}), encoding="utf-8"
    )
    assert bindgen("registry", "check", tmp_path).returncode == 0


def test_a_package_published_from_elsewhere_is_noted_not_failed(project: Path, tmp_path: Path) -> None:
    (tmp_path / "server.json").write_text((project / "server.json").read_text(encoding="utf-8"), encoding="utf-8")
    done = bindgen("registry", "check", tmp_path / "server.json")
    assert done.returncode == 0
    assert done.stderr == f"note: /packages/0: mcp-name not checked: no pyproject.toml of weather in {tmp_path}\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            None,
            "{path} not found: give the path of a server.json (default ./server.json), or scaffold a project with "
            "`mcp-bindgen new` to get one",
        ),
        (
            '{\n  "name": ,\n}',
            "{path} is not valid JSON (Expecting value at line 2, column 11): fix it and check again",
        ),
    ],
)
def test_a_missing_or_broken_file_is_one_sentence(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "server.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    done = bindgen("registry", "check", path)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"mcp-bindgen: error: {message.format(path=path)}\n"


def test_the_placeholder_namespace_of_a_scaffold_is_a_finding(tmp_path: Path) -> None:
    """`mcp-bindgen new` without --registry-name writes io.github.your-github-user/NAME; the check
    fails it, as the registry would refuse it to anyone (issue 45, item 6)."""
    target = tmp_path / "weather"
    assert bindgen("new", target).returncode == 0
    done = bindgen("registry", "check", target / "server.json")
    assert done.returncode == 1
    assert done.stdout.startswith(
        "/name: 'io.github.your-github-user/weather' is the scaffold's placeholder namespace: put your GitHub user "
        "in place of your-github-user (here and in README.md's mcp-name line)\n"
    ), done.stdout
