"""The spec-change drill (issue 46): a synthetic next version generated through the public CLI from the
2026-07-28 schema plus one change (tests/fixtures/drill_versions.py), then served and called by every
client of every version and by the official SDK (tests/fixtures/drill_scenario.py), and what each
client saw checked against the JSON Schema of its own version.

`NEEDS` is the drill's record: per change, the files outside `generated/` that had to change for it
to be served. docs/versions.md shows it as a table; tests/versions/test_drill_record.py keeps the
two in step.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.validators import validator_for
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

from tests.fixtures.drill_versions import DRILL_WIRE, POLICY, write_drill_schema, write_policy
from tests.support import REPO_ROOT, shared_schema_dir

SCENARIO = REPO_ROOT / "tests" / "fixtures" / "drill_scenario.py"
BASE_SCHEMA = shared_schema_dir() / "2026-07-28" / "schema.json"
OLDER = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
CLIENTS = [*OLDER, DRILL_WIRE]
STDIO_CLIENTS = ["2024-11-05", "2025-11-25", "2026-07-28", DRILL_WIRE]  # a server process each: a subset
KINDS = ["stub", "app", "old"]
TRANSPORTS = ["stdio", "http"]


# change -> files outside generated/ it needed (the drill adds nothing to the checkout: a policy
# entry is passed with `generate --policy` and listed here as the file it would go to).
def _entries(change: str) -> list[str]:
    """The policy files a change's entries would go to, with how many entries each."""
    out: list[str] = []
    for name, content in POLICY.get(change, {}).items():
        count = sum(len(entries) for entries in content.values() if isinstance(entries, list))
        out.append(f"generator/mcp_bindgen/policy/{name} ({count} {'entry' if count == 1 else 'entries'})")
    return out


NEEDS: dict[str, list[str]] = {change: _entries(change) for change in "abcdef"}


def run_drill(change: str, work: Path, sdk_python: str | None) -> dict[str, Any]:
    """Generate change `change` under DRILL_WIRE into `work/src` (the checkout untouched: checked),
    run the scenario, and return what every client saw, with `generate`'s output under "_generate"."""
    before = _checkout_state()
    schema_dir = write_drill_schema(BASE_SCHEMA, work / "schema", change).parent
    policy = write_policy(work / "policy", change)
    argv = ["generate", "--schema", str(schema_dir), "--version", DRILL_WIRE, "--protocol-version", DRILL_WIRE]
    argv += ["--out", str(work / "src"), *(["--policy", str(policy)] if policy else [])]
    code = "import sys; from mcp_bindgen.cli import main; sys.exit(main(sys.argv[1:]))"
    made = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=600, cwd=REPO_ROOT, check=False
    )
    assert made.returncode == 0, made.stderr[-3000:]
    path = os.pathsep.join(str(p) for p in (work / "src", REPO_ROOT / "runtime", REPO_ROOT / "generated", REPO_ROOT))
    env = {**os.environ, "PYTHONPATH": path}
    if sdk_python is not None:
        env["DRILL_SDK_PYTHON"] = sdk_python
    ran = subprocess.run(
        [sys.executable, str(SCENARIO), "run", change],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        cwd=work,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    seen: dict[str, Any] = json.loads(ran.stdout)
    assert _checkout_state() == before, "the drill changed files of the checkout"
    seen["_generate"] = made.stdout
    seen["_schema"] = str(schema_dir / "schema.json")
    return seen


def _checkout_state() -> str:
    """`git status` of the tracked files outside generated/ (what a change would have had to edit;
    untracked files are left out: tests running beside this one may make some)."""
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)generated"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        check=True,
    )
    return done.stdout


def ok(seen: dict[str, Any], key: str) -> dict[str, Any]:
    """One client's visit, failing with its error when the connection itself failed."""
    visit = seen[key]
    assert "error" not in visit, f"{key}: {visit['error']}\n{visit.get('traceback', '')}"
    return visit


def step(visit: dict[str, Any], name: str, key: str = "") -> Any:
    """A step's wire JSON, failing with the step's error."""
    value = visit[name]
    assert not (isinstance(value, dict) and ("error" in value or "mcp_error" in value)), f"{key} {name}: {value}"
    return value


def error_code(visit: dict[str, Any], name: str) -> int | None:
    value = visit.get(name)
    return value["mcp_error"]["code"] if isinstance(value, dict) and "mcp_error" in value else None


@cache
def _schema(path: str) -> tuple[dict[str, Any], Registry[Any]]:
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    resource = Resource.from_contents(document, default_specification=DRAFT7)  # each schema names its dialect
    return document, Registry().with_resource("urn:mcp", resource)


def schema_file(version: str, seen: dict[str, Any]) -> str:
    return seen["_schema"] if version == DRILL_WIRE else str(shared_schema_dir() / version / "schema.json")


def valid_in(version: str, seen: dict[str, Any], definition: str, value: Any) -> None:
    """`value` is a valid `definition` of `version` by that version's JSON Schema (the drill's own
    schema for the drill version)."""
    document, registry = _schema(schema_file(version, seen))
    validator_cls = validator_for(document, default=jsonschema.Draft7Validator)
    where = "$defs" if "$defs" in document else "definitions"  # draft-07 schemas (2025-06-18 and before)
    validator = validator_cls({"$ref": f"urn:mcp#/{where}/{definition}"}, registry=registry)
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.path))
    assert not errors, f"not a valid {definition} of MCP {version}: {errors[0].message} at {list(errors[0].path)}"


def every_visit(seen: dict[str, Any], kinds: list[str] | None = None) -> list[tuple[str, str, dict[str, Any]]]:
    """(key, client version, visit) of every project client of every version, kind and transport."""
    return [
        (f"{kind}/{transport}/{version}", version, ok(seen, f"{kind}/{transport}/{version}"))
        for kind in kinds or KINDS
        for transport in TRANSPORTS
        for version in (STDIO_CLIENTS if transport == "stdio" else CLIENTS)
    ]


def check_common(seen: dict[str, Any]) -> None:
    """What holds for every change: each client connects at its own version, lists the tools and
    calls `echo`, and both results are valid in its version's schema; the official SDK does the same."""
    assert seen["versions"] == [*OLDER, DRILL_WIRE]
    for key, version, visit in every_visit(seen):
        assert visit["negotiated"] == version, key
        valid_in(version, seen, "ListToolsResult", step(visit, "tools", key))
        call = step(visit, "call", key)
        valid_in(version, seen, "CallToolResult", call)
    for kind in KINDS:
        for transport in TRANSPORTS:
            sdk = seen[f"{kind}/{transport}/sdk"]
            assert "error" not in sdk, sdk
            assert step(sdk, "initialize")["protocolVersion"] == "2025-11-25"
            valid_in("2025-11-25", seen, "CallToolResult", step(sdk, "call"))
            assert "echo" in [tool["name"] for tool in step(sdk, "tools")["tools"]]


def call_text(call: dict[str, Any]) -> str:
    """The text a tool result carries, in either shape (`content`, or SEP-3279's `outputs`)."""
    blocks = call.get("content")
    if blocks is None:
        blocks = [b for output in call.get("outputs", []) for b in output.get("content", [])]
    return " ".join(block.get("text", "") for block in blocks)
