"""`mcp-bindgen diff` of the extension packages (issue 31): a pinned extension's schema (tasks, MCP
Apps, Skills) against a changed copy made here from it names each changed definition, field and
method (the extension's channel and an unknown sender included); one-sentence errors otherwise."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from mcp_bindgen.cli import main
from mcp_bindgen.diff import render, to_json
from mcp_bindgen.diff_extension import diff_extension_specs
from mcp_bindgen.errors import BindgenError
from mcp_bindgen.pins import load_extension_pins, read_extension

SKILLS = "io.modelcontextprotocol/skills"
UI = "io.modelcontextprotocol/ui"
TASKS = "io.modelcontextprotocol/tasks"


def pinned_schema(identifier: str) -> dict[str, Any]:
    raw = read_extension(load_extension_pins()[identifier])
    if raw is None:
        pytest.skip(f"extension {identifier}: schema not synced (run `mcp-bindgen schema sync`)")
    return json.loads(raw)


def defs(schema: dict[str, Any]) -> dict[str, Any]:
    return schema["$defs"] if "$defs" in schema else schema["definitions"]


def write(tmp_path: Path, schema: dict[str, Any], name: str = "schema.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(schema, indent=1), encoding="utf-8")
    return path


def changed_skills(tmp_path: Path) -> Path:
    """The Skills schema with a field added and one retyped on SkillResource, a request added
    (skills/search, which no policy entry knows yet) and one removed (resources/directory/read)."""
    schema = pinned_schema(SKILLS)
    d = defs(schema)
    d["SkillResource"]["properties"]["mediaType"] = {"type": "string"}
    d["SkillResource"]["properties"]["size"]["type"] = "number"
    search = copy.deepcopy(d["ListSkillsRequest"])
    search["properties"]["method"] = {"type": "string", "const": "skills/search"}
    d["SearchSkillsRequest"] = search
    d["SearchSkillsResult"] = copy.deepcopy(d["ListSkillsResult"])
    del d["ReadResourceDirectoryRequest"]
    return write(tmp_path, schema)


def test_a_skills_schema_change_names_each_changed_definition(tmp_path: Path) -> None:
    report = to_json(diff_extension_specs(SKILLS, SKILLS, str(changed_skills(tmp_path))))
    assert report["old"] == f"{SKILLS} (pinned)"
    assert [(e["type"], e["field"]) for e in report["fields"]["added"]] == [("SkillResource", "mediaType")]
    assert [(e["type"], e["field"], e["new"]) for e in report["fields"]["retyped"]] == [
        ("SkillResource", "size", "number[minimum=0]")
    ]
    assert [e["name"] for e in report["types"]["added"]] == ["SearchSkillsRequest", "SearchSkillsResult"]
    assert [e["name"] for e in report["types"]["removed"]] == ["ReadResourceDirectoryRequest"]
    (added,) = report["methods"]["added"]
    assert added["method"] == "skills/search" and added["result"] == "SearchSkillsResult"
    assert added["role"] == "request, sender not in policy/extension_methods.json"
    (removed,) = report["methods"]["removed"]
    assert removed["method"] == "resources/directory/read" and removed["gate"] == SKILLS
    assert any("who sends skills/search (SearchSkillsRequest) is not known" in n for n in report["notes"])
    assert not report["capabilities"]["added"] and not report["lifecycle"]


def test_an_apps_bridge_change_is_shown_on_the_extensions_channel(tmp_path: Path) -> None:
    schema = pinned_schema(UI)
    d = defs(schema)
    d["McpUiResourceCsp"]["properties"]["workerDomains"] = {"type": "array", "items": {"type": "string"}}
    del d["McpUiOpenLinkRequest"], d["McpUiOpenLinkResult"]
    report = to_json(diff_extension_specs(UI, UI, str(write(tmp_path, schema))))
    assert [(e["type"], e["field"]) for e in report["fields"]["added"]] == [("McpUiResourceCsp", "workerDomains")]
    (removed,) = report["methods"]["removed"]
    assert removed["method"] == "ui/open-link"
    assert removed["role"] == "client -> server request on the extension's channel"
    assert {e["name"] for e in report["types"]["removed"]} == {
        "McpUiOpenLinkRequest",
        "McpUiOpenLinkRequestParams",  # its params, a type of its own in the bindings
        "McpUiOpenLinkResult",
    }


def test_a_tasks_schema_change_in_a_method_signature(tmp_path: Path) -> None:
    schema = pinned_schema(TASKS)
    own = defs(schema)["GetTaskRequest"]["allOf"][1]  # the request's own part (after JSONRPCRequest)
    own["required"] = [r for r in own["required"] if r != "params"]
    own["properties"]["params"]["properties"]["pollMs"] = {"type": "integer"}
    report = to_json(diff_extension_specs(TASKS, TASKS, str(write(tmp_path, schema))))
    assert [(e["method"], e["changes"]) for e in report["methods"]["changed"]] == [
        ("tasks/get", [{"what": "params_required", "old": True, "new": False}])
    ]
    assert [(e["type"], e["field"]) for e in report["fields"]["added"]] == [("GetTaskRequestParams", "pollMs")]


@pytest.mark.parametrize("identifier", [SKILLS, UI, TASKS])
def test_a_pinned_extension_against_itself_has_no_changes(identifier: str, tmp_path: Path) -> None:
    pinned_schema(identifier)
    assert diff_extension_specs(identifier, identifier, identifier).is_empty()


def test_the_cli_diffs_an_extension_by_name_and_two_files_with_extension(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = changed_skills(tmp_path)
    assert main(["diff", SKILLS, str(new)]) == 0
    text = capsys.readouterr().out
    assert "- `mediaType: string` (optional) on `SkillResource`" in text
    assert text == render(diff_extension_specs(SKILLS, SKILLS, str(new)))
    old = write(tmp_path, pinned_schema(SKILLS), "old.json")
    assert main(["diff", str(old), str(new), "--extension", SKILLS, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["old"] == f"{SKILLS} ({old})"
    assert [e["name"] for e in report["types"]["removed"]] == ["ReadResourceDirectoryRequest"]


def test_bad_extension_diffs_are_one_sentence_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", SKILLS, UI]) == 1
    assert "are two different extensions" in capsys.readouterr().err
    assert main(["diff", "a.json", "b.json", "--extension", "example.com/nothing"]) == 1
    assert "--extension example.com/nothing: not a pinned extension (pinned: " in capsys.readouterr().err
    with pytest.raises(BindgenError, match="not found"):
        diff_extension_specs(SKILLS, SKILLS, str(tmp_path / "missing.json"))
