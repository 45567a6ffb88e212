"""`mcp-bindgen diff`: golden reports for two version pairs, the upstream changelog's schema-level
items for 2025-11-25 -> 2026-07-28, and an unpinned schema file (a draft with a method the policy
files do not know yet)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from mcp_bindgen.cli import main
from mcp_bindgen.diff import diff_specs, render, to_json
from mcp_bindgen.errors import BindgenError
from tests.support import REPO_ROOT

GOLDEN = REPO_ROOT / "tests" / "golden" / "diff"
PAIRS = [("2024-11-05", "2025-03-26"), ("2025-11-25", "2026-07-28")]


@pytest.mark.parametrize(("old", "new"), PAIRS)
@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_report_matches_golden(old: str, new: str, fmt: str) -> None:
    text = render(diff_specs(old, new), fmt)  # type: ignore[arg-type]
    golden = GOLDEN / f"{old}_{new}.{'md' if fmt == 'markdown' else 'json'}"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert golden.read_text(encoding="utf-8") == text, "diff report changed: review, then UPDATE_GOLDEN=1"


def _methods(report: dict[str, Any], kind: str) -> set[str]:
    return {entry["method"] for entry in report["methods"][kind]}


def test_2026_07_28_matches_the_upstream_changelog() -> None:
    """Every schema-level item of docs/specification/2026-07-28/changelog.mdx (upstream), one by one."""
    report = to_json(diff_specs("2025-11-25", "2026-07-28"))
    removed, added = _methods(report, "removed"), _methods(report, "added")
    moved = {e["method"]: e for e in report["methods"]["moved"]}
    changed = {e["method"]: {c["what"]: c for c in e["changes"]} for e in report["methods"]["changed"]}
    fields_added = {(e["type"], e["field"]): e for e in report["fields"]["added"]}
    fields_removed = {(e["type"], e["field"]) for e in report["fields"]["removed"]}
    types_added = {e["name"] for e in report["types"]["added"]}
    types_removed = {e["name"] for e in report["types"]["removed"]}

    # Major 2: stateless, no initialize / notifications/initialized handshake; _meta on every request.
    assert {"initialize", "notifications/initialized"} <= removed
    assert {
        "what": "lifecycle",
        "old": "initialize handshake",
        "new": "stateless (no initialize; every request carries its _meta)",
    } in report["lifecycle"]
    assert {"type": "RequestParams", "field": "_meta", "old": "optional", "new": "required"} in report["fields"][
        "requirement"
    ]
    # Major 3: server/discover.
    assert "server/discover" in added and "DiscoverResult" in types_added
    # Major 4: subscriptions/listen replaces resources/subscribe + unsubscribe.
    assert "subscriptions/listen" in added and "notifications/subscriptions/acknowledged" in added
    assert {"resources/subscribe", "resources/unsubscribe"} <= removed
    # Major 5: ping, logging/setLevel, notifications/roots/list_changed removed.
    assert {"ping", "logging/setLevel", "notifications/roots/list_changed"} <= removed
    assert {"side": "client", "path": "roots.listChanged"} in report["capabilities"]["removed"]
    # Major 6: tasks leave the core protocol.
    assert {"tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "notifications/tasks/status"} <= removed
    assert {"side": "server", "path": "tasks"} in report["capabilities"]["removed"]
    assert ("Tool", "execution") in fields_removed and "Task" in types_removed
    # Major 7: multi round-trip requests: server->client requests become input requests.
    for method in ("sampling/createMessage", "elicitation/create", "roots/list"):
        assert moved[method]["old"] == ["server -> client request"]
        assert moved[method]["new"] == ["input request in InputRequiredResult"]
    for method in ("tools/call", "prompts/get", "resources/read"):
        assert changed[method]["input_required"]["new"] is True
    assert {"InputRequiredResult", "InputRequest", "InputResponse"} <= types_added
    assert ("CallToolRequestParams", "inputResponses") in fields_added
    assert ("CallToolRequestParams", "requestState") in fields_added
    # Major 8: every result carries a required resultType.
    for result in ("Result", "CallToolResult", "ListToolsResult", "GetPromptResult", "CompleteResult"):
        assert fields_added[(result, "resultType")]["required"].startswith("required")
    # Minor 1: extensions in both capability objects.
    assert {"side": "server", "path": "extensions"} in report["capabilities"]["added"]
    assert {"side": "client", "path": "extensions"} in report["capabilities"]["added"]
    # Minor 5: ttlMs / cacheScope required on the cacheable results (CacheableResult).
    for result in (
        "ListToolsResult",
        "ListPromptsResult",
        "ListResourcesResult",
        "ListResourceTemplatesResult",
        "ReadResourceResult",
    ):
        assert fields_added[(result, "ttlMs")]["required"].startswith("required")
        assert fields_added[(result, "cacheScope")]["required"].startswith("required")
    assert "CacheableResult" in types_added
    # Minor 6: resource not found is -32602 now, not -32002.
    assert {"name": "RESOURCE_NOT_FOUND", "code": -32002} in report["error_codes"]["removed"]
    # Minor 10: inputSchema / outputSchema loosened, structuredContent any JSON value.
    assert {
        ("ToolInputSchema", "properties"),
        ("ToolInputSchema", "required"),
        ("ToolOutputSchema", "type"),
    } <= fields_removed
    assert {"type": "CallToolResult", "field": "structuredContent", "old": "map[any]", "new": "any"} in report[
        "fields"
    ]["retyped"]
    # Minor 11: notifications/elicitation/complete and elicitationId removed.
    assert "notifications/elicitation/complete" in removed
    assert ("ElicitRequestURLParams", "elicitationId") in fields_removed
    # Minor 12: the renumbered error codes, HeaderMismatchError now in the schema.
    assert {"name": "HEADER_MISMATCH", "code": -32020} in report["error_codes"]["added"]
    assert {"name": "MISSING_REQUIRED_CLIENT_CAPABILITY", "code": -32021} in report["error_codes"]["added"]
    assert {"name": "UNSUPPORTED_PROTOCOL_VERSION", "code": -32022} in report["error_codes"]["added"]
    assert "HeaderMismatchError" in types_added
    # "Other schema changes" 1 (minimum/maximum/default of NumberSchema are numbers) is already true
    # of the pinned 2025-11-25 schema, so there is nothing to report between these two pins.
    assert not [e for e in report["fields"]["retyped"] if e["type"] == "NumberSchema"]


def test_same_version_has_no_changes() -> None:
    text = render(diff_specs("2025-06-18", "2025-06-18"))
    assert "No schema-level changes." in text


def _draft(tmp_path: Path) -> Path:
    """2025-11-25 plus a new `tools/search` request (no capability rule yet), a new Tool field, a
    removed Tool field, and Implementation.title made required."""
    schema = json.loads((REPO_ROOT / "schema" / "2025-11-25" / "schema.json").read_text(encoding="utf-8"))
    defs = schema["$defs"]
    defs["SearchToolsRequestParams"] = {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    }
    defs["SearchToolsRequest"] = {
        "type": "object",
        "properties": {
            "id": {"$ref": "#/$defs/RequestId"},
            "jsonrpc": {"const": "2.0", "type": "string"},
            "method": {"const": "tools/search", "type": "string"},
            "params": {"$ref": "#/$defs/SearchToolsRequestParams"},
        },
        "required": ["id", "jsonrpc", "method", "params"],
    }
    defs["SearchToolsResult"] = {
        "type": "object",
        "properties": {"tools": {"type": "array", "items": {"$ref": "#/$defs/Tool"}}},
        "required": ["tools"],
    }
    defs["ClientRequest"]["anyOf"].append({"$ref": "#/$defs/SearchToolsRequest"})
    defs["Tool"]["properties"]["version"] = {"type": "string"}
    del defs["Tool"]["properties"]["execution"]
    defs["Implementation"]["required"].append("title")
    path = tmp_path / "draft" / "schema.json"
    path.parent.mkdir()
    path.write_text(json.dumps(schema), encoding="utf-8")
    return path


def test_unpinned_schema_file(tmp_path: Path) -> None:
    path = _draft(tmp_path)
    diff = diff_specs("2025-11-25", str(path))
    assert diff.new == f"draft ({path})"
    report = to_json(diff)
    [search] = report["methods"]["added"]
    assert search == {
        "method": "tools/search",
        "role": "client -> server request",
        "params": "SearchToolsRequestParams",
        "result": "SearchToolsResult",
        "input_required": False,
        "gate": "server:tools",  # no rule names it: gated on its name's capability, and noted for review
    }
    assert any(
        "tools/search (client to server): no rule in policy/capabilities.json: gated on server:tools by the naming "
        "convention" in n
        for n in report["notes"]
    )
    assert {"type": "Tool", "field": "version", "field_type": "string", "required": "optional"} in report["fields"][
        "added"
    ]
    assert {"type": "Tool", "field": "execution", "field_type": "ToolExecution", "required": "optional"} in report[
        "fields"
    ]["removed"]
    assert {"type": "Implementation", "field": "title", "old": "optional", "new": "required"} in report["fields"][
        "requirement"
    ]
    assert {e["name"] for e in report["types"]["added"]} == {
        "SearchToolsRequest",
        "SearchToolsRequestParams",
        "SearchToolsResult",
    }
    assert not report["methods"]["removed"] and not report["error_codes"]["added"]
    text = render(diff)
    assert "- `tools/search`: client -> server request; params `SearchToolsRequestParams`" in text
    assert "## Notes" in text


def test_cli_diff_of_a_schema_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _draft(tmp_path)
    assert main(["diff", "2025-11-25", str(path.parent), "--new-name", "next", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["old"] == "2025-11-25" and report["new"] == f"next ({path.parent})"
    out = tmp_path / "report.md"
    assert main(["diff", "2025-11-25", "2026-07-28", "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == (GOLDEN / "2025-11-25_2026-07-28.md").read_text(encoding="utf-8")


def test_unknown_source_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(BindgenError, match="neither a pinned protocol version"):
        diff_specs("2025-11-25", "2099-01-01")
    assert main(["diff", "1999-01-01", "2025-11-25"]) == 1
    assert "neither a pinned protocol version" in capsys.readouterr().err


def test_identical_schemas_have_an_empty_diff_whatever_their_names(tmp_path: Path) -> None:
    """A byte-identical copy of 2026-07-28 under another name gets the same patches and gates (policies
    follow content), so nothing differs: not JSONValue, not a gate."""
    copy = tmp_path / "draft" / "schema.json"
    copy.parent.mkdir()
    copy.write_bytes((REPO_ROOT / "schema" / "2026-07-28" / "schema.json").read_bytes())
    diff = diff_specs("2026-07-28", str(copy.parent))
    assert diff.is_empty() and diff.notes == [] and diff.new == f"draft ({copy.parent})"
    assert "No schema-level changes." in render(diff)
    renamed = diff_specs(str(copy), "2026-07-28", old_name="next")
    assert renamed.is_empty() and renamed.notes == []


def test_a_patch_that_applies_to_one_side_only_is_noted(tmp_path: Path) -> None:
    """Where the defect a patch corrects is fixed on one side only, the diff shows the effect and says
    where it comes from."""
    schema = json.loads((REPO_ROOT / "schema" / "2026-07-28" / "schema.json").read_text(encoding="utf-8"))
    schema["$defs"]["JSONValue"]["anyOf"][2]["type"] = ["string", "number", "boolean", "null"]  # fixed upstream
    schema["$defs"]["Role"]["description"] = "changed"  # descriptions are not compared
    fixed = tmp_path / "fixed" / "schema.json"
    fixed.parent.mkdir()
    fixed.write_text(json.dumps(schema), encoding="utf-8")
    report = to_json(diff_specs("2026-07-28", str(fixed)))
    patched = [n for n in report["notes"] if n.startswith("schema patch /$defs/JSONValue/")]
    assert patched and "applies to 2026-07-28, not to fixed" in patched[0]
    assert report["types"]["changed"] == [] and not report["methods"]["added"]
