"""The generated `names` module of each version and extension: a constant for every method and
notification its tables have, a `Literal` type per role, the routing and listen-filter tables the
`PROTOCOL` tables take from it, and no import of the bindings (naming a method loads no model)."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from typing import get_args

import pytest

from mcp_bindgen.errors import BindgenError
from mcp_bindgen.naming import method_constant
from mcp_bindgen.policy import extension_policy
from mcp_bindgen.render.names import render_names
from mcp_bindings.runtime.protocol import registry
from tests.support import REPO_ROOT
from tests.support.pipeline import PINNED_VERSIONS

GENERATED = REPO_ROOT / "generated" / "mcp_bindings"
EXTENSIONS = {
    "io_modelcontextprotocol_tasks": "io.modelcontextprotocol/tasks",
    "io_modelcontextprotocol_skills": "io.modelcontextprotocol/skills",
    "io_modelcontextprotocol_ui": "io.modelcontextprotocol/ui",
    "io_modelcontextprotocol_groups": "io.modelcontextprotocol/groups",
}


@pytest.mark.parametrize("version", PINNED_VERSIONS)
def test_a_version_names_every_method_of_its_tables(version: str) -> None:
    protocol = registry.protocol(version)
    names = importlib.import_module(f"mcp_bindings.{protocol.info.package}.names")
    roles = {
        "ClientRequestMethod": protocol.client_requests,
        "ClientNotificationMethod": protocol.client_notifications,
        "ServerRequestMethod": protocol.server_requests,
        "ServerNotificationMethod": protocol.server_notifications,
        "InputRequestMethod": protocol.input_requests,
    }
    everything: set[str] = set()
    for role, table in roles.items():
        assert set(get_args(getattr(names, role, None))) == set(table), (version, role)
        everything |= set(table)
        for method in table:
            assert getattr(names, method_constant(method)) == method
    requests = {*protocol.client_requests, *protocol.server_requests, *protocol.input_requests}
    assert set(get_args(names.Method)) == requests
    assert set(get_args(names.NotificationMethod)) == everything - requests
    assert protocol.routing is names.ROUTING and protocol.listen_filters is names.LISTEN_FILTERS


@pytest.mark.parametrize("version", PINNED_VERSIONS)
def test_a_version_with_input_rounds_names_their_fields_from_its_schema(version: str) -> None:
    """The fields an input round adds (the runtime's bridge reads them by these names): the asks of
    the InputRequiredResult, the answers and the state, the one field it shares with the params of
    every request that may be asked (read from the schema, not kept by hand)."""
    protocol = registry.protocol(version)
    names = importlib.import_module(f"mcp_bindings.{protocol.info.package}.names")
    rounds = [getattr(names, n, None) for n in ("INPUT_REQUESTS", "INPUT_RESPONSES", "REQUEST_STATE")]
    if protocol.input_required_result is None:
        assert rounds == [None, None, None]
        return
    assert rounds == ["inputRequests", "inputResponses", "requestState"]
    for spec in (s for s in protocol.client_requests.values() if s.input_required):
        fields = {f.alias or n for n, f in spec.params.model_fields.items()}
        assert {names.INPUT_RESPONSES, names.REQUEST_STATE} <= fields, spec.method
    result = {f.alias or n for n, f in protocol.input_required_result.model_fields.items()}
    assert {names.INPUT_REQUESTS, names.REQUEST_STATE} <= result


@pytest.mark.parametrize("package", sorted(EXTENSIONS))
def test_an_extension_names_its_methods_and_tables(package: str) -> None:
    names = importlib.import_module(f"mcp_bindings.ext.{package}.names")
    methods = importlib.import_module(f"mcp_bindings.ext.{package}.methods")
    assert names.IDENTIFIER == EXTENSIONS[package]
    assert set(get_args(getattr(names, "ClientRequestMethod", None))) == set(methods.CLIENT_REQUESTS)
    assert names.TASK_RESULTS == frozenset(extension_policy(names.IDENTIFIER).task_results)
    for table in (methods.CLIENT_REQUESTS, methods.SERVER_NOTIFICATIONS):
        for method in table:
            assert getattr(names, method_constant(method)) == method
    tasks = package == "io_modelcontextprotocol_tasks"
    assert dict(names.ROUTING) == (
        dict.fromkeys(("tasks/get", "tasks/update", "tasks/cancel"), "taskId") if tasks else {}
    )


def test_names_modules_import_nothing_of_the_bindings() -> None:
    files = [*GENERATED.glob("v*/names.py"), *GENERATED.glob("ext/*/names.py")]
    assert len(files) == len(PINNED_VERSIONS) + len(EXTENSIONS)
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert imported <= {"collections.abc", "types", "typing"}, (path, imported)
    probe = (
        "import sys; import mcp_bindings.ext.io_modelcontextprotocol_tasks.names, mcp_bindings.v2026_07_28.names;"
        "print(sorted(m for m in sys.modules if m.endswith(('.models', '.methods'))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_method_constants_and_their_clashes() -> None:
    assert method_constant("tools/call") == "TOOLS_CALL"
    assert method_constant("notifications/tools/list_changed") == "NOTIFICATIONS_TOOLS_LIST_CHANGED"
    assert method_constant("logging/setLevel") == "LOGGING_SET_LEVEL"
    assert method_constant("ui/notifications/size-changed") == "UI_NOTIFICATIONS_SIZE_CHANGED"
    with pytest.raises(BindgenError, match="share the constant TOOLS_CALL"):
        render_names("", "MCP test", [("Method", "all", ["tools/call", "tools.call"])], [])
