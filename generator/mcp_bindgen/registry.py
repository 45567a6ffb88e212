"""The MCP Registry entry of a server (`server.json`): the one `mcp-bindgen new` writes, and
`mcp-bindgen registry check`, which validates one against the registry's published schema (pinned in
schema/manifest.json, `registry`) and against the rules the registry enforces that the schema cannot
say (its validators: the name's reverse-DNS form, a version that is no range, each package's registry
type, identifier and transport, and the `mcp-name:` line that proves a PyPI package is the
publisher's). The registry's code is read for those rules, not copied: each rule is written here."""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import BindgenError
from .pins import RegistryPin, load_registry_pins, read_registry_schema

# The newest server.json schema pinned (schema/manifest.json, `registry`): what `new` writes.
CURRENT = "2025-12-11"
# The namespace a scaffold gets when no --registry-name is given: valid, and plainly to be replaced.
PLACEHOLDER_OWNER = "your-github-user"
# Registry types the official registry publishes (its package-types page); others it refuses.
REGISTRY_TYPES = ("npm", "pypi", "nuget", "oci", "mcpb", "cargo", "go")
# The only base URL the official registry allows for these types (`registryBaseUrl` may be omitted).
BASE_URLS = {
    "npm": ("https://registry.npmjs.org",),
    "pypi": ("https://pypi.org",),
    "nuget": ("https://api.nuget.org/v3/index.json", "https://api.nuget.org"),
}
TRANSPORTS = ("stdio", "streamable-http", "sse")

# NAMESPACE/NAME: letters and digits at both ends of each part; '.' and '-' inside the namespace,
# '.', '_' and '-' inside the name.
_NAMESPACE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?\Z")
_NAME_PART = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?\Z")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/")
# A version that names several: a comparator (^1.2, ~1.2, >=1, <2, =1), `A - B`, `A || B`, or a
# dotted version with a wildcard part (1.x, 1.2.*).
_NUMBER = r"v?\d+(?:\.\d+){0,3}(?:-[0-9A-Za-z.-]+)?"
_RANGES = (
    re.compile(rf"(?:\^|~|>=|<=|>|<|=)\s*{_NUMBER}\Z"),
    re.compile(rf"{_NUMBER}\s-\s*{_NUMBER}\Z"),
    re.compile(rf"{_NUMBER}\s*(?:\|\|\s*{_NUMBER}\s*)+\Z"),
)
_WILDCARD = re.compile(r"(?:v?\d+|[xX*])(?:\.(?:\d+|[xX*])){1,2}(?:-[0-9A-Za-z.-]+)?\Z")


def pin(version: str = CURRENT) -> RegistryPin:
    pins = load_registry_pins()
    if version not in pins:
        raise BindgenError(f"server.json schema {version} is not pinned (pinned: {', '.join(pins)})")
    return pins[version]


def load_schema(version: str = CURRENT) -> dict[str, Any]:
    """The pinned server.json schema, its sha256 verified."""
    return json.loads(read_registry_schema(pin(version)))


# -- what `new` writes -------------------------------------------------------------------------------


def default_name(dist_name: str) -> str:
    return f"io.github.{PLACEHOLDER_OWNER}/{dist_name}"


def server_entry(*, name: str, description: str, version: str, package: str, transport: str) -> dict[str, Any]:
    """A server.json for a Python package published on PyPI, run by its console script (`uvx NAME`)
    on `transport` ("stdio", or "http" for Streamable HTTP on the scaffold's default port)."""
    run: dict[str, Any] = (
        {"type": "stdio"} if transport != "http" else {"type": "streamable-http", "url": "http://127.0.0.1:3001/mcp"}
    )
    return {
        "$schema": pin().url,
        "name": name,
        "description": description[:100],
        "version": version,
        "packages": [
            {
                "registryType": "pypi",
                "identifier": package,
                "version": version,
                "runtimeHint": "uvx",
                "transport": run,
            }
        ],
    }


def mcp_name_line(name: str) -> str:
    """The README line the registry looks for on PyPI (an HTML comment: invisible when rendered)."""
    return f"<!-- mcp-name: {name} -->"


# -- rules the schema cannot say ---------------------------------------------------------------------


def name_problem(name: str) -> str | None:
    """What is wrong with a server name and what to do, or None."""
    example = "e.g. io.github.USER/weather"
    if "/" not in name:
        return f"{name!r} has no namespace: write NAMESPACE/NAME in reverse-DNS form ({example})"
    if name.count("/") > 1:
        return f"{name!r} has more than one '/': write NAMESPACE/NAME with exactly one ({example})"
    namespace, _, part = name.partition("/")
    if not _NAMESPACE.match(namespace):
        return (
            f"the namespace {namespace!r} must start and end with a letter or digit and hold only letters, "
            f"digits, '.' and '-' ({example})"
        )
    if not _NAME_PART.match(part):
        return (
            f"the name {part!r} must start and end with a letter or digit and hold only letters, digits, "
            f"'.', '_' and '-' ({example})"
        )
    return None


def _placeholder_problem(name: str) -> str | None:
    """The namespace `mcp-bindgen new` writes without --registry-name is no one's: publishing needs yours."""
    if PLACEHOLDER_OWNER not in name.partition("/")[0].split("."):
        return None
    return (
        f"{name!r} is the scaffold's placeholder namespace: put your GitHub user in place of {PLACEHOLDER_OWNER} "
        "(here and in README.md's mcp-name line)"
    )


def version_problem(version: str) -> str | None:
    if version == "latest":
        return "'latest' is reserved: give the exact version published (e.g. 1.0.0)"
    text = version.strip()
    if any(r.match(text) for r in _RANGES) or (_WILDCARD.match(text) and any(c in text for c in "xX*")):
        return f"{version!r} is a range: give the one exact version published (e.g. 1.0.0)"
    return None


def declares_mcp_name(text: str, name: str) -> bool:
    """`mcp-name: NAME` occurs in `text`, NAME whole (not the start of a longer name)."""
    marker = f"mcp-name: {name}"
    start = text.find(marker)
    while start >= 0:
        end = start + len(marker)
        if end == len(text) or text[end] not in _NAME_CHARS:
            return True
        start = text.find(marker, start + 1)
    return False


# -- check -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    pointer: str  # JSON pointer into server.json ("" the whole document)
    message: str  # what is wrong and what to do
    # The value this rule judges as a whole (default: `pointer`): the schema's findings at or under it
    # say the same less clearly (a transport of an unknown type misses every branch's fields).
    covers: str | None = field(default=None, compare=False)

    def line(self) -> str:
        return f"{self.pointer or '(document)'}: {self.message}"


@dataclass
class Report:
    path: Path
    schema: str  # the URL of the schema version checked against
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "schema": self.schema,
            "valid": not self.findings,
            "findings": [{"pointer": f.pointer, "message": f.message} for f in self.findings],
            "notes": self.notes,
        }


def pointer(*parts: str | int) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def read_server_json(path: Path) -> Any:
    if path.is_dir():
        path = path / "server.json"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BindgenError(
            f"{path} not found: give the path of a server.json (default ./server.json), or scaffold a project "
            "with `mcp-bindgen new` to get one"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BindgenError(f"{path} cannot be read ({exc}): give the path of a UTF-8 server.json file") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BindgenError(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}): fix it and check again"
        ) from None


def check(path: Path) -> Report:
    """Every finding of server.json at `path` (a file, or a folder holding server.json)."""
    target = path / "server.json" if path.is_dir() else path
    doc = read_server_json(target)
    current = pin()
    report = Report(target, current.url)
    semantic = _semantic(doc, target.parent, current, report.notes) if isinstance(doc, dict) else []
    covered = [f.pointer if f.covers is None else f.covers for f in semantic]
    schema = [
        f
        for f in _schema_findings(doc, load_schema())
        if not any(f.pointer == c or f.pointer.startswith(c + "/") for c in covered)
    ]
    report.findings = sorted(schema + semantic, key=lambda f: f.pointer)
    return report


def _schema_findings(doc: Any, schema: dict[str, Any]) -> list[Finding]:
    from jsonschema import Draft7Validator

    validator = Draft7Validator(schema, format_checker=Draft7Validator.FORMAT_CHECKER)
    findings = []
    for error in validator.iter_errors(doc):
        for leaf in _leaves(error):
            at = [*leaf.absolute_path]
            if leaf.validator == "required":
                missing = str(leaf.message).split("'")[1]
                findings.append(Finding(pointer(*at, missing), f"missing: add the required field {missing!r}"))
                continue
            where = "/".join(str(p) for p in leaf.absolute_schema_path)
            findings.append(Finding(pointer(*at), f"{leaf.message} (schema rule {where}): change it to match"))
    unique = {(f.pointer, f.message): f for f in findings}
    return list(unique.values())


def _leaves(error: Any) -> list[Any]:
    """The errors under an anyOf / allOf that say what to fix (the best match of each branch set)."""
    if not error.context:
        return [error]
    from jsonschema.exceptions import best_match

    return _leaves(best_match(error.context))


def _semantic(doc: dict[str, Any], folder: Path, current: RegistryPin, notes: list[str]) -> list[Finding]:
    found: list[Finding] = []
    schema_url = doc.get("$schema")
    if schema_url is None:
        found.append(Finding("/$schema", f'missing: add "$schema": "{current.url}" (the registry requires it)'))
    elif schema_url != current.url:
        found.append(
            Finding("/$schema", f"{schema_url!r} is not the current server.json schema: set it to {current.url!r}")
        )
    name = doc.get("name")
    if isinstance(name, str) and (problem := name_problem(name) or _placeholder_problem(name)):
        found.append(Finding("/name", problem))
        name = None  # the README's mcp-name line is checked against a valid name only
    version = doc.get("version")
    if isinstance(version, str) and (problem := version_problem(version)):
        found.append(Finding("/version", problem))
    packages = doc.get("packages")
    if not packages and not doc.get("remotes"):
        found.append(
            Finding(
                "/packages",
                'missing: add a package (e.g. {"registryType": "pypi", "identifier": "NAME", "version": "1.0.0", '
                '"transport": {"type": "stdio"}}) or a "remotes" URL, or no client can run the server',
            )
        )
    if isinstance(packages, list):
        for index, package in enumerate(packages):
            if isinstance(package, dict):
                found += _package(package, index, name if isinstance(name, str) else "", folder, notes)
    remotes = doc.get("remotes")
    if isinstance(remotes, list):
        for index, remote in enumerate(remotes):
            if isinstance(remote, dict) and isinstance(remote.get("url"), str):
                found += _remote(remote["url"], remote.get("variables"), index)
    return found


def _remote(url: str, variables: Any, index: int) -> list[Finding]:
    """A remote is a public https URL; its `{variables}` are declared in `variables`."""
    from urllib.parse import urlsplit

    at = pointer("remotes", index, "url")
    parts = urlsplit(url)
    host = (parts.hostname or "").rstrip(".")
    if parts.scheme != "https":
        return [Finding(at, f"{url!r} is not https: a remote is reached over https (a local server goes in packages)")]
    if host in ("localhost", "127.0.0.1", "::1") or host.endswith(".localhost"):
        return [
            Finding(
                at, f"{url!r} is this machine: a remote must be reachable by others (a local server goes in packages)"
            )
        ]
    declared = set(variables) if isinstance(variables, dict) else set()
    undeclared = [v for v in re.findall(r"\{([^{}]+)\}", url) if v not in declared]
    if undeclared:
        return [Finding(at, f'{{{undeclared[0]}}} is not declared: add it to the remote\'s "variables"')]
    return []


def _package(package: dict[str, Any], index: int, name: str, folder: Path, notes: list[str]) -> list[Finding]:
    found: list[Finding] = []
    kind = package.get("registryType")
    if isinstance(kind, str) and kind not in REGISTRY_TYPES:
        found.append(
            Finding(
                pointer("packages", index, "registryType"),
                f"{kind!r} is no registry the MCP Registry publishes from: use one of {', '.join(REGISTRY_TYPES)}",
            )
        )
    base = package.get("registryBaseUrl")
    if isinstance(kind, str) and isinstance(base, str) and kind in BASE_URLS and base not in BASE_URLS[kind]:
        found.append(
            Finding(
                pointer("packages", index, "registryBaseUrl"),
                f"the registry only takes {kind} packages from {BASE_URLS[kind][0]}: set that or leave the field out",
            )
        )
    identifier = package.get("identifier")
    if isinstance(identifier, str) and (not identifier.strip() or " " in identifier):
        found.append(
            Finding(
                pointer("packages", index, "identifier"),
                f"{identifier!r} is no package name: give the name the package is published under, without spaces",
            )
        )
    version = package.get("version")
    if isinstance(version, str) and (problem := version_problem(version)):
        found.append(Finding(pointer("packages", index, "version"), problem))
    found += _transport(package.get("transport"), index)
    if name and isinstance(identifier, str) and kind in ("pypi", "npm"):
        found += _ownership(kind, identifier, name, index, folder, notes)
    return found


def _transport(transport: Any, index: int) -> list[Finding]:
    if not isinstance(transport, dict):
        return []  # the schema says what is missing
    kind, url = transport.get("type"), transport.get("url")
    at = pointer("packages", index, "transport", "url")
    if isinstance(kind, str) and kind not in TRANSPORTS:
        return [
            Finding(
                pointer("packages", index, "transport", "type"),
                f"{kind!r} is no transport a package runs on: use one of {', '.join(TRANSPORTS)}",
                covers=pointer("packages", index, "transport"),
            )
        ]
    if kind == "stdio" and url:
        return [Finding(at, 'a stdio transport has no url: remove it, or use "type": "streamable-http"')]
    if kind in ("streamable-http", "sse") and not url:
        return [Finding(at, f"missing: a {kind} transport needs the url the server listens on")]
    return []


def _ownership(kind: str, identifier: str, name: str, index: int, folder: Path, notes: list[str]) -> list[Finding]:
    """The proof the registry looks for that the package is the publisher's, where the package's
    project is the folder of server.json: `mcp-name: NAME` in a PyPI package's README, `mcpName` in
    an npm package.json."""
    at = pointer("packages", index)
    if kind == "npm":
        manifest = _json_file(folder / "package.json")
        if manifest is None or manifest.get("name") != identifier:
            notes.append(f"{at}: mcpName not checked: no package.json of {identifier} in {folder}")
            return []
        if manifest.get("mcpName") != name:
            return [Finding(at, f'package.json must hold "mcpName": "{name}" (the registry checks it on npm)')]
        return []
    readme = _pypi_readme(folder, identifier)
    if readme is None:
        notes.append(f"{at}: mcp-name not checked: no pyproject.toml of {identifier} in {folder}")
        return []
    if isinstance(readme, str):
        return [Finding(at, readme)]
    text = readme.read_text(encoding="utf-8", errors="replace") if readme.is_file() else ""
    if not declares_mcp_name(text, name):
        return [
            Finding(
                at,
                f"{readme.name} (the package's README on PyPI) lacks the line `mcp-name: {name}`: "
                f"add `{mcp_name_line(name)}` to it",
            )
        ]
    return []


def _pypi_readme(folder: Path, identifier: str) -> Path | str | None:
    """The README of the project in `folder` published as `identifier`; a str says what is wrong;
    None: the package's project is not here."""
    try:
        project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8")).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return None
    if _normalise(str(project.get("name", ""))) != _normalise(identifier):
        return None
    readme = project.get("readme")
    if isinstance(readme, dict):
        readme = readme.get("file")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if not isinstance(readme, str):
        return 'pyproject.toml names no readme, so PyPI shows none: add `readme = "README.md"` with the mcp-name line'
    return folder / readme


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _json_file(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


# -- the command -------------------------------------------------------------------------------------


def cmd_check(args: Any) -> int:
    import sys

    report = check(Path(args.path))
    if args.json:
        print(json.dumps(report.as_json(), indent=2))
        return 1 if report.findings else 0
    for finding in report.findings:
        print(finding.line())
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    if report.findings:
        print(
            f"mcp-bindgen registry check: {len(report.findings)} finding(s) in {report.path}: fix each as it says",
            file=sys.stderr,
        )
        return 1
    print(f"{report.path}: a valid MCP Registry entry (server.json schema {CURRENT})")
    return 0
