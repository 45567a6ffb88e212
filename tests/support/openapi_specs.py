"""OpenAPI descriptions made for the generated-models tests (tests/openapi/): many models over
several modules, and names that collide with the generated server's and pydantic's own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp_bindgen.openapi.model_modules import CHUNK

UNUSED = 2 * CHUNK  # schemas no operation refers to: enough to fill a module of their own
NODES = CHUNK + 50


def many_models(count: int = NODES) -> dict[str, Any]:
    """A description with more models than two modules hold: a tree (each refers to the one at half its
    number), a pair referring to each other, and schemas no operation uses."""
    schemas: dict[str, Any] = {"Node0": {"type": "object", "properties": {"id": {"type": "integer"}}}}
    for i in range(1, count):
        schemas[f"Node{i}"] = {
            "type": "object",
            "properties": {"id": {"type": "integer"}, "prev": {"$ref": f"#/components/schemas/Node{i // 2}"}},
        }
    schemas["Ping"] = {"type": "object", "properties": {"pong": {"$ref": "#/components/schemas/Pong"}}}
    schemas["Pong"] = {"type": "object", "properties": {"ping": {"$ref": "#/components/schemas/Ping"}}}
    for i in range(UNUSED):
        schemas[f"Zunused{i}"] = {"type": "object", "properties": {"n": {"type": "string"}}}
    answer = {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": ""}}}}}

    def get(ref: str) -> dict[str, Any]:
        responses = json.loads(json.dumps(answer))
        responses["200"]["content"]["application/json"]["schema"]["$ref"] = f"#/components/schemas/{ref}"
        return {"get": {"operationId": f"get{ref}", "responses": responses}}

    return {
        "openapi": "3.0.3",
        "info": {"title": "Many", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {"/last": get(f"Node{count - 1}"), "/ping": get("Ping")},
        "components": {"schemas": schemas},
    }


def reserved_names() -> dict[str, Any]:
    """Arguments named as the generated server's own names (`api`, `ops`) and as pydantic's
    (`model_dump`, `__pydantic_extra__`), models with typed extra keys (additionalProperties), and
    one deriving from another (`allOf`) that makes a base's optional field required (GitHub's
    `apps/create-from-manifest` answer)."""
    app = {
        "allOf": [
            {"$ref": "#/components/schemas/Integration"},
            {"type": "object", "required": ["client_id"], "properties": {"client_id": {"type": "string"}}},
        ]
    }
    made = {"201": {"description": "made", "content": {"application/json": {"schema": app}}}}
    query = [{"name": n, "in": "query", "schema": {"type": "string"}} for n in ("ops", "app", "__pydantic_extra__")]
    return {
        "openapi": "3.0.3",
        "info": {"title": "Names", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {
            "/apps": {"post": {"operationId": "makeApp", "responses": made}},
            "/things/{api}": {
                "post": {
                    "operationId": "makeThing",
                    "parameters": [
                        {"name": "api", "in": "path", "required": True, "schema": {"type": "string"}},
                        *query,
                        {"name": "model_dump", "in": "header", "schema": {"type": "string"}},
                    ],
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}},
                    },
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Labels"}}},
                        }
                    },
                }
            },
        },
        "components": {
            "schemas": {
                "Labels": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "additionalProperties": {"type": "string"},
                },
                "Integration": {
                    "type": "object",
                    "properties": {"client_id": {"type": "string"}, "name": {"type": "string"}},
                },
                "Thing": {
                    "type": "object",
                    "properties": {
                        "__pydantic_extra__": {"type": "object", "additionalProperties": {"type": "string"}},
                        "model_dump": {"type": "string"},
                        "model_validate_json": {"type": "string"},
                        "class": {"type": "string"},
                        "annotations": {"type": "string"},  # once a second `from __future__` import
                    },
                },
            }
        },
    }


def write_spec(folder: Path, name: str, spec: dict[str, Any]) -> Path:
    path = folder / f"{name}.json"
    path.write_text(json.dumps(spec))
    return path
