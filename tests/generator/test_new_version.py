"""A new protocol version is first-class: generated with zero code edits, registered, served, connected
to, diffed, and reviewed against the policies (issue #17).

Two versions that exist nowhere in the project are generated here:

- `next` (tests/fixtures/next_version.py): the official 2026-07-28 schema plus a new request with a new
  capability, a renamed field, a removed notification, a new content block type and a changed enum;
- `draft`: the 2026-07-28 schema's bytes under another name (upstream's `schema/draft/` is one), which
  must behave exactly as 2026-07-28.

The slow test does it all from an installed wheel in a fresh virtual environment.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from mcp_bindgen.cli import main
from mcp_bindgen.diff import diff_specs, to_json
from mcp_bindgen.pipeline import package_name
from tests.fixtures.next_version import NAME, NEXT_WIRE, write_next_schema
from tests.support import REPO_ROOT, shared_schema_dir
from tests.support.pipeline import PINNED_VERSIONS, rendered
from tests.support.wheel import built_wheel, fresh_venv, pip

SCENARIO = REPO_ROOT / "tests" / "fixtures" / "new_version_scenario.py"
BASE_SCHEMA = shared_schema_dir() / "2026-07-28" / "schema.json"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Both versions generated once, through the command line, into one src root."""
    work = tmp_path_factory.mktemp("new_version")
    next_dir = write_next_schema(BASE_SCHEMA, work / "next").parent
    draft_dir = work / "draft"
    draft_dir.mkdir()
    shutil.copy(BASE_SCHEMA, draft_dir / "schema.json")
    root = work / "src"
    outputs = {}
    for argv in (
        ["--schema", str(next_dir), "--version", NAME, "--protocol-version", NEXT_WIRE],
        ["--schema", str(draft_dir), "--version", "draft"],
    ):
        result = _cli(["generate", *argv, "--out", str(root)])
        assert result.returncode == 0, result.stderr
        outputs[argv[3]] = result.stdout
    return {"root": root, "next_dir": next_dir, "draft_dir": draft_dir, "stdout": outputs}


def _cli(argv: list[str], *, cwd: Path | None = None, python: str = sys.executable) -> subprocess.CompletedProcess[str]:
    code = "import sys; from mcp_bindgen.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [python, "-c", code, *argv], capture_output=True, text=True, timeout=600, cwd=cwd or REPO_ROOT
    )


def _scenario(root: Path, name: str) -> dict[str, Any]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(str(p) for p in (root, REPO_ROOT / "runtime", REPO_ROOT / "generated")),
    }
    run = subprocess.run(
        [sys.executable, str(SCENARIO), name], env=env, capture_output=True, text=True, timeout=300, cwd=root
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


def _about(root: Path, name: str) -> str:
    return (root / "mcp_bindings" / package_name(name) / "about.py").read_text(encoding="utf-8")


# -- next: the five changes ----------------------------------------------------------------------


def test_next_describes_itself(made: dict[str, Any]) -> None:
    about = _about(made["root"], NAME)
    assert "released=False" in about  # generated under another name than its wire version: a draft
    assert f'version="{NEXT_WIRE}"' in about and 'name="next"' in about and 'package="v_next"' in about
    assert "stateless=True" in about  # no initialize; server/discover: derived from the schema


def test_next_diff_lists_exactly_the_five_changes(made: dict[str, Any]) -> None:
    report = to_json(diff_specs("2026-07-28", str(made["next_dir"])))
    assert report["new"] == f"next ({made['next_dir']})"
    changes = {key: value for key, value in report.items() if key not in ("old", "new", "notes")}
    assert changes == {
        "lifecycle": [],
        "methods": {
            # 1. the new request (no rule names it: the naming convention gates it) ...
            "added": [
                {
                    "method": "widgets/list",
                    "role": "client -> server request",
                    "params": "PaginatedRequestParams",
                    "result": "ListWidgetsResult",
                    "input_required": False,
                    "gate": "server:widgets",
                }
            ],
            # 3. the removed notification
            "removed": [
                {
                    "method": "notifications/prompts/list_changed",
                    "role": "server -> client notification",
                    "params": "NotificationParams",
                    "gate": "server:prompts.listChanged",
                }
            ],
            "moved": [],
            "changed": [],
        },
        # 1. ... and its new capability
        "capabilities": {
            "added": [{"side": "server", "path": "widgets"}, {"side": "server", "path": "widgets.listChanged"}],
            "removed": [],
        },
        "error_codes": {"added": [], "removed": [], "changed": []},
        "types": {
            "added": [
                {"name": "ListWidgetsRequest", "kind": "object", "nested": False},
                {"name": "ListWidgetsResult", "kind": "object", "nested": False},
                {"name": "ServerCapabilitiesWidgets", "kind": "object", "nested": True},
                {"name": "Widget", "kind": "object", "nested": False},
                {"name": "WidgetContent", "kind": "object", "nested": False},  # 4. the new content block
            ],
            "removed": [{"name": "PromptListChangedNotification", "kind": "object", "nested": False}],
            "changed": [
                {"name": "ClientRequest", "what": "union members", "added": ["ListWidgetsRequest"], "removed": []},
                {"name": "ContentBlock", "what": "union members", "added": ["WidgetContent"], "removed": []},
                {
                    "name": "Role",
                    "what": "type",
                    "old": '"assistant" | "user"',
                    "new": '"assistant" | "system" | "user"',
                },
                {
                    "name": "ServerNotification",
                    "what": "union members",
                    "added": [],
                    "removed": ["PromptListChangedNotification"],
                },
            ],
        },
        "fields": {
            "added": [
                {
                    "type": "ServerCapabilities",
                    "field": "widgets",
                    "field_type": "ServerCapabilitiesWidgets",
                    "required": "optional",
                },
                {
                    "type": "ToolAnnotations",
                    "field": "openWorld",
                    "field_type": "boolean",
                    "required": "optional",
                },  # 2.
            ],
            "removed": [
                {"type": "ToolAnnotations", "field": "openWorldHint", "field_type": "boolean", "required": "optional"}
            ],
            "retyped": [],
            "requirement": [],
        },
    }
    assert report["notes"] == [
        "next: listen filter promptsListChanged: its description links no notification the server sends (or "
        "several): it opts in to nothing; add an entry to policy/listen_filters.json",
        "next: widgets/list (client to server): no rule in policy/capabilities.json: gated on server:widgets by "
        "the naming convention; add a rule if another capability gates it",
    ]


def test_next_review_lists_the_new_request_gated_by_the_naming_convention(made: dict[str, Any]) -> None:
    printed = made["stdout"][NAME]
    # No rule names widgets/list: the naming convention gates it on the new capability, for review.
    assert (
        "next: widgets/list (client to server): no rule in policy/capabilities.json: gated on server:widgets by "
        "the naming convention" in printed
    )
    assert "capability server:widgets: new" not in printed  # the convention's gate uses it
    # The rule of the removed notification found nothing to attach to in next; the listen filter that
    # opted in to it now links nothing the server sends.
    assert (
        "capabilities.json notifications/prompts/list_changed: applies to 2026-07-28, finds nothing to attach to "
        "in next" in printed
    )
    assert "next: listen filter promptsListChanged: its description links no notification the server sends" in printed
    assert "next: definition WidgetContent: new" in printed
    # Every other rule of 2026-07-28 attached: nothing else is listed.
    listed = [line for line in printed.splitlines() if line.lstrip().startswith("- ")]
    assert len(listed) == 8, printed


def test_next_is_served_to_its_clients_and_older_ones_and_connects_to_a_pinned_server(made: dict[str, Any]) -> None:
    seen = _scenario(made["root"], NAME)
    assert (seen["name"], seen["wire"], seen["package"]) == (NAME, NEXT_WIRE, "mcp_bindings.v_next")
    assert seen["versions"] == [*PINNED_VERSIONS, NEXT_WIRE]  # discovered, newest last
    assert seen["defaults"] == ["2026-07-28", "2026-07-28"]  # installed, but never the default (issue 45)
    served = seen["served"]
    assert served[NAME] == {
        "negotiated": NEXT_WIRE,
        "tools": ["echo"],
        "annotations": {"openWorld": True},
        "call": ["echo next"],
        "widgets": ["dial"],
    }
    for version in ("2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28"):
        assert served[version]["negotiated"] == version and served[version]["call"] == [f"echo {version}"]
    # A client on the next stub, against a server written on the pinned 2026-07-28 stub: it speaks next
    # (the server's runtime knows it), the server has no widgets.
    connected = seen["connected"]
    assert connected["negotiated"] == NEXT_WIRE and connected["call"] == ["echo next"]
    assert connected["widgets"] == "error -32601"
    assert seen["by_name"]["negotiated"] == NEXT_WIRE and seen["by_name"]["widgets"] == ["dial"]


# -- draft: 2026-07-28 under another name -------------------------------------------------------


def test_draft_is_2026_07_28_in_all_but_its_name(made: dict[str, Any]) -> None:
    """Same patches (JSONValue takes 1.5 and null), same gates and param gates, same wire version:
    every generated file is 2026-07-28's with the name swapped."""
    pinned = rendered("2026-07-28")
    for rel, text in pinned.items():
        mine = (made["root"] / rel.replace("v2026_07_28", "v_draft")).read_text(encoding="utf-8").splitlines()
        theirs = text.splitlines()
        assert len(mine) == len(theirs), rel
        for line, pinned_line in zip(mine, theirs, strict=True):
            # Line by line: the same, or the same but for the name where the name is written, and
            # for `released` (a copy under another name is not a release: never a default).
            renamed = pinned_line.replace("v2026_07_28", "v_draft").replace("2026-07-28", "draft")
            assert line in (pinned_line, renamed, pinned_line.replace("released=True", "released=False"))
    about = _about(made["root"], "draft")
    assert 'version="2026-07-28"' in about and 'name="draft"' in about and "released=False" in about
    assert made["stdout"]["draft"].endswith("nothing is left uncovered\n")


def test_diff_of_2026_07_28_and_draft_is_empty(made: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "2026-07-28", str(made["draft_dir"])]) == 0
    out = capsys.readouterr().out
    assert out == f"# MCP schema changes: 2026-07-28 -> draft ({made['draft_dir']})\n\nNo schema-level changes.\n"
    assert diff_specs(str(made["draft_dir"]), "2026-07-28").is_empty()


def test_draft_is_served_and_connected_to_by_name(made: dict[str, Any]) -> None:
    seen = _scenario(made["root"], "draft")
    assert (seen["name"], seen["wire"], seen["stateless"]) == ("draft", "2026-07-28", True)
    assert "draft" in seen["names"] and seen["versions"][-1] == NEXT_WIRE
    assert seen["served"]["draft"]["negotiated"] == "2026-07-28"
    assert seen["served"]["draft"]["annotations"] == {"openWorldHint": True}
    for version in ("2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28"):
        assert seen["served"][version]["call"] == [f"echo {version}"]
    assert seen["connected"]["call"] == ["echo draft"]
    assert seen["by_name"]["negotiated"] == "2026-07-28" and seen["by_name"]["call"] == ["echo draft"]


def test_a_server_project_is_scaffolded_on_draft_by_name(made: dict[str, Any], tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(made["root"])}
    code = "import sys; from mcp_bindgen.cli import main; sys.exit(main(sys.argv[1:]))"
    run = subprocess.run(
        [sys.executable, "-c", code, "new", str(tmp_path / "srv"), "--protocol", "draft"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    server = (tmp_path / "srv" / "src" / "srv" / "server.py").read_text(encoding="utf-8")
    assert 'app = App("srv", version="0.1.0", protocol="draft")' in server


# -- bad input: one line each ---------------------------------------------------------------------


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("mcp-bindgen: error: "), err
    return err.removeprefix("mcp-bindgen: error: ").rstrip("\n")


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_folder_without_a_schema_is_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    message = _error(
        ["generate", "--schema", str(tmp_path / "empty"), "--version", "x", "--out", str(tmp_path)], capsys
    )
    assert message == f"{tmp_path / 'empty'} is a folder without a schema.json"
    message = _error(["generate", "--schema", str(tmp_path / "nope.json"), "--version", "x"], capsys)
    assert message == f"schema file {tmp_path / 'nope.json'} not found"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("not json {", "is not valid JSON ("),
        ("[1, 2]", "is not an MCP schema: its JSON is not an object"),
        ('{"title": "x"}', "is not an MCP schema: it has neither `definitions` nor `$defs`"),
        (
            '{"$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}}}',
            "is not an MCP schema: it defines no `ClientRequest` union of the requests a client sends",
        ),
        (
            json.dumps(
                {
                    "$defs": {
                        "PingRequest": {
                            "type": "object",
                            "properties": {"method": {"const": "ping"}},
                            "required": ["method"],
                        },
                        "ClientRequest": {"$ref": "#/$defs/PingRequest"},
                        "Result": {"type": "object", "properties": {"_meta": {"type": "object"}}},
                    }
                }
            ),
            "is not an MCP schema: it defines neither `initialize` nor `server/discover`, "
            "so its lifecycle cannot be told",
        ),
        ('{"$defs": {"A": {"properties": 5}}}', "is not an MCP schema this generator can read ("),
    ],
)
def test_a_schema_that_is_not_mcp_is_one_sentence(
    text: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = _write(tmp_path / "odd" / "schema.json", text)
    message = _error(["generate", "--schema", str(schema), "--version", "odd", "--out", str(tmp_path / "out")], capsys)
    assert message.startswith(f"{schema} {says}"), message
    assert not (tmp_path / "out").exists()


def test_overwriting_a_pinned_version_with_another_schema_is_refused(
    made: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = made["next_dir"] / "schema.json"
    new_sha = __import__("hashlib").sha256(schema.read_bytes()).hexdigest()
    pinned_sha = "ef70b61f99b6d2e5e3b46863822eab08dff6a45bedc7a08914e0e5b133f40203"
    for name in ("2026-07-28", "2026_07_28"):  # the same package either way
        message = _error(["generate", "--schema", str(schema), "--version", name, "--out", str(tmp_path)], capsys)
        assert message == (
            f"refusing to overwrite the pinned version 2026-07-28 (schema sha256 {pinned_sha}) with {schema} "
            f"(sha256 {new_sha}): pick another --version name, or pass --force to mean it"
        )
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
def test_force_overwrites_and_the_same_bytes_need_no_force(
    made: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = made["next_dir"] / "schema.json"
    assert (
        main(["generate", "--schema", str(schema), "--version", "2026-07-28", "--force", "--out", str(tmp_path)]) == 0
    )
    assert 'version="2026-07-28"' in (tmp_path / "mcp_bindings" / "v2026_07_28" / "about.py").read_text()
    # A pinned version from its own schema: no force needed, no advice to drop policy entries.
    same = REPO_ROOT / "schema" / "2025-11-25" / "schema.json"
    assert main(["generate", "--schema", str(same), "--version", "2025-11-25", "--out", str(tmp_path / "b")]) == 0
    assert "nothing is left uncovered" in capsys.readouterr().out


def test_a_schema_without_a_wire_version_asks_for_one(made: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    message = _error(["generate", "--schema", str(made["next_dir"]), "--version", "mine"], capsys)
    assert message == (
        "the schema of mine does not state its wire protocol version and is not a pinned schema: "
        "pass --protocol-version (e.g. --protocol-version 2026-09-30)"
    )


def test_version_flag(capsys: pytest.CaptureFixture[str]) -> None:
    """The generator's version and the protocol versions installed (issue 33: `--version` names them)."""
    from mcp_bindgen import __version__
    from mcp_bindings.runtime.protocol import registry

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    known = ", ".join(registry.versions())
    assert info.value.code == 0
    assert capsys.readouterr().out == f"mcp-bindgen {__version__} (MCP protocol versions: {known})\n"


_WITHOUT = (
    "import sys\n"
    "for name in {names!r}:\n"
    "    sys.modules[name] = None  # as if the extra were not installed\n"
    "from mcp_bindgen.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def _without(names: list[str], argv: list[str]) -> subprocess.CompletedProcess[str]:
    code = _WITHOUT.format(names=names)
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=300)


def test_a_missing_generator_extra_says_which_to_install(tmp_path: Path) -> None:
    extra = ["black", "jinja2", "libcst", "datamodel_code_generator"]
    run = _without(extra, ["generate", "--version", "2025-11-25", "--out", str(tmp_path)])
    assert run.returncode == 1 and run.stdout == ""
    [line] = run.stderr.splitlines()
    assert re.fullmatch(
        r"mcp-bindgen: error: `mcp-bindgen generate` needs the generator extra \(no module "
        r"'(black|jinja2|libcst|datamodel_code_generator)'\): install mcp-bindgen\[generator\]",
        line,
    ), line
    # diff reads schemas into the IR only: it needs none of the generator's tools.
    run = _without(extra, ["diff", "2025-11-25", "2026-07-28", "--format", "json"])
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["new"] == "2026-07-28"


def test_a_missing_runtime_extra_says_which_to_install(tmp_path: Path) -> None:
    from mcp_bindgen.cli import missing_extra

    extras = {
        name: missing_extra(ModuleNotFoundError(name=name))
        for name in ("anyio", "orjson", "black", "jinja2", "starlette", "httpx", "yaml")
    }
    assert extras == {
        "anyio": "runtime",
        "orjson": "runtime",
        "black": "generator",
        "jinja2": "generator",
        "starlette": "http",
        "httpx": "http",
        "yaml": None,  # not ours: the traceback stays
    }
    # Scaffolding a server reads the generated tables only: it needs no runtime extra itself.
    run = _without(["anyio", "orjson"], ["new", str(tmp_path / "srv")])
    assert run.returncode == 0, run.stderr


# -- release day ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_release_day_pins_regenerates_diffs_and_reviews(
    made: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "checkout"
    (root / "schema").mkdir(parents=True)
    shutil.copy(REPO_ROOT / "schema" / "manifest.json", root / "schema" / "manifest.json")
    for version in PINNED_VERSIONS:
        shutil.copytree(REPO_ROOT / "schema" / version, root / "schema" / version)
    monkeypatch.setenv("MCP_BINDGEN_ROOT", str(root))
    commit = "1" * 40
    argv = ["schema", "pin", NEXT_WIRE, "--commit", commit, "--from", str(made["next_dir"])]
    assert main(argv) == 0
    out = capsys.readouterr().out
    entry = json.loads((root / "schema" / "manifest.json").read_text())["versions"][NEXT_WIRE]
    sha = __import__("hashlib").sha256((made["next_dir"] / "schema.json").read_bytes()).hexdigest()
    assert entry == {
        "repository": "modelcontextprotocol/modelcontextprotocol",
        "commit": commit,
        "path": f"schema/{NEXT_WIRE}/schema.json",
        "sha256": sha,
    }
    assert (root / "schema" / NEXT_WIRE / "schema.json").read_bytes() == (made["next_dir"] / "schema.json").read_bytes()
    about = (root / "generated" / "mcp_bindings" / "v2026_12_01" / "about.py").read_text()
    assert f'version="{NEXT_WIRE}"' in about and f'name="{NEXT_WIRE}"' in about
    assert out.startswith(f"pinned {NEXT_WIRE}: modelcontextprotocol/modelcontextprotocol@{commit}")
    assert f"# MCP schema changes: 2026-07-28 -> {NEXT_WIRE}" in out and "- `widgets/list`" in out
    convention = "widgets/list (client to server): no rule in policy/capabilities.json: gated on server:widgets"
    assert f"{NEXT_WIRE}: {convention}" in out
    # Pinning it again with other bytes needs --force.
    other = _write(
        tmp_path / "other" / "schema.json", (REPO_ROOT / "schema" / "2026-07-28" / "schema.json").read_text()
    )
    message = _error(["schema", "pin", NEXT_WIRE, "--commit", commit, "--from", str(other)], capsys)
    assert message.startswith(f"{NEXT_WIRE} is pinned already with schema sha256 {sha}; the new schema has sha256 ")


# -- from a wheel, in a fresh virtual environment --------------------------------------------------


@pytest.mark.slow
def test_a_wheel_user_generates_installs_serves_and_connects_a_new_version(tmp_path: Path) -> None:
    wheel = built_wheel()
    python = fresh_venv(tmp_path / "venv")
    work = tmp_path / "work"
    next_dir = write_next_schema(BASE_SCHEMA, work / "next").parent

    # The bare wheel: generating says which extra to install; --version works.
    pip(python, "install", "-q", str(wheel))
    bare = _cli(["generate", "--schema", str(next_dir), "--version", NAME], cwd=work, python=python)
    assert bare.returncode == 1 and bare.stderr.strip().endswith("install mcp-bindgen[generator]"), bare.stderr
    assert _cli(["--version"], python=python).stdout.startswith("mcp-bindgen ")

    pip(python, "install", "-q", f"{wheel}[runtime,generator]")
    # From a wheel, `schema sync` writes every schema, the extensions' too, under ./schema: never
    # into the installed package.
    synced = _cli(["schema", "sync", "--from", str(shared_schema_dir())], cwd=work, python=python)
    assert synced.returncode == 0, synced.stderr
    assert (work / "schema" / "2025-11-25" / "schema.json").is_file()
    assert (work / "schema" / "extensions" / "io.modelcontextprotocol-tasks" / "schema.json").is_file()
    assert "site-packages" not in synced.stdout, synced.stdout
    assert "verified the MCP Registry's server.json schema 2025-12-11" in synced.stdout
    # `registry check` reads the server.json schema the wheel ships (mcp_bindgen/_schema/).
    entry = {
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
        "name": "io.github.alice/weather",
        "description": "Weather",
        "version": "1.0.0",
        "remotes": [{"type": "streamable-http", "url": "https://weather.example.com/mcp"}],
    }
    (work / "server.json").write_text(json.dumps(entry), encoding="utf-8")
    checked = _cli(["registry", "check"], cwd=work, python=python)
    assert checked.returncode == 0 and "a valid MCP Registry entry" in checked.stdout, checked.stderr
    # Run from a wheel, generate writes an installable package (here into the current folder).
    made = _cli(
        ["generate", "--schema", str(next_dir), "--version", NAME, "--protocol-version", NEXT_WIRE],
        cwd=work,
        python=python,
    )
    assert made.returncode == 0, made.stderr
    project = work / "mcp-bindings-next"
    assert f"install it with: pip install {project}" in made.stdout
    # Its requirement on mcp-bindgen is the wheel this generator was installed from (no index has it yet).
    made_project = tomllib.loads((project / "pyproject.toml").read_text())
    assert made_project["project"]["dependencies"] == [f"mcp-bindgen @ {wheel.as_uri()}"]
    convention = "widgets/list (client to server): no rule in policy/capabilities.json: gated on server:widgets"
    assert convention in made.stdout
    assert not (work / "generated").exists()
    site = subprocess.run(
        [python, "-c", "import mcp_bindings, sys; print(list(mcp_bindings.__path__)[0])"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    assert not (Path(site) / "v_next").exists()  # nothing written into site-packages by generate

    # The same with --package: a named distribution anywhere.
    named = _cli(
        [
            "generate",
            "--schema",
            str(next_dir),
            "--version",
            NAME,
            "--protocol-version",
            NEXT_WIRE,
            "--package",
            str(work / "acme-mcp-next"),
        ],
        cwd=work,
        python=python,
    )
    assert named.returncode == 0, named.stderr
    assert 'name = "acme-mcp-next"' in (work / "acme-mcp-next" / "pyproject.toml").read_text()

    pip(python, "install", "-q", str(project))
    # A user's program: a server on the next stub serves next and older clients; the next client
    # connects to a server on the pinned stub.
    run = subprocess.run([python, str(SCENARIO), NAME], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout)
    assert seen["versions"] == [*PINNED_VERSIONS, NEXT_WIRE] and seen["names"] == [*PINNED_VERSIONS, NAME]
    assert seen["served"][NAME]["widgets"] == ["dial"] and seen["served"][NAME]["negotiated"] == NEXT_WIRE
    assert all(seen["served"][v]["call"] == [f"echo {v}"] for v in ("2024-11-05", "2025-11-25", "2026-07-28"))
    assert seen["connected"]["negotiated"] == NEXT_WIRE and seen["connected"]["call"] == ["echo next"]
    # Found through the entry point as well as the namespace.
    points = subprocess.run(
        [
            python,
            "-c",
            "from importlib.metadata import entry_points as e; "
            "print([p.value for p in e(group='mcp_bindings.versions')])",
        ],
        capture_output=True,
        text=True,
    )
    assert points.stdout.strip() == "['mcp_bindings.v_next']"

    # A server project scaffolded on the installed version depends on the distribution holding it
    # (its tests could not collect without it: `unknown MCP protocol version`), and says so.
    scaffolded = _cli(["new", str(work / "on-next"), "--protocol", NAME, "--bindgen", str(wheel)], python=python)
    assert scaffolded.returncode == 0, scaffolded.stderr
    pyproject = tomllib.loads((work / "on-next" / "pyproject.toml").read_text())
    # Installed from its folder (on no package index), the distribution is required from there.
    holder = f"mcp-bindings-next @ {project.as_uri()}"
    assert holder in pyproject["project"]["dependencies"]
    assert f"`{holder}` (made with `mcp-bindgen generate --package`)" in (work / "on-next" / "README.md").read_text()
    assert f"(protocol next comes from {holder}: where it was installed from" in scaffolded.stdout
    # Without --bindgen, the project depends on the wheel this mcp-bindgen was installed from.
    portable = _cli(["new", str(work / "portable")], python=python)
    assert portable.returncode == 0, portable.stderr
    assert f"(it depends on mcp-bindgen from the wheel {wheel}, which this mcp-bindgen was installed" in portable.stdout
    assert f"mcp-bindgen[runtime] @ {wheel.as_uri()}" in (work / "portable" / "pyproject.toml").read_text()
