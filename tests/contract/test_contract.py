"""`mcp-bindgen client` / `lock` / `lint` without third-party servers: naming, the structural
compatibility rules, the lint rule data, rendering a saved surface, and bad input."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from pydantic import ValidationError

from mcp_bindgen.cli import main
from mcp_bindgen.compat import compare_schemas, compare_surfaces
from mcp_bindgen.errors import BindgenError
from mcp_bindings.live.contract.lint import CHECKS, RULES_FILE, lint_surface, load_rules
from mcp_bindings.live.contract.naming import assign, identifier
from mcp_bindings.live.contract.render import client_view, render_client
from mcp_bindings.live.contract.surface import known_versions
from tests.peers.harness import PEERS
from tests.support import announced_url

OBJ: dict[str, Any] = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "string", "enum": ["x", "y"]}},
    "required": ["a"],
}


def _surface(*tools: dict[str, Any]) -> dict[str, Any]:
    return {
        "protocolVersion": "2025-11-25",
        "serverInfo": {"name": "demo"},
        "capabilities": {"tools": {}},
        "tools": list(tools),
        "prompts": [{"name": "hi", "arguments": [{"name": "who", "required": True}]}],
        "resources": [],
        "resourceTemplates": [{"name": "item", "uriTemplate": "demo://items/{id}"}],
    }


def _tool(name: str = "add", schema: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": "d", "inputSchema": schema or OBJ, **extra}


def _with(**changes: Any) -> dict[str, Any]:
    schema = json.loads(json.dumps(OBJ))
    for key, value in changes.items():
        target, _, field = key.partition("__")
        if field:
            schema["properties"][target][field] = value
        elif value is None:
            schema.pop(target)
        else:
            schema[target] = value
    return schema


def test_identifiers_are_stable_and_valid() -> None:
    assert identifier("get-user.v2", "tool") == "get_user_v2"
    assert identifier("getUser", "tool") == "get_user"
    assert identifier("class", "tool") == "class_"
    assert identifier("2fa", "tool") == "tool_2fa"
    assert identifier("...", "tool") == "tool"


def test_collisions_are_resolved_in_name_order_and_reported() -> None:
    ids, collisions = assign("tool", ["a_b", "a-b", "c"], "tool", set())
    assert ids == {"a-b": "a_b", "a_b": "a_b_2", "c": "c"}
    assert [c.names for c in collisions] == [("a-b", "a_b")]
    assert "`a_b` -> `a_b_2`" in collisions[0].message()


@pytest.mark.parametrize(
    ("new", "kind"),
    [
        (_with(required=["a", "b"]), "breaking"),  # new required argument
        (_with(required=None), "additive"),  # no longer required
        (_with(a__type="string"), "breaking"),  # type changed
        (_with(a__type=["integer", "string"]), "additive"),  # type widened
        (_with(b__enum=["x"]), "breaking"),  # enum narrowed
        (_with(b__enum=["x", "y", "z"]), "additive"),  # enum widened
        (_with(a__minimum=1), "breaking"),  # bound added
        (_with(additionalProperties=False), "breaking"),  # closed
    ],
)
def test_input_schema_rules(new: dict[str, Any], kind: str) -> None:
    changes = compare_schemas(OBJ, new, "t", "input")
    assert changes and {c.kind for c in changes} == {kind}, changes


def test_output_schema_rules_run_the_other_way() -> None:
    assert {c.kind for c in compare_schemas(OBJ, _with(b__enum=["x", "y", "z"]), "t", "output")} == {"breaking"}
    assert {c.kind for c in compare_schemas(OBJ, _with(b__enum=["x"]), "t", "output")} == {"additive"}
    assert {c.kind for c in compare_schemas(OBJ, _with(required=None), "t", "output")} == {"breaking"}


def test_refs_are_compared_structurally_not_as_text() -> None:
    old = {"type": "object", "properties": {"p": {"$ref": "#/$defs/P"}}, "$defs": {"P": {"type": "integer"}}}
    new = {"type": "object", "properties": {"p": {"$ref": "#/$defs/Q"}}, "$defs": {"Q": {"type": "integer"}}}
    assert compare_schemas(old, new, "t", "input") == []


def test_surface_changes_tools_prompts_templates() -> None:
    old = _surface(_tool("add"), _tool("gone"))
    new = _surface(_tool("add", description="other"), _tool("new"))
    new["prompts"][0]["arguments"].append({"name": "extra", "required": True})
    new["resourceTemplates"] = []
    changes = compare_surfaces(old, new, "v")
    assert {c.version for c in changes} == {"v"}
    got = {(c.where, c.what, c.kind) for c in changes}
    assert ("tool `gone`", "tool removed", "breaking") in got
    assert ("tool `new`", "tool added", "additive") in got
    assert ("tool `add`", "description changed", "additive") in got
    assert ("prompt `hi` argument `extra`", "required argument added", "breaking") in got
    assert ("resource template `demo://items/{id}`", "resource template removed", "breaking") in got
    assert compare_surfaces(old, old, "v") == []


def test_lint_rules_are_data_and_not_stale() -> None:
    rules = load_rules()
    assert {r.check for r in rules} == set(CHECKS), "a check without a rule or a rule without a check"
    assert all(r.reason.strip() for r in rules)
    data = json.loads(RULES_FILE.read_text())
    assert len({r["id"] for r in data["rules"]}) == len(data["rules"])


def test_lint_findings() -> None:
    bad = _tool("a.b", {"oneOf": [{"type": "object"}], "$defs": {}}, description="")
    found = {(f.tool, f.rule) for f in lint_surface(_surface(bad, _tool("fine")))}
    assert found == {
        ("a.b", "input-type-object"),
        ("a.b", "no-top-level-combinator"),
        ("a.b", "no-refs"),
        ("a.b", "tool-name-charset"),
        ("a.b", "tool-description"),
    }


def test_render_from_surface_names_and_types() -> None:
    out = {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}
    module = render_client(_surface(_tool("get-sum.v2", outputSchema=out), _tool("get_sum_v2")))
    source = module.source
    assert 'async def get_sum_v2(self, *, a: int, b: Literal["x", "y"] | None = None) -> GetSumV2Output:' in source
    assert "async def get_sum_v2_2(" in source and "-> m.CallToolResult" in source
    assert "async def prompt_hi(self, *, who: str) -> m.GetPromptResult:" in source
    assert "async def read_item(self, *, id: str) -> m.ReadResourceResult:" in source
    assert [c.names for c in module.collisions] == [("get-sum.v2", "get_sum_v2")]
    compile(source, "client.py", "exec")


def test_bad_input_messages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(BindgenError, match="lists no tools"):
        render_client(_surface())
    with pytest.raises(BindgenError, match=r"tool `add`: its inputSchema is not valid JSON Schema at properties/a"):
        render_client(_surface(_tool("add", {"type": "object", "properties": {"a": {"type": 5}}})))
    surface_file = tmp_path / "surface.json"
    surface_file.write_text(json.dumps(_surface()))
    out = tmp_path / "client.py"
    assert main(["client", "-o", str(out), "--from-file", str(surface_file)]) == 1
    assert "lists no tools" in capsys.readouterr().err and not out.exists()
    missing = [sys.executable, "-c", "import sys; sys.exit(3)"]
    assert main(["client", "-o", str(out), "--from", *missing]) == 1
    err = capsys.readouterr().err
    assert err.startswith("mcp-bindgen: error: could not read the surface of") and "Traceback" not in err
    assert not out.exists() and list(tmp_path.iterdir()) == [surface_file]


def test_cli_lint_from_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    surface_file = tmp_path / "surface.json"
    surface_file.write_text(json.dumps(_surface(_tool("fine"))))
    assert main(["lint", "--from-file", str(surface_file), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["findings"] == []


# -- live: a server on this runtime (tests/peers/contract_server.py), stdio and Streamable HTTP --------

RUNTIME_SERVER = [sys.executable, str(PEERS / "contract_server.py")]
MODE = ["--env", "CONTRACT_MODE"]  # the server's mode, set in ours (a server gets only what --env passes)


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"contract_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the postponed annotations in it
    spec.loader.exec_module(module)
    return module


def test_live_client_over_stdio_reads_every_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "users.py"
    assert main(["client", "-o", str(out), "--from", *RUNTIME_SERVER]) == 0
    assert capsys.readouterr().err == ""
    users = _load(out)

    async def run() -> list[Any]:
        async with users.connect(RUNTIME_SERVER) as server:
            got = [await server.get_user_v2(id=7, verbose=True), await server.ping()]
            with pytest.raises(users.ToolError, match="no user 0") as failed:
                await server.get_user_v2(id=0)
            assert failed.value.result.is_error
            with pytest.raises(ValidationError):
                await server.get_user_v2(id="seven")  # checked by the input model, nothing sent
            return got

    user, pong = anyio.run(run)
    assert isinstance(user, users.GetUserV2Output) and (user.id, user.name) == (7, "Ada!")
    assert pong.content[0].text == "pong"
    assert users.ContractTestClient.get_user_v2.__doc__.startswith("The get-user.v2 tool.")


def test_live_client_over_http(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with log.open("wb") as stderr:  # port 0: the server binds it and says where it listens
        process = subprocess.Popen([*RUNTIME_SERVER, "--http", "0"], stderr=stderr)
    try:
        url = announced_url(log, process)
        out = tmp_path / "users_http.py"
        assert main(["client", "-o", str(out), "--class-name", "Users", "--from", url]) == 0
        users = _load(out)

        async def run() -> Any:
            async with users.connect_url(url) as server:
                return await server.get_user_v2(id=3)

        assert anyio.run(run).name == "Ada"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("bad_schema", "tool `broken`: its inputSchema is not valid JSON Schema at properties/x/type"),
        ("no_tools", "the server lists no tools"),
    ],
)
def test_live_bad_input_writes_nothing(
    mode: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CONTRACT_MODE", mode)
    out = tmp_path / "client.py"
    assert main(["client", "-o", str(out), *MODE, "--from", *RUNTIME_SERVER]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"mcp-bindgen: error: {message}") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_live_collision_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CONTRACT_MODE", "collide")
    out = tmp_path / "client.py"
    assert main(["client", "-o", str(out), *MODE, "--from", *RUNTIME_SERVER]) == 0
    assert "tool names `a-b`, `a_b` all map to `a_b`: `a-b` keeps it, `a_b` -> `a_b_2`" in capsys.readouterr().err
    source = out.read_text()
    assert "async def a_b(self) -> m.CallToolResult:" in source and "async def a_b_2(self)" in source
    strict = tmp_path / "strict.py"
    assert main(["client", "-o", str(strict), "--strict-names", *MODE, "--from", *RUNTIME_SERVER]) == 1
    assert "drop --strict-names" in capsys.readouterr().err and not strict.exists()


def test_live_lock_every_version_and_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = tmp_path / "mcp-lock.json"
    assert main(["lock", "-o", str(lock), *MODE, "--from", *RUNTIME_SERVER]) == 0
    data = json.loads(lock.read_text())
    assert list(data["versions"]) == known_versions()
    two = ["--protocol", "2025-11-25", "--protocol", "2026-07-28"]  # one per wire era; every version: slower
    assert main(["lock", "--check", "-o", str(lock), *two, *MODE, "--from", *RUNTIME_SERVER]) == 0
    assert "No changes" in capsys.readouterr().out
    monkeypatch.setenv("CONTRACT_MODE", "collide")
    assert main(["lock", "--check", "-o", str(lock), "--protocol", "2025-11-25", *MODE, "--from", *RUNTIME_SERVER]) == 1
    report = capsys.readouterr().out
    assert "| tool `get-user.v2` | tool removed | 2025-11-25 |" in report
    assert "| tool `a-b` | tool added | 2025-11-25 |" in report
    # The same change at every version checked is one row, not one per version.
    assert main(["lock", "--check", "-o", str(lock), *two, *MODE, "--from", *RUNTIME_SERVER]) == 1
    report = capsys.readouterr().out
    assert report.count("tool `get-user.v2`") == 1 and "| tool `get-user.v2` | tool removed | all 2 |" in report


def test_parameters_may_shadow_the_method_locals(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {n: {"type": "integer"} for n in ("values", "arguments", "result", "uri")}
        | {"camelName": {"type": "string", "default": "x"}},
        "required": ["values", "arguments", "result", "uri"],
    }
    out = tmp_path / "shadow.py"
    out.write_text(render_client(_surface(_tool("shadow", schema))).source)
    module = _load(out)
    from mcp_bindings.v2025_11_25 import models as m

    sent: list[tuple[str, Any]] = []

    class Fake:
        async def call_tool(self, *, name: str, arguments: dict[str, Any]) -> m.CallToolResult:
            sent.append((name, arguments))
            return m.CallToolResult(content=[])

    client = module.DemoClient(Fake())
    anyio.run(lambda: client.shadow(values=1, arguments=2, result=3, uri=4, camel_name="y"))
    assert sent == [("shadow", {"values": 1, "arguments": 2, "result": 3, "uri": 4, "camelName": "y"})]


def test_a_version_without_structured_content_returns_the_result() -> None:
    out = {"type": "object", "properties": {"sum": {"type": "integer"}}}
    surface = _surface(_tool("add", outputSchema=out)) | {"protocolVersion": "2024-11-05"}
    module = render_client(surface)
    assert 'async def add(self, *, a: int, b: Literal["x", "y"] | None = None) -> m.CallToolResult:' in module.source
    assert "from mcp_bindings.v2024_11_05.client import Client" in module.source
    assert module.notes == ["tool `add`: 2024-11-05 has no structuredContent; it returns CallToolResult"]
    with pytest.raises(BindgenError, match="version '1999-01-01' has no generated bindings: pass --protocol"):
        render_client(_surface(_tool("add")) | {"protocolVersion": "1999-01-01"})


def test_a_free_form_input_takes_a_dict() -> None:
    free = {"type": "object", "additionalProperties": {"type": "integer"}}
    module = render_client(_surface(_tool("bag", free), _tool("none", {"type": "object"})))
    assert "async def bag(self, arguments: dict[str, Any] | None = None) -> m.CallToolResult:" in module.source
    assert "async def none(self) -> m.CallToolResult:" in module.source
    assert module.notes == [
        "tool `bag`: its inputSchema is no object model with properties; the method takes `arguments` as a dict"
    ]


def test_the_client_module_is_a_view_model_the_template_only_loops_over() -> None:
    free = {"type": "object", "additionalProperties": {"type": "integer"}}
    plan = client_view(_surface(_tool("add"), _tool("bag", free)), "Demo")
    view = plan.view
    assert (view.class_name, view.protocol_version_lit, view.server_name_lit) == ("Demo", "'2025-11-25'", "'demo'")
    assert [(t.method, t.object_input, t.free_form) for t in view.tools] == [("add", True, False), ("bag", False, True)]
    assert [(p.name, p.required) for p in view.tools[0].params] == [("a", True), ("b", False)]
    assert [(p.name, p.wire_lit, p.required) for p in view.prompts[0].params] == [("who", "'who'", True)]
    assert [(t.method, t.uri_lit) for t in view.templates] == [("read_item", "'demo://items/{id}'")]
    assert "from mcp_bindings.runtime.app.uri_template import Template" in view.imports
    assert plan.notes == [
        "tool `bag`: its inputSchema is no object model with properties; the method takes `arguments` as a dict"
    ]


def test_a_server_that_fails_is_reported_once_with_its_stderr(tmp_path: Path) -> None:
    """`--from` a server that exits before the handshake: its stderr appears once, in the one-line
    error (it used to be echoed as well, so every line came twice)."""
    failing = [sys.executable, "-c", "import sys; sys.stderr.write('BOOM' + '-LINE\\n'); sys.exit(3)"]
    run = subprocess.run(
        [str(Path(sys.executable).parent / "mcp-bindgen"), "lock", "-o", str(tmp_path / "l.json"), "--from", *failing],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1
    assert run.stderr.count("BOOM-LINE") == 1, run.stderr
    assert "exited with code 3 before answering the handshake; its stderr ends with:" in run.stderr
