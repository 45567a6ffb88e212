"""The generated protocol surface: method tables against an oracle, capability policy, stubs."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import MemberDescriptorType
from typing import Any

import pytest

from mcp_bindgen.pipeline import build_ir, pinned_source
from mcp_bindgen.surface import ROLE_UNIONS, conventional_gate, derive_surface, gate_rules
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc.errors import StubDefinitionError
from tests.support import REPO_ROOT
from tests.support.pipeline import PINNED_VERSIONS

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
    return importlib.import_module(f"mcp_bindings.{registry.info(version).package}.methods")


@pytest.mark.parametrize("version", PINNED_VERSIONS)
@pytest.mark.parametrize("role", list(TABLES))
def test_tables_equal_the_schema_role_unions(version: str, role: str) -> None:
    table = getattr(methods_module(version), TABLES[role])
    assert set(table) == oracle_methods(version, role)


def test_version_specific_landmarks() -> None:
    v2024 = methods_module("2024-11-05")
    assert "elicitation/create" not in v2024.SERVER_REQUESTS
    assert [v for v in PINNED_VERSIONS if registry.protocol(v).info.batches] == ["2025-03-26"]
    v2026 = methods_module("2026-07-28")
    assert {"server/discover", "subscriptions/listen"} <= set(v2026.CLIENT_REQUESTS)
    assert not {"initialize", "ping", "logging/setLevel"} & set(v2026.CLIENT_REQUESTS)
    assert v2026.SERVER_REQUESTS == {}
    assert set(v2026.INPUT_REQUESTS) == {"sampling/createMessage", "elicitation/create", "roots/list"}
    assert v2026.PROTOCOL.stateless and not methods_module("2025-11-25").PROTOCOL.stateless


def test_specs_carry_types_and_gates() -> None:
    v2025 = methods_module("2025-11-25")
    models = importlib.import_module("mcp_bindings.v2025_11_25")
    call = v2025.CLIENT_REQUESTS["tools/call"]
    assert (call.message, call.params, call.result) == (
        models.CallToolRequest,
        models.CallToolRequestParams,
        models.CallToolResult,
    )
    assert call.params_required and str(call.gate) == "server capability `tools`"
    assert str(v2025.CLIENT_REQUESTS["resources/subscribe"].gate) == "server capability `resources.subscribe`"
    assert (
        str(v2025.SERVER_NOTIFICATIONS["notifications/tools/list_changed"].gate)
        == "server capability `tools.listChanged`"
    )
    assert v2025.CLIENT_REQUESTS["ping"].gate is None and not v2025.CLIENT_REQUESTS["ping"].params_required
    sampling = v2025.SERVER_REQUESTS["sampling/createMessage"]
    assert [str(c) for c in sampling.needed_capabilities({"tools": []})] == [
        "client capability `sampling`",
        "client capability `sampling.tools`",
    ]
    elicit = v2025.SERVER_REQUESTS["elicitation/create"]
    assert [str(c) for c in elicit.needed_capabilities({"mode": "url"})][-1] == "client capability `elicitation.url`"
    v2026 = methods_module("2026-07-28")
    assert v2026.CLIENT_REQUESTS["tools/call"].input_required
    assert not v2026.CLIENT_REQUESTS["tools/list"].input_required


def test_error_codes_per_version() -> None:
    assert registry.protocol("2024-11-05").error_codes.resource_not_found == -32002
    v2026 = registry.protocol("2026-07-28").error_codes
    assert (v2026.header_mismatch, v2026.missing_required_client_capability, v2026.unsupported_protocol_version) == (
        -32020,
        -32021,
        -32022,
    )
    assert v2026.resource_not_found is None
    assert registry.protocol("2025-11-25").error_codes.codes["METHOD_NOT_FOUND"] == -32601


def test_every_named_error_code_and_meta_key_exists_in_some_version() -> None:
    # The runtime names a few codes and `_meta` keys (spec.ErrorCodes / spec.MetaKeys entries);
    # each must resolve in at least one pinned version, or the name has gone stale.
    from mcp_bindings.runtime.protocol.spec import ErrorCodes, MetaKeys

    tables = [registry.protocol(v) for v in PINNED_VERSIONS]
    for cls, of in ((ErrorCodes, lambda t: t.error_codes), (MetaKeys, lambda t: t.meta)):
        # their entries: descriptors reading one key (spec._Entry), not methods nor the table's own slot
        names = [
            n
            for n, v in vars(cls).items()
            if hasattr(type(v), "__get__") and not callable(v) and not isinstance(v, MemberDescriptorType)
        ]
        assert names, cls
        for name in names:
            assert any(getattr(of(t), name) is not None for t in tables), f"{cls.__name__}.{name} is in no version"


def test_protocol_object_per_version() -> None:
    for version in PINNED_VERSIONS:
        tables = registry.protocol(version)
        assert tables is methods_module(version).PROTOCOL and tables.version == version
        assert tables.stateless == (version == "2026-07-28")
        assert (tables.input_required_result is not None) == tables.stateless
    assert registry.protocol("2026-07-28").meta.protocol_version == "io.modelcontextprotocol/protocolVersion"
    assert registry.protocol("2025-11-25").meta.keys == {}


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
        assert any(rule.matches(method, direction) for rule in gate_rules()), (version, direction, method)


def test_no_policy_rule_is_stale() -> None:
    methods = _all_methods()
    for rule in gate_rules():
        assert any(rule.matches(m, d) for _, d, m in methods), f"rule for {rule.method} matches nothing"


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
    assert not any(rule.matches(m, d) for rule in rules for _, d, m in _all_methods())


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

    with pytest.raises(
        StubDefinitionError, match=r"overrides subscribe_resource, unsubscribe_resource .*`resources.subscribe`"
    ):
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


def test_runtime_serves_exactly_the_builtin_requests() -> None:
    # policy/runtime_methods.json says which methods have no stub handler; the server runtime's own
    # table must serve every such request of every version, and nothing the policy does not list.
    from mcp_bindgen.render.surface_modules import builtin_methods
    from mcp_bindings.runtime.server.runtime import BUILTINS

    builtin_requests = {
        method for v in PINNED_VERSIONS for method, spec in registry.protocol(v).client_requests.items() if spec.builtin
    }
    assert set(BUILTINS) == builtin_requests
    assert builtin_requests <= builtin_methods()


def test_methods_the_runtime_serves_unless_overridden_are_served_by_the_tasks_plug_in() -> None:
    # policy/runtime_methods.json `served_unless_overridden` marks these specs `runtime_served`, so a
    # stub declaring `tasks` need not implement them; the tasks plug-in must then answer each one.
    from mcp_bindings.runtime.tasks.server.methods import served_by_runtime

    served = {
        method
        for v in PINNED_VERSIONS
        for method, spec in registry.protocol(v).client_requests.items()
        if spec.runtime_served
    }
    assert served == {"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"}
    assert all(served_by_runtime(method) is not None for method in served)


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
    for entry in policy_error_codes():
        attached = [v for v in PINNED_VERSIONS if registry.protocol(v).error_codes.codes.get(entry.name) == entry.code]
        assert attached, f"policy/error_codes.json {entry.name} attaches to no pinned version"


def test_policies_follow_content_not_version_names() -> None:
    """The same facts come out of the policy files whatever a version is called: no rule names one."""
    for name in ("capabilities.json", "error_codes.json", "schema_patches.json", "field_defaults.json"):
        text = (REPO_ROOT / "generator" / "mcp_bindgen" / "policy" / name).read_text(encoding="utf-8")
        assert '"versions"' not in text, name
    # 2024-11-05 has completion/complete but no completions capability: ungated there, gated after.
    gates = {
        v: registry.protocol(v).client_requests["completion/complete"].gate
        for v in PINNED_VERSIONS
        if "completion/complete" in registry.protocol(v).client_requests
    }
    assert gates["2024-11-05"] is None
    assert all(str(g) == "server capability `completions`" for v, g in gates.items() if v != "2024-11-05")
    # Param gates attach where the schema defines their capability (sampling.tools from 2025-11-25 on).
    with_tools = [
        v
        for v in PINNED_VERSIONS
        for spec in [
            registry.protocol(v).server_requests.get("sampling/createMessage")
            or registry.protocol(v).input_requests.get("sampling/createMessage")
        ]
        if spec is not None and any(pg.param == "tools" for pg in spec.param_gates)
    ]
    assert with_tools == ["2025-11-25", "2026-07-28"]


def test_tools_only_server_advertises_exactly_tools_and_refuses_prompts() -> None:
    """On the wire: initialize advertises {"tools": {}}; prompts/list gets -32601 from the server; the
    typed client refuses prompts/list before sending anything."""
    import anyio

    from mcp_bindings.runtime.memory import connect_in_memory
    from mcp_bindings.runtime.rpc.errors import CapabilityError, McpError
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


def test_the_naming_convention_agrees_with_every_rule_it_reads() -> None:
    """policy/capabilities.json `convention` gates a method no rule names by its name
    (`widgets/list` on server:widgets). Where it reads a gate for a method a rule covers, the rule
    gates on that capability or narrows it to a sub-capability, never on another one."""
    read = 0
    for version in PINNED_VERSIONS:
        surface = derive_surface(build_ir(pinned_source(version)))
        for method in surface.methods:
            convention = conventional_gate(method.method, method.direction, surface.capability_paths)
            if convention is None:
                continue
            read += 1
            assert method.gate is not None, (version, method.method)
            assert (method.gate.side, method.gate.path[: len(convention.path)]) == (convention.side, convention.path), (
                version,
                method.method,
                str(method.gate),
                str(convention),
            )
    assert read > 50  # tools, resources, prompts, logging, sampling, elicitation, roots, tasks in five versions


def test_a_method_no_rule_names_is_gated_by_its_name_where_the_capability_exists() -> None:
    paths = {"server": ("tools", "widgets", "widgets.listChanged"), "client": ("roots",)}
    assert str(conventional_gate("widgets/list", "client_to_server", paths)) == "server:widgets"
    assert str(conventional_gate("notifications/widgets/list_changed", "server_to_client", paths)) == (
        "server:widgets.listChanged"
    )
    assert conventional_gate("gadgets/list", "client_to_server", paths) is None  # no such capability: ungated
    assert conventional_gate("roots/list", "client_to_server", paths) is None  # the client serves roots/list
    assert str(conventional_gate("roots/list", "server_to_client", paths)) == "client:roots"
