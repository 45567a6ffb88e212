"""The generated protocol surface: method tables against an oracle, capability policy, stubs."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

import mcp_bindings
from mcp_bindgen.pipeline import build_ir, pinned_source, render_version
from mcp_bindgen.surface import ROLE_UNIONS, derive_surface, gate_rules
from mcp_bindings.runtime.errors import StubDefinitionError

from .conftest import PINNED_VERSIONS, REPO_ROOT

TABLES = {
    "ClientRequest": "CLIENT_REQUESTS",
    "ServerRequest": "SERVER_REQUESTS",
    "ClientNotification": "CLIENT_NOTIFICATIONS",
    "ServerNotification": "SERVER_NOTIFICATIONS",
}


def oracle_methods(version: str, role: str) -> set[str]:
    """Method names of a role union, read straight from the raw schema.json (no IR involved)."""
    raw = json.loads((REPO_ROOT / "schema" / version / "schema.json").read_text(encoding="utf-8"))
    defs = raw.get("$defs") or raw["definitions"]
    union = defs.get(role)
    if union is None:
        return set()
    members = union.get("anyOf") or [union]
    methods = set()
    for member in members:
        target = defs[member["$ref"].rsplit("/", 1)[-1]] if "$ref" in member else member
        methods.add(target["properties"]["method"]["const"])
    return methods


def methods_module(version: str) -> Any:
    return importlib.import_module(f"mcp_bindings.{mcp_bindings.VERSIONS[version]}.methods")


@pytest.mark.parametrize("version", PINNED_VERSIONS)
@pytest.mark.parametrize("role", list(TABLES))
def test_tables_equal_the_schema_role_unions(version: str, role: str) -> None:
    table = getattr(methods_module(version), TABLES[role])
    assert set(table) == oracle_methods(version, role)


def test_version_specific_landmarks() -> None:
    v2024 = methods_module("2024-11-05")
    assert "elicitation/create" not in v2024.SERVER_REQUESTS
    assert [v for v in PINNED_VERSIONS if methods_module(v).BATCHES] == ["2025-03-26"]
    v2026 = methods_module("2026-07-28")
    assert {"server/discover", "subscriptions/listen"} <= set(v2026.CLIENT_REQUESTS)
    assert not {"initialize", "ping", "logging/setLevel"} & set(v2026.CLIENT_REQUESTS)
    assert v2026.SERVER_REQUESTS == {}
    assert set(v2026.INPUT_REQUESTS) == {"sampling/createMessage", "elicitation/create", "roots/list"}
    assert v2026.STATELESS and not methods_module("2025-11-25").STATELESS


def test_specs_carry_types_and_gates() -> None:
    v2025 = methods_module("2025-11-25")
    models = importlib.import_module("mcp_bindings.v2025_11_25")
    call = v2025.CLIENT_REQUESTS["tools/call"]
    assert (call.message, call.params, call.result) == (models.CallToolRequest, models.CallToolRequestParams, models.CallToolResult)
    assert call.params_required and str(call.gate) == "server capability `tools`"
    assert str(v2025.CLIENT_REQUESTS["resources/subscribe"].gate) == "server capability `resources.subscribe`"
    assert str(v2025.SERVER_NOTIFICATIONS["notifications/tools/list_changed"].gate) == "server capability `tools.listChanged`"
    assert v2025.CLIENT_REQUESTS["ping"].gate is None and not v2025.CLIENT_REQUESTS["ping"].params_required
    sampling = v2025.SERVER_REQUESTS["sampling/createMessage"]
    assert [str(c) for c in sampling.needed_capabilities({"tools": []})] == [
        "client capability `sampling`", "client capability `sampling.tools`"]
    elicit = v2025.SERVER_REQUESTS["elicitation/create"]
    assert [str(c) for c in elicit.needed_capabilities({"mode": "url"})][-1] == "client capability `elicitation.url`"
    v2026 = methods_module("2026-07-28")
    assert v2026.CLIENT_REQUESTS["tools/call"].input_required
    assert not v2026.CLIENT_REQUESTS["tools/list"].input_required


def test_error_codes_per_version() -> None:
    assert methods_module("2024-11-05").RESOURCE_NOT_FOUND == -32002
    v2026 = methods_module("2026-07-28")
    assert (v2026.HEADER_MISMATCH, v2026.MISSING_REQUIRED_CLIENT_CAPABILITY, v2026.UNSUPPORTED_PROTOCOL_VERSION) == (
        -32020, -32021, -32022)
    assert not hasattr(v2026, "RESOURCE_NOT_FOUND")
    assert methods_module("2025-11-25").ERROR_CODES["METHOD_NOT_FOUND"] == -32601


def test_fast_parser_is_keyed_on_method() -> None:
    v2024 = methods_module("2024-11-05")
    parsed = v2024.client_message_adapter().validate_json(
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}'
    )
    assert type(parsed).__name__ == "CallToolRequest" and parsed.params.name == "echo"


# -- capability policy ------------------------------------------------------------------------


def _all_methods() -> list[tuple[str, str, str]]:
    out = []
    for version in PINNED_VERSIONS:
        surface = derive_surface(build_ir(pinned_source(version)))
        out += [(version, m.direction, m.method) for m in surface.methods]
        out += [(version, "server_to_client", i.method) for i in surface.input_requests]
    return out


def test_every_method_is_gated_or_explicitly_ungated() -> None:
    for version, direction, method in _all_methods():
        assert any(rule.matches(method, direction, version) for rule in gate_rules()), (version, direction, method)


def test_no_policy_rule_is_stale() -> None:
    methods = _all_methods()
    for rule in gate_rules():
        assert any(rule.matches(m, d, v) for v, d, m in methods), f"rule for {rule.method} matches nothing"


def test_every_gate_names_a_capability_of_its_version() -> None:
    for version in PINNED_VERSIONS:
        surface = derive_surface(build_ir(pinned_source(version)))
        for spec in surface.methods:
            gates = ([spec.gate] if spec.gate else []) + [pg.gate for pg in spec.param_gates]
            for gate in gates:
                assert ".".join(gate.path) in surface.capability_paths[gate.side], (version, spec.method, str(gate))


def test_a_rule_naming_an_unknown_method_is_reported(tmp_path: Path) -> None:
    bogus = tmp_path / "capabilities.json"
    bogus.write_text(json.dumps({"rules": [{"method": "tools/frobnicate", "gate": None, "reason": "x"}]}))
    rules = gate_rules(bogus)
    assert not any(rule.matches(m, d, v) for rule in rules for v, d, m in _all_methods())


def test_role_unions_cover_the_four_tables() -> None:
    assert set(ROLE_UNIONS.values()) == set(TABLES)


# -- stubs --------------------------------------------------------------------------------------


def test_server_capabilities_follow_overridden_handlers() -> None:
    from mcp_bindings.v2025_11_25 import server

    class Tools(server.Server):
        async def list_tools(self, params: Any, ctx: Any) -> Any: ...
        async def call_tool(self, params: Any, ctx: Any) -> Any: ...

    assert Tools().capabilities == {"tools": {}}

    class ToolsWithListChanged(Tools):
        declared_capabilities = {"tools": {"listChanged": True}}

    assert ToolsWithListChanged().capabilities == {"tools": {"listChanged": True}}


def test_mismatched_server_is_refused_naming_both_sides() -> None:
    from mcp_bindings.v2025_11_25 import server

    class DeclaresToolsOnly(server.Server):
        declared_capabilities = {"tools": {}}
        async def list_tools(self, params: Any, ctx: Any) -> Any: ...

    with pytest.raises(StubDefinitionError, match=r"declares `tools` but does not implement call_tool \(tools/call\)"):
        DeclaresToolsOnly()

    class SubscribesUndeclared(server.Server):
        async def list_resources(self, params: Any, ctx: Any) -> Any: ...
        async def read_resource(self, params: Any, ctx: Any) -> Any: ...
        async def subscribe_resource(self, params: Any, ctx: Any) -> Any: ...
        async def unsubscribe_resource(self, params: Any, ctx: Any) -> Any: ...

    with pytest.raises(StubDefinitionError, match=r"overrides subscribe_resource, unsubscribe_resource .*`resources.subscribe`"):
        SubscribesUndeclared()

    class UnknownCapability(server.Server):
        declared_capabilities = {"telepathy": {}}

    with pytest.raises(StubDefinitionError, match="telepathy"):
        UnknownCapability()


def test_client_handlers_decide_client_capabilities() -> None:
    from mcp_bindings.v2025_11_25 import client

    class Handlers(client.ClientHandlers):
        declared_capabilities = {"roots": {"listChanged": True}}
        async def create_message(self, params: Any, ctx: Any) -> Any: ...
        async def list_roots(self, params: Any, ctx: Any) -> Any: ...

    assert Handlers().capabilities == {"roots": {"listChanged": True}, "sampling": {}}


GOLDEN_STUBS = REPO_ROOT / "tests" / "golden" / "stubs"


@pytest.mark.parametrize("module", ["methods.py", "server.py", "client.py"])
def test_rendered_stubs_match_golden(module: str) -> None:
    import os

    files = render_version(pinned_source("2025-06-18"))
    text = files[f"mcp_bindings/v2025_06_18/{module}"]
    golden = GOLDEN_STUBS / f"2025-06-18.{module}.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert golden.read_text(encoding="utf-8") == text


def test_other_surface_policies_name_real_things() -> None:
    from mcp_bindgen.render.surface_modules import builtin_methods
    from mcp_bindgen.surface import empty_result_methods, handler_renames, policy_error_codes

    methods = {m for _, _, m in _all_methods()}
    names: set[str] = set()
    for version in PINNED_VERSIONS:
        names |= set(build_ir(pinned_source(version)).upstream_names)
    assert set(empty_result_methods()) <= methods
    assert set(builtin_methods()) <= methods
    assert set(handler_renames()) <= names
    for name, code, versions, _ in policy_error_codes():
        for version in versions:
            assert getattr(methods_module(version), name) == code


def test_tools_only_server_advertises_exactly_tools_and_refuses_prompts() -> None:
    """On the wire: initialize advertises {"tools": {}}; prompts/list gets -32601 from the server; the
    typed client refuses prompts/list before sending anything."""
    import anyio

    from mcp_bindings.runtime.errors import CapabilityError, McpError
    from mcp_bindings.runtime.memory import connect_in_memory
    from mcp_bindings.v2025_11_25 import client, server
    from mcp_bindings.v2025_11_25 import models as m

    class Tools(server.Server):
        async def list_tools(self, params: Any, ctx: Any) -> Any:
            return m.ListToolsResult(tools=[])

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            return m.CallToolResult(content=[])

    async def scenario() -> None:
        with anyio.fail_after(10):
            async with connect_in_memory(Tools(), client.Client) as typed:
                assert typed.server_capabilities == {"tools": {}}
                with pytest.raises(CapabilityError, match="prompts"):
                    await typed.list_prompts()
                runtime = typed.session
                with pytest.raises(McpError) as info:
                    await runtime.session.request("prompts/list", None)
                assert info.value.code == -32601

    anyio.run(scenario)
