"""Swagger 2.0 -> OpenAPI 3.0, the parts a server needs: servers from host/basePath/schemes, body and
form parameters as request bodies, response schemas under their media type, definitions, shared
parameters and responses as components, security definitions as security schemes."""

from __future__ import annotations

from typing import Any

from .normalise import CONSTRAINTS

_REFS = {
    "#/definitions/": "#/components/schemas/",
    "#/parameters/": "#/components/parameters/",
    "#/responses/": "#/components/responses/",
}
# A simple parameter's keywords that belong to its schema in 3.0.
_SCHEMA_KEYS = ("type", "format", "items", "enum", "default", *CONSTRAINTS)
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch")


def _refs(node: Any) -> Any:
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                for old, new in _REFS.items():
                    if value.startswith(old):
                        value = new + value[len(old) :]
                        break
            out[key] = _refs(value)
        return out
    if isinstance(node, list):
        return [_refs(v) for v in node]
    return node


def _deref(doc: dict[str, Any], param: Any) -> Any:
    ref = param.get("$ref") if isinstance(param, dict) else None
    if isinstance(ref, str) and ref.startswith("#/parameters/"):
        return doc.get("parameters", {}).get(ref[len("#/parameters/") :], {})
    return param


def _simple(param: dict[str, Any]) -> dict[str, Any]:
    """A path, query, header or form parameter's schema."""
    schema: dict[str, Any] = {k: param[k] for k in _SCHEMA_KEYS if k in param}
    if param.get("type") == "file":
        schema = {"type": "string", "format": "binary"}
    if isinstance(schema.get("items"), dict):
        schema["items"] = _simple(schema["items"])
    return schema


def _parameter(param: dict[str, Any]) -> dict[str, Any]:
    out = {k: param[k] for k in ("name", "in", "description", "required") if k in param}
    out["schema"] = _simple(param)
    if param.get("type") == "array":
        fmt = param.get("collectionFormat", "csv")
        out["explode"] = fmt == "multi"
        out["style"] = "form" if param.get("in") == "query" else "simple"
    return out


def _described(schema: dict[str, Any], text: Any) -> dict[str, Any]:
    return {**schema, "description": text} if isinstance(text, str) and text else schema


def _body(params: list[dict[str, Any]], consumes: list[str]) -> dict[str, Any] | None:
    body = next((p for p in params if p.get("in") == "body"), None)
    if body is not None:
        media = next((m for m in consumes if "json" in m), consumes[0] if consumes else "application/json")
        return {
            "required": bool(body.get("required")),
            "description": body.get("description", ""),
            "content": {media: {"schema": body.get("schema", {})}},
        }
    form = [p for p in params if p.get("in") == "formData"]
    if not form:
        return None
    media = "multipart/form-data" if "multipart/form-data" in consumes else "application/x-www-form-urlencoded"
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {p["name"]: _described(_simple(p), p.get("description")) for p in form},
    }
    required = [p["name"] for p in form if p.get("required")]
    if required:
        schema["required"] = required
    return {"required": bool(required), "content": {media: {"schema": schema}}}


def _responses(responses: dict[str, Any], produces: list[str]) -> dict[str, Any]:
    media = next((m for m in produces if "json" in m), produces[0] if produces else "application/json")
    out: dict[str, Any] = {}
    for status, answer in responses.items():
        if not isinstance(answer, dict):
            continue
        if "$ref" in answer:
            out[status] = answer
            continue
        converted = {"description": answer.get("description", "")}
        if "schema" in answer:
            schema = answer["schema"]
            converted["content"] = (
                {media: {"schema": {"type": "string", "format": "binary"}}}
                if (isinstance(schema, dict) and schema.get("type") == "file")
                else {media: {"schema": schema}}
            )
        out[status] = converted
    return out


def _operation(doc: dict[str, Any], op: dict[str, Any], shared: list[Any]) -> dict[str, Any]:
    consumes = op.get("consumes") or doc.get("consumes") or []
    produces = op.get("produces") or doc.get("produces") or []
    params = [p for p in (_deref(doc, p) for p in [*shared, *op.get("parameters", [])]) if isinstance(p, dict)]
    # An operation's parameter replaces a path item's of the same name and location.
    unique = {(p.get("name"), p.get("in")): p for p in params}
    out = {k: v for k, v in op.items() if k not in ("parameters", "responses", "consumes", "produces", "schemes")}
    out["parameters"] = [_parameter(p) for p in unique.values() if p.get("in") in ("path", "query", "header")]
    body = _body(list(unique.values()), consumes)
    if body is not None:
        out["requestBody"] = body
    out["responses"] = _responses(op.get("responses", {}), produces)
    return out


def _schemes(definitions: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, scheme in definitions.items():
        if not isinstance(scheme, dict):
            continue
        if scheme.get("type") == "basic":
            out[name] = {"type": "http", "scheme": "basic", "description": scheme.get("description", "")}
        else:
            out[name] = scheme
    return out


def _server(doc: dict[str, Any], origin: str) -> list[dict[str, Any]]:
    schemes = doc.get("schemes") or []
    scheme = "https" if "https" in schemes or not schemes else schemes[0]
    base = doc.get("basePath", "") or ""
    host = doc.get("host")
    if host:
        return [{"url": f"{scheme}://{host}{base}"}]
    return [{"url": base or "/"}]


def convert(doc: dict[str, Any], origin: str) -> dict[str, Any]:
    """An OpenAPI 3.0 document with the same operations, schemas and security as the Swagger 2.0 one."""
    paths: dict[str, Any] = {}
    for path, item in (doc.get("paths") or {}).items():
        if not isinstance(item, dict):
            continue
        shared = item.get("parameters", [])
        paths[path] = {
            m: _operation(doc, op, shared) for m, op in item.items() if m in _METHODS and isinstance(op, dict)
        }
    parameters = {n: _parameter(p) for n, p in (doc.get("parameters") or {}).items() if isinstance(p, dict)}
    converted = {
        "openapi": "3.0.3",
        "info": doc.get("info", {}),
        "servers": _server(doc, origin),
        "paths": paths,
        "components": {
            "schemas": doc.get("definitions") or {},
            "parameters": {n: p for n, p in parameters.items() if p.get("in") in ("path", "query", "header")},
            "responses": _responses(doc.get("responses") or {}, doc.get("produces") or []),
            "securitySchemes": _schemes(doc.get("securityDefinitions") or {}),
        },
    }
    if "security" in doc:
        converted["security"] = doc["security"]
    if "tags" in doc:
        converted["tags"] = doc["tags"]
    return _refs(converted)
