"""Render the typed client module of one server surface: tool models (datamodel-code-generator), the
client class (`templates/contract/client.py.j2`), formatted with black like the bindings."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field, fields
from typing import Any

from mcp_bindgen import __version__
from mcp_bindgen.errors import BindgenError
from mcp_bindgen.format import format_python
from mcp_bindgen.render.templates import render

from .models import Param, RenderedModels, render_tool_models
from .naming import Collision, assign, identifier, pascal
from .schemas import ToolModels, merged_document
from .surface import Surface


@dataclass(frozen=True)
class ClientModule:
    source: str
    collisions: list[Collision] = field(default_factory=list[Collision])
    notes: list[str] = field(default_factory=list[str])


def _doc(text: str) -> str:
    """Text safe inside a triple-quoted docstring."""
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').strip()


def _docstring(summary: str, params: list[tuple[str, str]]) -> str:
    lines = [_doc(summary) or "(no description)"]
    described = [(name, _doc(text)) for name, text in params if text]
    if described:
        lines += ["", "Args:"] + [f"    {name}: {' '.join(text.split())}" for name, text in described]
    text = "\n        ".join("\n".join(lines).splitlines())
    return text + ("\n        " if len(lines) > 1 else "")


def _with_default(param: Param) -> str:
    if param.required or param.default == "None":
        return param.description
    return f"{param.description} (default {param.default})".strip()


def _has_structured_content(package: str) -> bool:
    models = importlib.import_module(f"mcp_bindings.{package}.models")
    return "structured_content" in models.CallToolResult.model_fields


def _template_vars(uri_template: str) -> list[tuple[str, bool]] | None:
    """(variable, required) of an RFC 6570 template; None when it is not one."""
    from mcp_bindings.runtime.app.uri_template import Expression, Template, TemplateError

    try:
        parts = Template(uri_template).parts
    except TemplateError:
        return None
    return [(v.name, p.operator in ("", "+")) for p in parts if isinstance(p, Expression) for v in p.variables]


@dataclass(frozen=True)
class ToolView:
    name_lit: str
    method: str
    input: str  # the input model
    output: str | None  # the output model, when the version has structuredContent and the tool a schema
    object_input: bool  # the input model has fields: keyword arguments validated through it
    free_form: bool  # no object model: the method takes `arguments` as a dict
    params: list[Param]  # required first
    returns: str
    doc: str


@dataclass(frozen=True)
class ArgumentView:
    """A keyword argument of a prompt or resource-template method (always a string)."""

    name: str
    wire_lit: str
    required: bool
    description: str = ""


@dataclass(frozen=True)
class PromptView:
    method: str
    name_lit: str
    params: list[ArgumentView]
    doc: str


@dataclass(frozen=True)
class ResourceTemplateView:
    method: str
    uri_lit: str
    params: list[ArgumentView]
    doc: str


@dataclass(frozen=True)
class ClientView:
    """Everything `templates/contract/client.py.j2` writes, decided here (the template only loops)."""

    header: str
    server_name: str
    server_version: str
    server_name_lit: str
    protocol_version: str
    protocol_version_lit: str
    class_name: str
    collisions: list[str]
    imports: list[str]
    models: str
    structured: bool
    tools: list[ToolView]
    prompts: list[PromptView]
    templates: list[ResourceTemplateView]

    def context(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class ClientPlan:
    """The view of one client module, and what its rendering reports."""

    view: ClientView
    label: str  # names the module in formatter errors
    collisions: list[Collision]
    notes: list[str]


def render_client(surface: Surface, class_name: str | None = None) -> ClientModule:
    plan = client_view(surface, class_name)
    text = render("contract/client.py.j2", **plan.view.context())
    return ClientModule(format_python(text, plan.label), plan.collisions, plan.notes)


def client_view(surface: Surface, class_name: str | None = None) -> ClientPlan:
    """The view model of the typed client module of one server surface."""
    version = surface["protocolVersion"]
    package = _bindings_package(version)
    tools = _tools(surface)
    server_info = surface.get("serverInfo") or {}
    server_name = str(server_info.get("name") or "server")
    class_name = _class_name(class_name, server_name)
    prompts: list[dict[str, Any]] = surface.get("prompts") or []
    templates: list[dict[str, Any]] = surface.get("resourceTemplates") or []
    ids = _identifiers(tools, prompts, templates)
    document, tool_models = merged_document(tools, ids.tools)
    models = render_tool_models(document)
    structured = _has_structured_content(package)
    notes: list[str] = []
    tool_views = [
        _tool_view(tool, ids.tools[tool["name"]], tool_models[tool["name"]], models, structured, version, notes)
        for tool in sorted(tools, key=lambda t: ids.tools[t["name"]])
    ]
    prompt_views = [_prompt_view(prompt, ids.prompts) for prompt in prompts]
    template_views = [
        view for template in templates if (view := _template_view(template, ids.templates, notes)) is not None
    ]
    with_output = structured and any(t.output for t in tool_views)
    view = ClientView(
        header=_header(server_name, version),
        server_name=_doc(server_name),
        server_version=_doc(str(server_info.get("version") or "")),
        server_name_lit=repr(server_name),
        protocol_version=version,
        protocol_version_lit=repr(version),
        class_name=class_name,
        collisions=[_doc(c.message()) for c in ids.collisions],
        imports=_imports(models.imports, package, bool(template_views), with_output),
        models=models.body.strip(),
        structured=with_output,
        tools=tool_views,
        prompts=prompt_views,
        templates=template_views,
    )
    return ClientPlan(view, f"client of {server_name}", ids.collisions, notes)


def _tools(surface: Surface) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = surface.get("tools") or []
    if not tools:
        raise BindgenError(
            "the server lists no tools, so there is nothing to generate a client for "
            "(check that it advertises the `tools` capability)"
        )
    return tools


def _class_name(given: str | None, server_name: str) -> str:
    """`--class-name`, or `<Server>Client` after the server's name."""
    name = given or f"{pascal(identifier(server_name, 'server'))}Client"
    if not name.isidentifier():
        raise BindgenError(f"--class-name {name!r} is not a Python identifier")
    return name


def _bindings_package(version: str) -> str:
    """The generated package of a protocol version (the runtime's registry knows the installed ones)."""
    from mcp_bindings.runtime.protocol import registry

    try:
        return registry.info(version).package
    except Exception as exc:
        raise BindgenError(
            f"the surface's protocol version {version!r} has no generated bindings: "
            f"pass --protocol with one of {', '.join(registry.versions())}"
        ) from exc


@dataclass(frozen=True)
class _Identifiers:
    tools: dict[str, str]  # tool name -> method
    prompts: dict[str, str]  # `prompt_<identifier>` -> method
    templates: dict[str, str]  # `read_<identifier>` -> method
    collisions: list[Collision]


def _identifiers(
    tools: list[dict[str, Any]], prompts: list[dict[str, Any]], templates: list[dict[str, Any]]
) -> _Identifiers:
    """One method name per tool, prompt and resource template, unique across all three (in that order)."""
    taken: set[str] = set()
    tool_ids, collisions = assign("tool", [t["name"] for t in tools], "tool", taken)
    prompt_ids, more = assign("prompt", [_prompt_key(p) for p in prompts], "prompt", taken)
    collisions += more
    template_ids, more = assign("resource template", [_template_key(t) for t in templates], "resource", taken)
    collisions += more
    return _Identifiers(tool_ids, prompt_ids, template_ids, collisions)


def _prompt_key(prompt: dict[str, Any]) -> str:
    return f"prompt_{identifier(prompt['name'], 'prompt')}"


def _template_key(template: dict[str, Any]) -> str:
    return f"read_{identifier(template['name'], 'resource')}"


def _tool_view(
    tool: dict[str, Any],
    method: str,
    names: ToolModels,
    models: RenderedModels,
    structured: bool,
    version: str,
    notes: list[str],
) -> ToolView:
    """One tool's method; what the client cannot type is added to `notes`."""
    fields_ = models.classes.get(names.input)
    params: list[Param] = sorted(fields_ or [], key=lambda p: (not p.required,))
    output = names.output if structured and names.output in models.classes else None
    if names.output and not structured:
        notes.append(f"tool `{tool['name']}`: {version} has no structuredContent; it returns CallToolResult")
    if fields_ is None:
        notes.append(
            f"tool `{tool['name']}`: its inputSchema is no object model with properties; "
            "the method takes `arguments` as a dict"
        )
    summary = tool.get("description") or tool.get("title") or f"The tool `{tool['name']}`."
    return ToolView(
        name_lit=repr(tool["name"]),
        method=method,
        input=names.input,
        output=output,
        object_input=bool(fields_),
        free_form=fields_ is None,
        params=params if fields_ else [],
        returns=output or "m.CallToolResult",
        doc=_docstring(summary, [(p.name, _with_default(p)) for p in params]),
    )


def _prompt_view(prompt: dict[str, Any], prompt_ids: dict[str, str]) -> PromptView:
    arguments: list[dict[str, Any]] = prompt.get("arguments") or []
    arg_ids, _ = assign("argument", [a["name"] for a in arguments], "arg", {"self"})
    params = [
        ArgumentView(
            name=arg_ids[arg["name"]],
            wire_lit=repr(arg["name"]),
            required=bool(arg.get("required", False)),
            description=arg.get("description") or "",
        )
        for arg in sorted(arguments, key=lambda a: (not a.get("required", False), a["name"]))
    ]
    return PromptView(
        method=prompt_ids[_prompt_key(prompt)],
        name_lit=repr(prompt["name"]),
        params=params,
        doc=_docstring(
            prompt.get("description") or f"The prompt `{prompt['name']}`.",
            [(p.name, p.description) for p in params],
        ),
    )


def _template_view(
    template: dict[str, Any], template_ids: dict[str, str], notes: list[str]
) -> ResourceTemplateView | None:
    """One resource template's method; None (and a note) when its URI template is not RFC 6570."""
    uri = template["uriTemplate"]
    found = _template_vars(uri)
    if found is None:
        notes.append(f"resource template `{template['name']}`: {uri!r} is not RFC 6570; skipped")
        return None
    var_ids, _ = assign("variable", [name for name, _ in found], "var", {"self"})
    params = [
        ArgumentView(name=var_ids[name], wire_lit=repr(name), required=required)
        for name, required in sorted(found, key=lambda v: not v[1])
    ]
    return ResourceTemplateView(
        method=template_ids[_template_key(template)],
        uri_lit=repr(uri),
        params=params,
        doc=_docstring((template.get("description") or f"Read `{uri}`.") + f"\n\nURI template: `{uri}`.", []),
    )


def _header(server_name: str, version: str) -> str:
    header = render(
        "header.py.j2",
        generator_version=__version__,
        source=f"the surface of the MCP server {server_name!r} ({version})",
    ).rstrip("\n")
    return header.replace("then run `mcp-bindgen generate`", "then run `mcp-bindgen client` again")


def _imports(from_models: dict[str, set[str]], package: str, templates: bool, structured: bool) -> list[str]:
    wanted: dict[str, set[str]] = {k: set(v) for k, v in from_models.items()}

    def add(module: str, *names: str) -> None:
        wanted.setdefault(module, set()).update(names)

    add("collections.abc", "AsyncGenerator", "Sequence")
    add("contextlib", "asynccontextmanager")
    add("typing", "Any")
    add(f"mcp_bindings.{package}", "models as m")
    add(f"mcp_bindings.{package}.client", "Client")
    add("mcp_bindings.runtime.stdio", "connect_stdio")
    if templates:
        add("mcp_bindings.runtime.app.uri_template", "Template")
    del structured
    return [f"from {module} import {', '.join(sorted(names))}" for module, names in sorted(wanted.items())]
