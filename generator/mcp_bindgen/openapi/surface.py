"""The MCP surface an OpenAPI description's package serves, read from the IR: its tools (name,
description, input schema, output schema, annotations), resources and resource templates, in the
wire shape `compat.compare_surfaces` (the lock's comparison) reads. `mcp-bindgen openapi diff`
compares two of them."""

from __future__ import annotations

from typing import Any

from mcp_bindings.openapi.ir import ApiIR, Operation, closed_schema, resource_uri, tool_annotations
from mcp_bindings.openapi.lower import identifier


def _uri(ir: ApiIR, op: Operation) -> str:
    return resource_uri(op, ir.uri_scheme, lambda param: identifier(param.prop, "arg"))


def surface(ir: ApiIR) -> dict[str, Any]:
    tools: list[dict[str, Any]] = []
    resources: list[dict[str, Any]] = []
    templates: list[dict[str, Any]] = []
    for op in ir.operations:
        if op.resource:
            uri = _uri(ir, op)
            entry = {"name": op.tool, "description": op.description, "mimeType": _mime(op)}
            if "{" in uri:
                templates.append({"uriTemplate": uri, **entry})
            else:
                resources.append({"uri": uri, **entry})
            continue
        tool: dict[str, Any] = {
            "name": op.tool,
            "description": op.description,
            "inputSchema": closed_schema(ir, op.arguments),
            "annotations": tool_annotations(op.method),
        }
        if op.response.kind == "json" and op.response.schema:
            tool["outputSchema"] = closed_schema(ir, op.response.schema)
        tools.append(tool)
    return {"tools": tools, "resources": resources, "resourceTemplates": templates}


def _mime(op: Operation) -> str:
    return "application/json" if op.response.kind == "json" else "text/plain"
