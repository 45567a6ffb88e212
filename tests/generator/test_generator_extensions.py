"""Extension schemas as generated bindings: the `io.modelcontextprotocol/tasks` extension.

Its schema is pinned in schema/manifest.json (`extensions`) and synced like the core schemas. Where it
is not synced (a machine without the shared schema folder and without internet), the tests that need
it are skipped with the reason `mcp-bindgen check` prints: "not verified: schema not synced".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from mcp_bindgen import output, pipeline
from mcp_bindgen.errors import BindgenError
from mcp_bindgen.extension import extension_methods, policy_methods, spliced
from mcp_bindgen.ir import NO_DEFAULT
from mcp_bindgen.lower import lower
from mcp_bindgen.normalise import normalise
from mcp_bindgen.pins import ExtensionPin, load_extension_pins, read_extension, sync_extensions
from tests.support import REPO_ROOT

TASKS = "io.modelcontextprotocol/tasks"
INSTANCES = REPO_ROOT / "tests" / "fixtures" / "ext_tasks" / "instances.json"
GENERATED = REPO_ROOT / "generated"
NOT_SYNCED = "not verified: schema not synced"


def tasks_pin() -> ExtensionPin:
    return load_extension_pins()[TASKS]


def needs_schema() -> bytes:
    raw = read_extension(tasks_pin())
    if raw is None:
        pytest.skip(f"extension {TASKS}: {NOT_SYNCED} ({tasks_pin().local_path} is missing)")
    return raw


@pytest.fixture
def only_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    """`schema sync` sees the tasks pin only (the other extensions are pinned elsewhere)."""
    from mcp_bindgen import pins

    monkeypatch.setattr(pins, "load_extension_pins", lambda path=None: {TASKS: tasks_pin()})


@pytest.fixture(scope="module")
def rendered() -> pipeline.ExtensionRender:
    """The extension packages as `generate` renders them (once: it takes seconds)."""
    needs_schema()
    return pipeline.render_extensions()


# -- the pin ---------------------------------------------------------------------------------------


def test_the_tasks_extension_is_pinned_like_a_core_version() -> None:
    pin = tasks_pin()
    assert pin.repository == "modelcontextprotocol/ext-tasks"
    assert len(pin.commit) == 40 and len(pin.sha256) == 64
    assert pin.core_version == "2026-07-28"
    assert pin.url.startswith(f"https://raw.githubusercontent.com/modelcontextprotocol/ext-tasks/{pin.commit}/")
    # Synced next to the core schemas, which git ignores (never committed).
    assert pin.local_path.relative_to(REPO_ROOT / "schema").parts[0] == "extensions"


@pytest.mark.usefixtures("only_tasks")
def test_sync_takes_the_schema_from_the_folder_and_checks_its_sha256(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = needs_schema()
    source = tmp_path / "shared"
    target = tmp_path / "synced" / "schema.json"
    monkeypatch.setattr(ExtensionPin, "local_path", property(lambda self: target))
    monkeypatch.setattr(ExtensionPin, "sync_path", property(lambda self: target))
    (source / "extensions" / tasks_pin().folder).mkdir(parents=True)
    (source / "extensions" / tasks_pin().folder / "schema.json").write_bytes(raw)
    assert sync_extensions(source) == [f"synced {target}"]
    assert target.read_bytes() == raw
    (source / "extensions" / tasks_pin().folder / "schema.json").write_bytes(raw + b" ")
    with pytest.raises(BindgenError, match=r"sha256 mismatch .*\(extension io\.modelcontextprotocol/tasks\)"):
        sync_extensions(source)


@pytest.mark.usefixtures("only_tasks")
def test_sync_without_the_schema_says_so_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "synced" / "schema.json"
    monkeypatch.setattr(ExtensionPin, "local_path", property(lambda self: target))
    monkeypatch.setattr(ExtensionPin, "sync_path", property(lambda self: target))
    monkeypatch.setattr(ExtensionPin, "url", property(lambda self: "http://127.0.0.1:9/unreachable"))
    (line,) = sync_extensions(tmp_path / "empty")
    assert line.startswith(f"not synced: extension {TASKS}") and str(target) in line
    assert not target.exists()


# -- not synced: reported, not failed --------------------------------------------------------------


def test_unsynced_extension_is_reported_and_its_package_left_unchecked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ExtensionPin, "local_path", property(lambda self: tmp_path / "absent" / "schema.json"))
    monkeypatch.setattr(output, "render_pinned", lambda versions=None: {})  # the core versions are not at issue
    package = tmp_path / "src" / pipeline.extension_dir(TASKS)
    package.mkdir(parents=True)
    (package / "models.py").write_text("# committed earlier\n", encoding="utf-8")
    assert output.check_files(str(tmp_path / "src")) == []
    notes = output.extension_notes()
    assert [n for n in notes if n.startswith(f"extension {TASKS}: {NOT_SYNCED}")]
    assert len(notes) == len(load_extension_pins())  # every extension: none is synced there
    done = pipeline.render_extensions()
    assert done.files == {} and done.notes == notes


def test_check_covers_the_extension_package(
    rendered: pipeline.ExtensionRender, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(output, "render_pinned", lambda versions=None: {})
    monkeypatch.setattr(output, "render_extensions", lambda versions=None: rendered)
    root = tmp_path / "src"
    for rel, text in rendered.files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    assert output.check_files(str(root)) == []
    models = root / pipeline.extension_dir(TASKS) / "models.py"
    models.write_text(models.read_text(encoding="utf-8") + "\n# edited by hand\n", encoding="utf-8")
    (stray := models.with_name("extra.py")).write_text("", encoding="utf-8")
    problems = output.check_files(str(root))
    assert any(p.startswith(f"--- {pipeline.extension_dir(TASKS)}/models.py differs") for p in problems)
    assert any(str(stray.relative_to(root)) in p and "not generated" in p for p in problems)


def test_committed_extension_package_is_what_the_generator_makes(rendered: pipeline.ExtensionRender) -> None:
    assert rendered.notes == []
    for rel, text in rendered.files.items():
        path = GENERATED / rel
        assert path.is_file(), f"{rel} is not generated: run `mcp-bindgen generate`"
        assert path.read_text(encoding="utf-8") == text, f"{rel} is stale: run `mcp-bindgen generate`"
    on_disk = set()
    for identifier in load_extension_pins():
        package = GENERATED / pipeline.extension_dir(identifier)
        on_disk |= {p.relative_to(GENERATED).as_posix() for p in package.rglob("*") if "__pycache__" not in p.parts}
    assert on_disk == set(rendered.files)


# -- what is generated -----------------------------------------------------------------------------


def test_spliced_core_definitions_are_imported_not_regenerated() -> None:
    raw = needs_schema()
    from mcp_bindings.ext.io_modelcontextprotocol_tasks import models as ext
    from mcp_bindings.v2026_07_28 import models as core

    pin = tasks_pin()
    ir = lower(normalise(raw, TASKS, pin.sha256))
    core_ir = pipeline.build_ir(pipeline.pinned_source(pin.core_version))
    shared = spliced(ir, core_ir)
    # The schema carries 76 definitions; 56 are the core's, written out again, 20 its own.
    assert len(ir.upstream_names) == 76
    assert len(set(ir.upstream_names) - shared) == 20
    assert {"Error", "InputRequests", "RequestId", "Result", "JSONRPCRequest"} <= shared
    assert not {"Task", "CreateTaskResult", "GetTaskResult", "TaskStatusNotification"} & shared
    # The extension's models use the core classes themselves, and define none of the spliced ones.
    assert ext.Error is core.Error and ext.InputRequests is core.InputRequests
    source = (GENERATED / pipeline.extension_dir(TASKS) / "models.py").read_text(encoding="utf-8")
    assert "class Error(" not in source and "class CallToolResult(" not in source
    assert "class CreateTaskResult(" in source


def test_method_table_plugs_into_the_runtime() -> None:
    needs_schema()
    from mcp_bindings.ext.io_modelcontextprotocol_tasks import about, methods
    from mcp_bindings.ext.io_modelcontextprotocol_tasks import models as m
    from mcp_bindings.runtime.server.extensions import Extension

    assert (about.IDENTIFIER, about.CORE_VERSION) == (TASKS, "2026-07-28")
    assert isinstance(methods.EXTENSION, Extension) and methods.EXTENSION.identifier == TASKS
    assert sorted(methods.CLIENT_REQUESTS) == ["tasks/cancel", "tasks/get", "tasks/update"]
    assert sorted(methods.SERVER_NOTIFICATIONS) == ["notifications/tasks"]
    assert not methods.CLIENT_NOTIFICATIONS and not methods.SERVER_REQUESTS
    get = methods.EXTENSION["tasks/get"]
    assert (get.kind, get.sender, get.spec.handler) == ("request", "client", "get_task")
    assert (get.params, get.result) == (m.GetTaskRequestParams, m.GetTaskResult)
    status = methods.EXTENSION["notifications/tasks"]
    assert (status.kind, status.sender, status.spec.handler) == ("notification", "server", "on_task_status")


def test_a_server_registers_the_extension_with_the_handlers_it_implements() -> None:
    # The generated handler stubs exist for the type checker only: a method the server does not
    # implement is not bound (its request stays "method not found"), and the extension is advertised
    # under `extensions` at 2026-07-28.
    needs_schema()
    from mcp_bindings.ext.io_modelcontextprotocol_tasks import models as m
    from mcp_bindings.ext.io_modelcontextprotocol_tasks.methods import EXTENSION
    from mcp_bindings.ext.io_modelcontextprotocol_tasks.server import ServerHandlers
    from mcp_bindings.runtime.server.extensions import methods_of, server_capabilities
    from mcp_bindings.v2026_07_28.server import Server

    class TaskServer(Server, ServerHandlers):
        async def update_task(self, params: m.UpdateTaskRequestParams, ctx: Any) -> m.UpdateTaskResult:
            return m.UpdateTaskResult()

    server = TaskServer()
    server.use_extension(EXTENSION, handlers=server)
    assert sorted(methods_of(server).handlers) == ["tasks/update"]
    assert server_capabilities(server, server.protocol, {}) == {"extensions": {TASKS: {}}}


def test_direction_policy_matches_the_schema() -> None:
    # Stale either way fails: an entry for a method the schema lacks, or a method with no entry.
    raw = needs_schema()
    pin = tasks_pin()
    ir = lower(normalise(raw, TASKS, pin.sha256))
    core_ir = pipeline.build_ir(pipeline.pinned_source(pin.core_version))
    own = set(ir.definitions) - spliced(ir, core_ir)
    assert {m.method for m in extension_methods(TASKS, ir, own)} == set(policy_methods(TASKS))


def _instances(kind: str) -> list[dict[str, Any]]:
    return json.loads(INSTANCES.read_text(encoding="utf-8"))[kind]


def schema_accepts(raw: bytes, type_name: str, instance: Any) -> bool:
    """The upstream schema's own verdict on an instance (jsonschema, draft 2020-12)."""
    import jsonschema

    defs = json.loads(raw)["$defs"]
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs, "$ref": f"#/$defs/{type_name}"}
    return jsonschema.Draft202012Validator(schema).is_valid(instance)


@pytest.mark.parametrize("case", _instances("valid"), ids=lambda c: c["type"])
def test_instances_from_the_spec_validate(case: dict[str, Any]) -> None:
    raw = needs_schema()
    assert schema_accepts(raw, case["type"], case["instance"]), "the fixture itself is wrong"
    from mcp_bindings.ext.io_modelcontextprotocol_tasks import models as m

    adapter: TypeAdapter[Any] = TypeAdapter(getattr(m, case["type"]))
    value = adapter.validate_json(json.dumps(case["instance"]))
    assert adapter.dump_python(value, mode="json", by_alias=True, exclude_unset=True) == case["instance"]


@pytest.mark.parametrize("case", _instances("invalid"), ids=lambda c: c["why"])
def test_instances_the_spec_forbids_are_refused(case: dict[str, Any]) -> None:
    raw = needs_schema()
    assert not schema_accepts(raw, case["type"], case["instance"]), "the fixture itself is wrong"
    from mcp_bindings.ext.io_modelcontextprotocol_tasks import models as m

    with pytest.raises(ValidationError):
        TypeAdapter(getattr(m, case["type"])).validate_json(json.dumps(case["instance"]))


def test_get_task_result_is_parsed_by_status() -> None:
    needs_schema()
    from mcp_bindings.ext.io_modelcontextprotocol_tasks import models as m

    case = next(c for c in _instances("valid") if c["instance"].get("status") == "input_required")
    value = TypeAdapter(m.GetTaskResult).validate_python(case["instance"])
    assert isinstance(value, m.GetTaskResultInputRequired)
    assert value.input_requests["who"].method == "elicitation/create"  # the core 2026-07-28 type


# -- allOf lowering: what cannot be merged is one clear sentence -----------------------------------


def _lower(defs: dict[str, Any]) -> None:
    raw = json.dumps({"$defs": defs}).encode()
    lower(normalise(raw, "fixture", "0" * 64, patches=[]))


def test_all_of_with_a_scalar_part_is_refused_with_its_location() -> None:
    with pytest.raises(BindgenError, match=r"allOf part /\$defs/A/allOf/1 is neither an object nor an anyOf"):
        _lower({"A": {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"type": "string"}]}})


def test_all_of_parts_that_disagree_are_refused() -> None:
    parts = [
        {"type": "object", "properties": {"a": {"type": "string"}}},
        {"type": "object", "properties": {"a": {"type": "integer"}}},
    ]
    with pytest.raises(BindgenError, match=r"allOf parts disagree on /\$defs/A: a: type differ"):
        _lower({"A": {"allOf": parts}})


def test_policy_default_never_contradicts_the_schema() -> None:
    # `resultType` defaults to "complete" on core results; the extension's CreateTaskResult fixes
    # "task", and a task's nullable `ttlMs` has no default (null means unlimited).
    raw = needs_schema()
    ir = lower(normalise(raw, TASKS, tasks_pin().sha256))
    create = ir.object("CreateTaskResult")
    result_type, ttl = create.field("resultType"), create.field("ttlMs")
    assert result_type is not None and ttl is not None
    assert result_type.required and result_type.default is NO_DEFAULT
    assert ttl.required and ttl.default is NO_DEFAULT
    update = ir.object("UpdateTaskResult").field("resultType")  # "complete" agrees with its constant
    assert update is not None and update.default == "complete"


# -- the policy review of the extensions' rules (extension_methods.json) ---------------------------


def test_every_extension_rule_attaches_to_its_pinned_schema(rendered: pipeline.ExtensionRender) -> None:
    from mcp_bindgen.review import extension_review, extension_rules

    methods = rendered.methods
    assert set(methods) == set(load_extension_pins())  # the tasks, MCP Apps and Skills packages
    ruled = {identifier for _rule, identifier, _method in extension_rules()}
    assert ruled == set(load_extension_pins())
    if any(found is None for found in methods.values()):
        pytest.skip(f"an extension schema is {NOT_SYNCED}: its rules are not judged")
    assert extension_review(methods) == []


def test_a_stale_extension_rule_is_named_by_the_review(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule for a method the extension's schema no longer defines, or for an extension no longer
    pinned, is stale; an extension whose schema was not read is not judged."""
    from types import MappingProxyType

    from mcp_bindgen import review
    from mcp_bindgen.policy import Direction, ExtensionPolicy, extension_policies

    gone: Direction = "client_to_server"

    skills = "io.modelcontextprotocol/skills"
    real = extension_policies()
    grown: dict[str, Direction] = {**real[skills].directions, "skills/search": "client_to_server"}
    policies = {
        **real,
        skills: ExtensionPolicy(MappingProxyType(grown), (), real[skills].bridge),
        "example.com/gone": ExtensionPolicy(MappingProxyType({"gone/ping": gone}), ()),
    }
    monkeypatch.setattr(review, "extension_policies", lambda: policies)
    defined = {identifier: frozenset(p.directions) for identifier, p in real.items()}
    stale = {item.subject: item.text for item in review.extension_review(defined)}
    assert stale == {
        f"extension_methods.json {skills} skills/search": f"the {skills} schema defines no skills/search "
        "(stale: remove or update it)",
        "extension_methods.json example.com/gone gone/ping": "example.com/gone is not a pinned extension "
        "(stale: remove it)",
    }
    unread = {**defined, skills: None}
    assert [i.subject for i in review.extension_review(unread)] == ["extension_methods.json example.com/gone gone/ping"]
    text = review.review([], extensions=defined).render()
    assert "rules that found nothing to attach to" in text and "skills/search" in text
