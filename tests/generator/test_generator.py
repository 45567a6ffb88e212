"""The generator's own guarantees: pins, patches, names, determinism, `check`, the CLI."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_bindgen import pins
from mcp_bindgen.cli import build_parser, main
from mcp_bindgen.errors import BindgenError
from mcp_bindgen.ir import AliasDef, ObjectDef, SchemaIR
from mcp_bindgen.normalise import NormalisedSchema, Patch, apply_patches, load_patches, normalise, patch_applies
from mcp_bindgen.pipeline import package_name, pinned_source
from tests.support import REPO_ROOT, shared_schema_dir
from tests.support.pipeline import PINNED_VERSIONS, cached_source, name_table, pinned_ir, rendered, rendered_pinned

GOLDEN = REPO_ROOT / "tests" / "golden" / "names"


@pytest.fixture
def render_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`check` compares against the session's renders of the pinned versions instead of rendering anew."""
    monkeypatch.setattr("mcp_bindgen.output.render_pinned", rendered_pinned)


@pytest.mark.parametrize("version", PINNED_VERSIONS)
def test_name_table_matches_golden(version: str) -> None:
    golden = GOLDEN / f"{version}.tsv"
    table = name_table(pinned_ir(version))
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(table, encoding="utf-8")
    assert golden.read_text(encoding="utf-8") == table, "name table changed: review, then UPDATE_GOLDEN=1"


@pytest.mark.parametrize("version", PINNED_VERSIONS)
def test_no_counter_names(version: str) -> None:
    ir = pinned_ir(version)
    counters = [name for name in ir.definitions if name[-1].isdigit()]
    assert counters == []


def test_nested_names_come_from_their_location() -> None:
    ir = pinned_ir("2024-11-05")
    roots = ir.definitions["ClientCapabilitiesRoots"]
    assert roots.hoisted and roots.origin == "/$defs/ClientCapabilities/properties/roots"
    assert "CreateMessageRequestParams" in ir.definitions


def test_both_dialects_normalise_to_defs() -> None:
    for version in ("2024-11-05", "2026-07-28"):
        src = cached_source(version)
        doc = normalise(src.raw, version, src.sha256).document
        assert set(doc) == {"$defs"}
        assert "#/definitions/" not in json.dumps(doc)


def test_patches_are_applied() -> None:
    ir = pinned_ir("2026-07-28")
    alias = ir.definitions["JSONValue"]
    assert isinstance(alias, AliasDef)
    json_value = json.dumps(alias.type, default=lambda o: o.__dict__)
    assert '"null"' in json_value and '"number"' in json_value


def test_a_patch_applies_wherever_its_defect_is_and_nowhere_else() -> None:
    patch = Patch("/$defs/X/type", "integer", "number", "test")
    doc = {"$defs": {"X": {"type": "integer"}}}
    assert apply_patches(doc, [patch]) == [patch] and doc["$defs"]["X"]["type"] == "number"
    # Applied once, the defect is gone: the same patch finds nothing more to do.
    assert apply_patches(doc, [patch]) == []
    # Another value there (fixed upstream, another version) or no such place: left alone.
    other = {"$defs": {"X": {"type": "string"}}}
    assert apply_patches(other, [patch]) == [] and other["$defs"]["X"]["type"] == "string"
    assert apply_patches({"$defs": {}}, [Patch("/$defs/Missing/type", "integer", "number", "test")]) == []
    assert apply_patches({"a": [1]}, [Patch("/a/x", 1, 2, "test")]) == []


def _extension_docs() -> dict[str, object]:
    """The pinned extension schemas that are synced, by identifier."""
    found = {}
    for pin in pins.load_extension_pins().values():
        raw = pins.read_extension(pin)
        if raw is not None:
            found[pin.identifier] = json.loads(raw)
    return found


def test_every_patch_entry_applies_to_some_pinned_schema() -> None:
    # A patch that no pinned schema needs any more is stale: the review lists it, and this fails.
    docs = {version: json.loads(cached_source(version).raw) for version in PINNED_VERSIONS}
    docs.update(_extension_docs())
    applied = {p.pointer: [v for v, doc in docs.items() if patch_applies(doc, p)] for p in load_patches()}
    assert applied == {
        "/definitions/ElicitResult/properties/content/additionalProperties/type": ["2025-06-18"],
        # the extensions' schemas splice in the core definitions, and their defects with them
        "/$defs/ElicitResult/properties/content/additionalProperties/anyOf/1/type": [
            "2025-11-25",
            "2026-07-28",
            "io.modelcontextprotocol/tasks",
        ],
        "/$defs/JSONValue/anyOf/2/type": [
            "2026-07-28",
            "io.modelcontextprotocol/groups",
            "io.modelcontextprotocol/skills",
            "io.modelcontextprotocol/tasks",
        ],
        "/$defs/ReadResourceDirectoryResult/allOf/0/$ref": ["io.modelcontextprotocol/skills"],
    }
    assert pinned_ir("2026-07-28").patches == (
        "/$defs/ElicitResult/properties/content/additionalProperties/anyOf/1/type",
        "/$defs/JSONValue/anyOf/2/type",
    )


def test_policy_review_of_the_pinned_versions_is_empty() -> None:
    """Every rule of every policy file attaches to some pinned schema, and the pinned schemas have
    nothing the policies leave uncovered."""
    from mcp_bindgen.review import Known, all_rules, attachments, crossing_attachments, review
    from mcp_bindgen.surface import derive_surface

    known = [Known(v, pinned_ir(v), derive_surface(pinned_ir(v)), True) for v in PINNED_VERSIONS]
    # The patches the pinned extension schemas had (as `generate` reports them to the review).
    patched = {p.pointer for p in load_patches() for doc in _extension_docs().values() if patch_applies(doc, p)}
    assert review(known, patched=patched).items == []
    attached = set().union(*(attachments(k.ir, k.surface) for k in known)) | crossing_attachments(known)
    assert set(all_rules()) == attached | {f"schema_patches.json {pointer}" for pointer in patched}


def test_policy_renames_name_real_things() -> None:
    from mcp_bindgen.naming import field_renames, type_renames

    wire_keys: set[str] = set()
    names: set[str] = set()
    for version in PINNED_VERSIONS:
        ir = pinned_ir(version)
        names |= set(ir.upstream_names)
        for d in ir.definitions.values():
            if isinstance(d, ObjectDef):
                wire_keys |= {f.wire_name for f in d.fields}
    assert set(field_renames()) <= wire_keys
    assert set(type_renames()) <= names


def test_the_generator_pipeline_imports_nothing_from_the_runtime() -> None:
    """No module of the generator imports `mcp_bindings` (the runtime, or the live-server tools that
    talk to live servers through it), not even inside a function; `mcp_bindings.openapi`, the OpenAPI
    IR both sides share (it imports neither, a contract), is the one package it may."""
    import ast

    root = REPO_ROOT / "generator" / "mcp_bindgen"
    offenders = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = ["." * node.level + (node.module or "")]
            else:
                continue
            shared = [name for name in names if name.startswith("mcp_bindings.openapi")]
            offenders += [
                f"{rel}:{node.lineno} imports {n}" for n in names if n.startswith("mcp_bindings") and n not in shared
            ]
    assert offenders == []


def test_generator_commands_load_neither_the_runtime_nor_the_contract_tools() -> None:
    code = (
        "import sys\n"
        "from mcp_bindgen.cli import build_parser\n"
        "from mcp_bindgen.scaffold import available_versions\n"
        "build_parser()\n"
        "assert available_versions()\n"
        "tools = ('mcp_bindings.runtime', 'mcp_bindings.live.contract')\n"
        "print(sorted(m for m in sys.modules if m.startswith(tools)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_scaffold_lists_the_versions_the_runtime_registry_lists() -> None:
    from mcp_bindgen.scaffold import available_versions
    from mcp_bindings.runtime.protocol import registry

    expected = {name: info.package for name, info in registry.names().items()}
    assert available_versions() == expected
    assert list(available_versions()) == list(expected)


def test_policy_files_load_into_typed_frozen_records(tmp_path: Path) -> None:
    import dataclasses

    from mcp_bindgen import policy

    rename = policy.type_names()["Annotated"]
    assert rename.py_name == "AnnotatedBase" and rename.reason
    with pytest.raises(dataclasses.FrozenInstanceError):
        rename.py_name = "Other"  # type: ignore[misc]
    assert policy.field_defaults()["resultType"].per_definition["InputRequiredResult"] == "input_required"
    assert policy.field_defaults()["jsonrpc"].value_from_const
    tasks = policy.extension_policy("io.modelcontextprotocol/tasks")
    assert tasks.task_results == ("tools/call",) and tasks.directions["tasks/get"] == "client_to_server"
    assert policy.extension_policy("example.com/none") == policy.ExtensionPolicy({}, ())
    bogus = tmp_path / "field_names.json"
    bogus.write_text(json.dumps({"renames": {"fooBar": {"py_name": "foo"}}}), encoding="utf-8")
    with pytest.raises(BindgenError, match="field rename for 'fooBar' has no reason"):
        policy.field_names(bogus)


def test_an_ir_survives_the_trip_from_a_render_worker() -> None:
    """A worker process hands its IR back pickled; it must compare equal to one built in this process
    (an extension's spliced definitions are told by equality with the core version's)."""
    import pickle

    from mcp_bindgen.ir import NO_DEFAULT

    ir = pinned_ir("2026-07-28")
    assert pickle.loads(pickle.dumps(NO_DEFAULT)) is NO_DEFAULT
    assert pickle.loads(pickle.dumps(ir)) == ir


def test_generate_builds_each_pinned_ir_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`generate` of the pinned set lowers each version's schema once: the extensions plugging into a
    version and the policy review take the IR its render built."""
    from collections import Counter

    from mcp_bindgen import output, pipeline
    from mcp_bindgen.pins import load_extension_pins

    builds: Counter[str] = Counter()
    lower = pipeline.lower

    def counted(schema: NormalisedSchema) -> SchemaIR:
        builds[schema.version] += 1
        return lower(schema)

    monkeypatch.setattr(pipeline, "lower", counted)
    monkeypatch.setattr(os, "cpu_count", lambda: 1)  # render in this process, where the counter is
    # The version modules are not at issue (and take seconds each): a stand-in file per version.
    monkeypatch.setattr(pipeline, "render_ir", lambda source, ir, surface: ({f"{source.version}.py": ""}, surface))
    done = output.generate_files(None, None, str(tmp_path))
    assert done.review.items == []
    synced = [pin.identifier for pin in load_extension_pins().values() if pin.local_path.is_file()]
    assert builds == Counter(PINNED_VERSIONS + synced)


@pytest.mark.slow
def test_output_is_deterministic_across_hash_seeds(tmp_path: Path) -> None:
    script = (
        "import hashlib,sys\n"
        "from mcp_bindgen.pipeline import render_version, pinned_source\n"
        "files = render_version(pinned_source('2025-06-18'))\n"
        "print(hashlib.sha256(repr(sorted(files.items())).encode()).hexdigest())\n"
    )
    digests = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
        digests.add(out.stdout.strip())
    assert len(digests) == 1


def test_generated_files_carry_the_header() -> None:
    src = cached_source("2025-03-26")
    for rel, text in rendered("2025-03-26").items():
        if not rel.endswith(".py"):
            continue  # py.typed: an empty marker
        first = text.splitlines()[0]
        assert "2025-03-26" in first and src.sha256 in first, rel
        assert "Do not edit" in text.splitlines()[1]
        assert "20" + "26-11" not in text.split("\n", 2)[0].replace("2025-03-26", "")  # no timestamp


@pytest.mark.slow
def test_check_is_clean_then_catches_a_hand_edit(tmp_path: Path, render_once: None) -> None:
    out = tmp_path / "generated"
    shutil.copytree(REPO_ROOT / "generated", out, ignore=shutil.ignore_patterns("__pycache__"))
    assert main(["check", "--out", str(out)]) == 0
    models = out / "mcp_bindings" / "v2025_11_25" / "models" / "_tool.py"
    models.write_text(models.read_text(encoding="utf-8").replace("class Tool(", "class Tool2(", 1), encoding="utf-8")
    (out / "mcp_bindings" / "v2024_11_05" / "extra.py").write_text("x = 1\n", encoding="utf-8")
    assert main(["check", "--out", str(out)]) == 1


@pytest.mark.slow
def test_check_prints_a_readable_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str], render_once: None) -> None:
    out = tmp_path / "generated"
    shutil.copytree(REPO_ROOT / "generated", out, ignore=shutil.ignore_patterns("__pycache__"))
    init = out / "mcp_bindings" / "v2026_07_28" / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    assert main(["check", "--out", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "mcp_bindings/v2026_07_28/__init__.py differs" in printed
    assert "-# edited" in printed


@pytest.mark.slow
def test_unpinned_schema_generates_a_new_importable_version(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    schema = shared_schema_dir() / "2026-07-28" / "schema.json"
    assert main(["generate", "--schema", str(schema), "--version", "draft", "--out", str(out)]) == 0
    package = out / "mcp_bindings" / package_name("draft")
    assert (package / "models" / "__init__.py").is_file()
    code = (
        "import mcp_bindings.v_draft as d\n"
        "from mcp_bindings.runtime import registry\n"
        "print(d.INFO.key, d.PROTOCOL_VERSION, d.CallToolRequest.__name__)\n"
        "print(*registry.versions())\n"
        "print(*registry.names())\n"
    )
    # `mcp_bindings` is a PEP 420 namespace package: the new version's src root, the runtime and the
    # pinned versions are three portions of it, none with an `__init__.py` of the namespace itself.
    roots = [out, REPO_ROOT / "runtime", REPO_ROOT / "generated"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(root) for root in roots)}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    imported, wire, names = result.stdout.splitlines()
    # Its schema is 2026-07-28's, byte for byte: that is its wire version.
    assert imported.split() == ["draft", "2026-07-28", "CallToolRequest"]
    # The registry finds version packages in every root of the namespace: the runtime speaks the wire
    # versions (draft's is a pinned one), and knows every version by name.
    assert wire.split() == PINNED_VERSIONS
    assert names.split() == [*PINNED_VERSIONS, "draft"]


def test_sync_verifies_sha256(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_BINDGEN_ROOT", str(tmp_path))
    (tmp_path / "schema").mkdir()
    shutil.copy(REPO_ROOT / "schema" / "manifest.json", tmp_path / "schema" / "manifest.json")
    source = tmp_path / "src"
    shutil.copytree(shared_schema_dir(), source, ignore=shutil.ignore_patterns("examples"))
    written = pins.sync_from_dir(source)
    assert len(written) == 5 and all(p.is_relative_to(tmp_path / "schema") for p in written)
    tampered = source / "2025-06-18" / "schema.json"
    tampered.write_bytes(tampered.read_bytes() + b"\n")
    expected = pins.load_pins()["2025-06-18"].sha256
    actual = hashlib.sha256(tampered.read_bytes()).hexdigest()
    with pytest.raises(BindgenError) as info:
        pins.sync_from_dir(source)
    message = str(info.value)
    assert str(tampered) in message and expected in message and actual in message


def test_generate_refuses_an_unsynced_schema(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_BINDGEN_ROOT", str(tmp_path))
    (tmp_path / "schema").mkdir()
    shutil.copy(REPO_ROOT / "schema" / "manifest.json", tmp_path / "schema" / "manifest.json")
    with pytest.raises(BindgenError, match="schema sync"):
        pinned_source("2025-11-25")


def test_upstream_sync_offline_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network is unreachable")

    monkeypatch.setattr(pins.urllib.request, "urlopen", refuse)
    with pytest.raises(BindgenError, match="offline"):
        pins.sync_from_upstream(["2025-11-25"])


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["schema", "--help"],
        ["schema", "sync", "--help"],
        ["schema", "pin", "--help"],
        ["generate", "--help"],
        ["check", "--help"],
    ],
)
def test_every_subcommand_has_help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(argv)
    assert info.value.code == 0
    assert "usage: mcp-bindgen" in capsys.readouterr().out
