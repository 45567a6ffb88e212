"""Render the typed client module of one server surface: tool models (datamodel-code-generator), the
client class (`templates/contract/client.py.j2`), formatted with black like the bindings."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from ..errors import BindgenError
from ..format import format_python
from ..render.templates import render
from .models import Param, render_tool_models
from .naming import Collision, assign, identifier, pascal
from .schemas import merged_document
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


def render_client(surface: Surface, class_name: str | None = None) -> ClientModule:
    from mcp_bindings.runtime.protocol import registry

    version = surface["protocolVersion"]
    try:
        package = registry.info(version).package
    except Exception as exc:
        raise BindgenError(
            f"the surface's protocol version {version!r} has no generated bindings: "
            f"pass --protocol with one of {', '.join(registry.versions())}"
        ) from exc
    tools: list[dict[str, Any]] = surface.get("tools") or []
    if not tools:
        raise BindgenError(
            "the server lists no tools, so there is nothing to generate a client for "
            "(check that it advertises the `tools` capability)"
        )
    server_name = str((surface.get("serverInfo") or {}).get("name") or "server")
    class_name = class_name or f"{pascal(identifier(server_name, 'server'))}Client"
    if not class_name.isidentifier():
        raise BindgenError(f"--class-name {class_name!r} is not a Python identifier")

    taken: set[str] = set()
    tool_ids, collisions = assign("tool", [t["name"] for t in tools], "tool", taken)
    prompts: list[dict[str, Any]] = surface.get("prompts") or []
    prompt_ids, more = assign("prompt", [f"prompt_{identifier(p['name'], 'prompt')}" for p in prompts], "prompt", taken)
    collisions += more
    templates: list[dict[str, Any]] = surface.get("resourceTemplates") or []
    template_ids, more = assign(
        "resource template", [f"read_{identifier(t['name'], 'resource')}" for t in templates], "resource", taken
    )
    collisions += more

    document, tool_models = merged_document(tools, tool_ids)
    models = render_tool_models(document)
    structured = _has_structured_content(package)
    notes: list[str] = []

    tool_vars: list[dict[str, Any]] = []
    for tool in sorted(tools, key=lambda t: tool_ids[t["name"]]):
        names = tool_models[tool["name"]]
        fields = models.classes.get(names.input)
        params: list[Param] = sorted(fields or [], key=lambda p: (not p.required,))
        output = names.output if structured and names.output in models.classes else None
        if names.output and not structured:
            notes.append(f"tool `{tool['name']}`: {version} has no structuredContent; it returns CallToolResult")
        if fields is None:
            notes.append(
                f"tool `{tool['name']}`: its inputSchema is no object model with properties; "
                "the method takes `arguments` as a dict"
            )
        tool_vars.append(
            {
                "name_lit": repr(tool["name"]),
                "method": tool_ids[tool["name"]],
                "input": names.input,
                "output": output,
                "object_input": fields is not None and bool(fields),
                "free_form": fields is None,
                "params": params if fields else [],
                "returns": output or "m.CallToolResult",
                "doc": _docstring(
                    tool.get("description") or tool.get("title") or f"The tool `{tool['name']}`.",
                    [(p.name, _with_default(p)) for p in params],
                ),
            }
        )
    prompt_vars: list[dict[str, Any]] = []
    for prompt in prompts:
        params_: list[dict[str, Any]] = []
        arg_ids, _ = assign("argument", [a["name"] for a in prompt.get("arguments") or []], "arg", {"self"})
        for arg in sorted(prompt.get("arguments") or [], key=lambda a: (not a.get("required", False), a["name"])):
            params_.append(
                {
                    "name": arg_ids[arg["name"]],
                    "wire_lit": repr(arg["name"]),
                    "required": bool(arg.get("required", False)),
                    "description": arg.get("description") or "",
                }
            )
        prompt_vars.append(
            {
                "method": prompt_ids[f"prompt_{identifier(prompt['name'], 'prompt')}"],
                "name_lit": repr(prompt["name"]),
                "params": params_,
                "doc": _docstring(
                    prompt.get("description") or f"The prompt `{prompt['name']}`.",
                    [(p["name"], p["description"]) for p in params_],
                ),
            }
        )
    template_vars: list[dict[str, Any]] = []
    for template in templates:
        found = _template_vars(template["uriTemplate"])
        if found is None:
            notes.append(
                f"resource template `{template['name']}`: {template['uriTemplate']!r} is not RFC 6570; skipped"
            )
            continue
        var_ids, _ = assign("variable", [name for name, _ in found], "var", {"self"})
        params_ = [
            {"name": var_ids[name], "wire_lit": repr(name), "required": required}
            for name, required in sorted(found, key=lambda v: not v[1])
        ]
        template_vars.append(
            {
                "method": template_ids[f"read_{identifier(template['name'], 'resource')}"],
                "uri_lit": repr(template["uriTemplate"]),
                "params": params_,
                "doc": _docstring(
                    (template.get("description") or f"Read `{template['uriTemplate']}`.")
                    + f"\n\nURI template: `{template['uriTemplate']}`.",
                    [],
                ),
            }
        )

    imports = _imports(models.imports, package, bool(template_vars), structured and any(t["output"] for t in tool_vars))
    header = render(
        "header.py.j2",
        generator_version=__version__,
        source=f"the surface of the MCP server {server_name!r} ({version})",
    ).rstrip("\n")
    header = header.replace("then run `mcp-bindgen generate`", "then run `mcp-bindgen client` again")
    text = render(
        "contract/client.py.j2",
        header=header,
        server_name=_doc(server_name),
        server_version=_doc(str((surface.get("serverInfo") or {}).get("version") or "")),
        server_name_lit=repr(server_name),
        protocol_version=version,
        protocol_version_lit=repr(version),
        class_name=class_name,
        collisions=[_doc(c.message()) for c in collisions],
        imports=imports,
        models=models.body.strip(),
        structured=structured and any(t["output"] for t in tool_vars),
        tools=tool_vars,
        prompts=prompt_vars,
        templates=template_vars,
    )
    return ClientModule(format_python(text, f"client of {server_name}"), collisions, notes)


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
