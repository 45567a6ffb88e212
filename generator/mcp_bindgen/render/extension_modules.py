"""Render an extension package: `models.py` (its own definitions, the spliced core ones imported),
`methods.py` (its method tables and the `EXTENSION` the runtime registers), `about.py`, `server.py` /
`client.py` (typed handler and call stubs) and `__init__.py`.

Decisions are made here; the templates only loop over what this module hands them.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import Any

from ..errors import BindgenError
from ..extension import ExtensionMethod
from ..ir import SchemaIR
from ..policy import extension_policy
from ..surface import ProtocolSurface
from . import passes
from .models import render_models
from .surface_modules import call_view
from .templates import render

TABLES = (
    ("CLIENT_REQUESTS", "client_to_server", "request"),
    ("CLIENT_NOTIFICATIONS", "client_to_server", "notification"),
    ("SERVER_REQUESTS", "server_to_client", "request"),
    ("SERVER_NOTIFICATIONS", "server_to_client", "notification"),
)


@dataclass(frozen=True)
class ExtensionView:
    identifier: str
    core_version: str
    core_package: str  # dotted, e.g. mcp_bindings.v2026_07_28
    package: str  # dotted, e.g. mcp_bindings.ext.io_modelcontextprotocol_tasks
    source: str  # repository@commit:path
    sha256: str
    header: str


def render_ext_models(ir: SchemaIR, own: set[str], spliced: set[str], imports: set[str], view: ExtensionView) -> str:
    """The whole IR rendered as the core version's models would be, then the spliced definitions
    dropped and imported from the core package instead."""
    source = render_models(ir, view.core_package)
    module = passes.apply(source, passes.DropTopLevel({ir.py_name(n) for n in spliced}))
    text = _without_unused_imports(module.code.replace("from ._base import", f"from {view.core_package}._base import"))
    names = sorted({ir.py_name(n) for n in imports})
    line = f"from {view.core_package}.models import {', '.join(names)}\n" if names else ""
    anchor = f"from {view.core_package}._base import MCPModel\n"
    return view.header + "\n\n" + text.replace(anchor, anchor + line, 1)


_FROM_IMPORT = re.compile(r"^from (\S+) import (.+)$")


def _without_unused_imports(text: str) -> str:
    """Drop the names of the tool's one-line `from X import a, b` lines that only the dropped
    (spliced) definitions used, and lines left empty; `from __future__` stays."""
    lines = text.split("\n")
    body = "\n".join(line for line in lines if not _FROM_IMPORT.match(line))
    tokens = tokenize.generate_tokens(io.StringIO(body).readline)
    names_used = {tok.string for tok in tokens if tok.type == tokenize.NAME}
    out = []
    for line in lines:
        found = _FROM_IMPORT.match(line)
        if found is None or found.group(1) == "__future__":
            out.append(line)
            continue
        names = [n.strip() for n in found.group(2).split(",")]
        used = [n for n in names if n in names_used]
        if used:
            out.append(f"from {found.group(1)} import {', '.join(used)}")
    return "\n".join(out)


def _spec(ir: SchemaIR, method: ExtensionMethod) -> dict[str, str | bool]:
    return {
        "method": method.method,
        "kind": method.kind,
        "direction": method.direction,
        "handler": method.handler,
        "message": ir.py_name(method.message_type),
        "params": f"m.{ir.py_name(method.params_type)}" if method.params_type else "None",
        "params_required": method.params_required,
        "result": f"m.{ir.py_name(method.result_type)}" if method.result_type else "None",
    }


# The tables of an extension's own channel (MCP Apps' host<->app bridge: the app plays the client).
BRIDGE_TABLES = (
    ("APP_REQUESTS", "client_to_server", "request"),
    ("APP_NOTIFICATIONS", "client_to_server", "notification"),
    ("HOST_REQUESTS", "server_to_client", "request"),
    ("HOST_NOTIFICATIONS", "server_to_client", "notification"),
)


def _tables(ir: SchemaIR, methods: list[ExtensionMethod], names: tuple[tuple[str, str, str], ...]) -> list[Any]:
    return [
        {"name": name, "specs": [_spec(ir, m) for m in methods if m.direction == direction and m.kind == kind]}
        for name, direction, kind in names
    ]


def render_ext_methods(ir: SchemaIR, methods: list[ExtensionMethod], view: ExtensionView) -> str:
    """The MCP connection's tables (`EXTENSION`) and, when the extension has its own channel, that
    channel's (`BRIDGE`)."""
    wire = [m for m in methods if not m.bridge]
    bridge = [m for m in methods if m.bridge]
    return render(
        "ext/methods.py.j2",
        header=view.header,
        identifier=view.identifier,
        tables=_tables(ir, wire, TABLES),
        bridge_tables=_tables(ir, bridge, BRIDGE_TABLES) if bridge else [],
    )


def render_ext_about(view: ExtensionView) -> str:
    return render(
        "ext/about.py.j2",
        header=view.header,
        identifier=view.identifier,
        core_version=view.core_version,
        core_package=view.core_package,
        source=view.source,
        sha256=view.sha256,
    )


def _handler(ir: SchemaIR, method: ExtensionMethod) -> dict[str, str]:
    params = f"m.{ir.py_name(method.params_type)}" if method.params_type else "dict[str, Any] | None"
    if method.params_type and not method.params_required:
        params += " | None"
    return {
        "name": method.handler,
        "method": method.method,
        "params": params,
        "result": f"m.{ir.py_name(method.result_type)}" if method.result_type else "None",
        "context": "RequestContext" if method.kind == "request" else "NotificationContext",
        "body": f'raise NotImplementedError("{method.method}")' if method.kind == "request" else "return None",
    }


def _call(ir: SchemaIR, method: ExtensionMethod) -> dict[str, str]:
    params = f"m.{ir.py_name(method.params_type)}" if method.params_type else "dict[str, Any]"
    optional = not method.params_type or not method.params_required
    return {
        "name": method.handler if method.kind == "request" else "notify_" + method.handler.removeprefix("on_"),
        "method": method.method,
        "params": f"{params} | None = None" if optional else params,
        "result": f"m.{ir.py_name(method.result_type)}" if method.result_type else "None",
        "call": "call_extension" if method.kind == "request" else "notify_extension",
    }


def render_ext_server(ir: SchemaIR, methods: list[ExtensionMethod], view: ExtensionView) -> str:
    """Handlers for what a client sends (served by a server); `use_extension(EXTENSION, handlers=...)`."""
    handlers = [_handler(ir, m) for m in methods if m.direction == "client_to_server" and not m.bridge]
    return _stub("ext/handlers.py.j2", "Server", "client", handlers, view)


def task_results(identifier: str) -> list[str]:
    """The core requests the extension lets a server answer with a task (`policy/extension_methods.json`
    `task_results`: the extension's "Supported Methods", which its schema does not say)."""
    return list(extension_policy(identifier).task_results)


# What a typed call that may become a task returns besides its result (runtime/client/tasks_ext.py).
_TOOL_TASK = "ToolTask"
# The alias of the core version's generated models and methods in an extension's client module.
_CORE = "core"


def _task_calls(identifier: str, core: tuple[SchemaIR, ProtocolSurface]) -> list[dict[str, Any]]:
    """A typed call per core request the extension may turn into a task, as the core `Client` has
    it but answering `<Result> | ToolTask[<Result>]` (what an opted-in client gets)."""
    ir, surface = core
    requests = {spec.method: spec for spec in surface.table("client_to_server", "request")}
    calls = []
    for method in task_results(identifier):
        spec = requests.get(method)
        if spec is None or spec.result_type is None:
            raise BindgenError(
                f"policy/extension_methods.json: task_results {identifier} names {method}, which is no request "
                f"of core version {surface.version} with a result; remove the entry or fix the method"
            )
        view = call_view(ir, spec, "CLIENT_REQUESTS", models=_CORE)
        view["result"] = f"{view['result']} | {_TOOL_TASK}[{view['result']}]"
        view["core"] = f"{_CORE}_methods"
        calls.append(view)
    return calls


def render_ext_client(
    ir: SchemaIR,
    methods: list[ExtensionMethod],
    view: ExtensionView,
    core: tuple[SchemaIR, ProtocolSurface],
) -> str:
    """Calls a client makes, and handlers for what a server sends (on the client's handlers object);
    `core` (the core version's IR and surface) types the core requests the extension may answer with
    a task."""
    calls = [_call(ir, m) for m in methods if m.direction == "client_to_server" and not m.bridge]
    handlers = [_handler(ir, m) for m in methods if m.direction == "server_to_client" and not m.bridge]
    task_calls: list[dict[str, Any]] = []
    if task_results(view.identifier):
        task_calls = _task_calls(view.identifier, core)
    task_imports = []
    if task_calls:
        task_imports = [
            f"from mcp_bindings.runtime.abi.client import {_TOOL_TASK}",
            f"from {view.core_package} import methods as {_CORE}_methods",
            f"from {view.core_package} import models as {_CORE}",
        ]
    meta_imports = (
        ["from mcp_bindings.runtime.abi.protocol import Meta"]
        if any("Meta" in c["signature"] for c in task_calls)
        else []
    )
    return render(
        "ext/client.py.j2",
        header=view.header,
        identifier=view.identifier,
        calls=calls,
        task_calls=task_calls,
        task_imports=task_imports,
        meta_imports=meta_imports,
        handlers=handlers,
        context_imports=_context_imports(handlers),
        uses_any=any("Any" in c["params"] for c in calls)
        or any("Any" in h["params"] for h in handlers)
        or any("Any" in c["signature"] for c in task_calls),
    )


def _stub(template: str, side: str, sender: str, handlers: list[dict[str, str]], view: ExtensionView) -> str:
    return render(
        template,
        header=view.header,
        identifier=view.identifier,
        side=side,
        role=side.lower(),
        sender=sender,
        handlers=handlers,
        context_imports=_context_imports(handlers),
        uses_any=any("Any" in h["params"] for h in handlers),
    )


def _context_imports(handlers: list[dict[str, str]]) -> str:
    return ", ".join(sorted({h["context"] for h in handlers}))


def render_ext_init(ir: SchemaIR, own: set[str], view: ExtensionView) -> str:
    names = [{"schema": n, "py": ir.py_name(n)} for n in sorted(own)]
    return render("ext/init.py.j2", header=view.header, identifier=view.identifier, names=names)
