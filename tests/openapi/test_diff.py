"""`mcp-bindgen openapi diff OLD NEW`: which tools two descriptions' packages change, each change
classified as the lock classifies a live server's (`mcp_bindgen.compat`), read like a spec:
`fixtures/petstore_v2.yaml` is `petstore.yaml` with a bound tightened, a required field added to a
body, an output field removed, an operation removed, one added and a description reworded;
`fixtures/expected/petstore_diff.md` is the report (`OPENAPI_UPDATE_EXPECTED=1` rewrites it)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from mcp_bindgen.cli import main
from mcp_bindgen.compat import compare_schemas
from tests.openapi.conftest import FIXTURES

OLD, NEW = FIXTURES / "petstore.yaml", FIXTURES / "petstore_v2.yaml"


def _diff(capsys: pytest.CaptureFixture[str], *words: str | Path) -> tuple[int, str]:
    code = main(["openapi", "diff", *(str(w) for w in words)])
    return code, capsys.readouterr().out


def test_the_report_names_each_changed_tool_and_whether_it_breaks(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(FIXTURES)
    code, out = _diff(capsys, OLD.name, NEW.name)
    expected = FIXTURES / "expected" / "petstore_diff.md"
    if os.environ.get("OPENAPI_UPDATE_EXPECTED"):
        expected.write_text(out)
    assert out == expected.read_text()
    assert code == 1  # a change breaks a caller


def test_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _diff(capsys, OLD, NEW, "--format", "json")
    report: dict[str, Any] = json.loads(out)
    assert code == 1
    assert (report["breaking"], report["additive"]) == (6, 6)
    changed = report["changed"]
    breaks = {subject: entry["breaks_a_caller"] for subject, entry in changed.items()}
    assert breaks == {
        "tool `create-pet`": True,  # its body requires `owner` now
        "tool `deletePet`": True,  # removed
        "tool `getPet`": True,  # `born` gone from its answer
        "tool `listPets`": True,  # `limit` at most 50, was 100
        "tool `updatePet`": False,  # added
    }
    body = [c for c in changed["tool `create-pet`"]["changes"] if c["where"].startswith("inputSchema")]
    assert body == [
        {
            "kind": "breaking",
            "what": "required property added",
            "where": "inputSchema.properties.body.allOf[0].properties.owner",
        }
    ]


def test_additive_changes_only_exit_0(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out = _diff(capsys, NEW, NEW)
    assert (code, out.splitlines()[-1]) == (0, "No changes: both describe the same tools and resources.")
    reworded = tmp_path / "reworded.yaml"
    reworded.write_text(OLD.read_text().replace("List the pets.", "List every pet."))
    code, out = _diff(capsys, OLD, reworded)
    assert (code, out.splitlines()[-1]) == (0, "| tool `listPets` | no | - | description changed |")
    # Swapped, the same changes read the other way: the tool added is now removed.
    code, out = _diff(capsys, NEW, OLD, "--format", "json")
    assert code == 1
    assert json.loads(out)["changed"]["tool `updatePet`"]["changes"][0]["what"] == "tool removed"


def test_a_route_map_is_applied_to_both_sides(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    routes = tmp_path / "routes.json"
    routes.write_text(json.dumps({"routes": [{"kind": "resource", "methods": ["GET"], "path": "/pets/*"}]}))
    code, out = _diff(capsys, OLD, NEW, "--routes", routes, "--name", "petstore", "--format", "json")
    changed = json.loads(out)["changed"]
    # getPet is a resource template on both sides (its optional `fields` keeps its default, out of the
    # URI): its tool changes are gone, its description change is the template's metadata.
    assert "tool `getPet`" not in changed
    assert changed["resource template `petstore://pets/{pet_id}`"] == {
        "breaks_a_caller": False,
        "changes": [{"kind": "additive", "what": "metadata changed", "where": ""}],
    }
    assert code == 1


def test_bad_usage_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["openapi", "diff", str(OLD)]) == 1
    assert "expected `openapi SPEC -o DIR` or `openapi diff OLD NEW`" in capsys.readouterr().err
    assert main(["openapi", str(OLD)]) == 1
    assert "pass -o DIR" in capsys.readouterr().err


def test_a_changed_definition_behind_the_same_reference_is_a_change() -> None:
    """The lock's comparison used to stop at equal text: `{"$ref": "#/$defs/Pet"}` on both sides
    was no change even where `Pet` itself had changed between them."""
    old = {"properties": {"pet": {"$ref": "#/$defs/Pet"}}, "$defs": {"Pet": {"type": "object", "required": ["a"]}}}
    new = {"properties": {"pet": {"$ref": "#/$defs/Pet"}}, "$defs": {"Pet": {"type": "object", "required": ["a", "b"]}}}
    changes = compare_schemas(old, new, "tool `t` inputSchema", "input")
    assert [(c.where, c.what, c.kind) for c in changes] == [
        ("tool `t` inputSchema.properties.pet.properties.b", "now required", "breaking")
    ]
    wrapped = {"allOf": [{"$ref": "#/$defs/Pet"}], "description": "d"}
    changes = compare_schemas(
        {**old, "properties": {"pet": wrapped}}, {**new, "properties": {"pet": wrapped}}, "", "input"
    )
    assert [c.what for c in changes] == ["now required"]


def test_a_recursive_definition_is_compared_once() -> None:
    def tree(leaf: str) -> dict[str, Any]:
        node = {
            "type": "object",
            "properties": {"left": {"$ref": "#/$defs/Node"}, "right": {"$ref": "#/$defs/Node"}, "v": {"type": leaf}},
        }
        return {"$ref": "#/$defs/Node", "$defs": {"Node": node}}

    changes = compare_schemas(tree("string"), tree("integer"), "", "output")
    assert [(c.where, c.what) for c in changes] == [(".properties.v", "type ['string'] -> ['integer']")]
