"""Tool schemas: checked against their JSON Schema meta-schema, then merged into one document whose
`$defs` hold every tool's input and output model (and the `$defs` they use), for
datamodel-code-generator.

Each tool schema refers to its own root (`#`, `#/$defs/X`, `#/definitions/X`); those references are
rewritten into the merged document. A nested definition keeps its own name when every tool that
defines it defines it the same way (mcp-server-time's `TimeResult`), else it is prefixed with the
tool's model name. Other references (remote, deep JSON pointers) are refused with the tool named.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mcp_bindgen.errors import BindgenError

from .naming import pascal

_LOCAL_PREFIXES = ("#/$defs/", "#/definitions/")


def check_schema(tool: str, which: str, schema: Any) -> None:
    """A clear error when a tool's schema is not a valid JSON Schema."""
    from jsonschema import exceptions, validators

    if not isinstance(schema, dict):
        raise BindgenError(f"tool `{tool}`: its {which} is not a JSON object, so it is not a JSON Schema")
    cls: Any = validators.validator_for(schema, default=validators.Draft202012Validator)  # pyright: ignore[reportUnknownMemberType]
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"  # pyright: ignore[reportUnknownMemberType]
        raise BindgenError(
            f"tool `{tool}`: its {which} is not valid JSON Schema at {where}: {exc.message}; fix the server's schema"
        ) from exc


@dataclass(frozen=True)
class ToolModels:
    input: str
    output: str | None


def _nested(schema: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        value = schema.get(key)
        if isinstance(value, dict):
            out.update(value)  # pyright: ignore[reportUnknownArgumentType]
    return out


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _rewrite(value: Any, refs: dict[str, str], root: str, tool: str) -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():  # pyright: ignore[reportUnknownVariableType]
            if key in ("$defs", "definitions", "$schema", "$id"):
                continue
            if key == "format" and isinstance(item, str):
                continue  # values stay `str` as in the bindings (no AnyUrl/datetime to construct)
            if key == "$ref" and isinstance(item, str):
                out[key] = _target(item, refs, root, tool)
            else:
                out[str(key)] = _rewrite(item, refs, root, tool)  # pyright: ignore[reportUnknownArgumentType]
        return out
    if isinstance(value, list):
        return [_rewrite(item, refs, root, tool) for item in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def _target(ref: str, refs: dict[str, str], root: str, tool: str) -> str:
    if ref == "#":
        return f"#/$defs/{root}"
    for prefix in _LOCAL_PREFIXES:
        if ref.startswith(prefix) and ref[len(prefix) :] in refs:
            return f"#/$defs/{refs[ref[len(prefix) :]]}"
    raise BindgenError(
        f"tool `{tool}`: $ref {ref!r} is not supported (only `#`, `#/$defs/NAME` and `#/definitions/NAME` "
        "of the tool's own schema)"
    )


def merged_document(
    tools: list[dict[str, Any]], idents: dict[str, str]
) -> tuple[dict[str, Any], dict[str, ToolModels]]:
    """The datamodel-code-generator document and, per tool name, the names of its models."""
    models: dict[str, ToolModels] = {}
    roots: list[tuple[str, str, str, dict[str, Any]]] = []  # (tool, which, model name, schema)
    for tool in tools:
        name = tool["name"]
        base = pascal(idents[name])
        check_schema(name, "inputSchema", tool.get("inputSchema"))
        roots.append((name, "inputSchema", f"{base}Input", tool["inputSchema"]))
        output = tool.get("outputSchema")
        if output is not None:
            check_schema(name, "outputSchema", output)
            roots.append((name, "outputSchema", f"{base}Output", output))
        models[name] = ToolModels(f"{base}Input", f"{base}Output" if output is not None else None)
    taken = {model for _, _, model, _ in roots}
    # Nested definitions: shared under their own name when identical everywhere, else prefixed.
    variants: dict[str, set[str]] = {}
    for _, _, _, schema in roots:
        for key, value in _nested(schema).items():
            variants.setdefault(key, set()).add(_canonical(value))
    defs: dict[str, Any] = {}
    for tool, _which, model, schema in roots:
        refs: dict[str, str] = {}
        for key in _nested(schema):
            plain = pascal(_safe(key))
            shared = len(variants[key]) == 1 and plain not in taken
            refs[key] = plain if shared else f"{model}{plain}"
        for key, value in _nested(schema).items():
            defs[refs[key]] = _rewrite(value, refs, model, tool)
        body = _rewrite(schema, refs, model, tool)
        if body.get("type") is None and "properties" in body:
            body["type"] = "object"
        defs[model] = body
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": dict(sorted(defs.items()))}, models


def _safe(key: str) -> str:
    import re

    text = re.sub(r"[^0-9A-Za-z]+", "_", key).strip("_") or "Definition"
    return f"D{text}" if text[0].isdigit() else text
