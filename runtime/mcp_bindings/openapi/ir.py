"""The IR of an OpenAPI description: what the renderer reads, never the raw document.

Schemas are named JSON Schema definitions (references already `#/$defs/<Name>`, OpenAPI's dialect
brought to JSON Schema by `normalise`), which the renderer hands to datamodel-code-generator as the
protocol models' are; operations, their parameters, bodies and responses, and the security schemes
are small frozen dataclasses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, cast

DEFS_PREFIX = "#/$defs/"  # where every reference of the IR's schemas points (`normalise`)

# A file part of a multipart body, as a tool takes it: the bytes base64-encoded (JSON has no bytes),
# with the file name and media type the part is sent with (an API may read either: FastAPI's
# `UploadFile.filename` and `.content_type`). One definition all file parts share (`lower`).
FILE_PART: dict[str, Any] = {
    "type": "object",
    "description": "A file: its content base64-encoded, with the file name and media type it is sent with.",
    "properties": {
        "content": {"type": "string", "description": "The file's bytes, base64-encoded."},
        "name": {"type": "string", "description": "The file name sent with it (default: the part's name)."},
        "mimeType": {"type": "string", "description": "Its media type (default: application/octet-stream)."},
    },
    "required": ["content"],
    "additionalProperties": False,
}

Location = Literal["path", "query", "header", "cookie"]
# How a success response is given back: JSON (validated, structured), text, bytes, or nothing.
ResponseKind = Literal["json", "text", "binary", "empty"]
BodyKind = Literal["json", "form", "multipart", "text", "binary"]
SchemeKind = Literal["bearer", "basic", "api_key", "oauth2"]


@dataclass(frozen=True)
class Param:
    prop: str  # the property of the tool's input schema
    name: str  # the name on the wire
    location: Location
    required: bool
    explode: bool = True  # arrays and objects in a query: repeated keys (form, explode), else comma-joined
    deep: bool = False  # `style: deepObject`: `name[key]=value`


@dataclass(frozen=True)
class Body:
    prop: str
    media_type: str
    kind: BodyKind
    required: bool
    files: tuple[str, ...] = ()  # multipart: the parts that are files (`FILE_PART` objects, or arrays of them)


@dataclass(frozen=True)
class Response:
    status: str  # "200", "2XX", "default"
    kind: ResponseKind
    media_type: str | None
    schema: str | None  # the definition the JSON answer is validated into (None: taken as it is)


@dataclass(frozen=True)
class Operation:
    tool: str  # the tool's name (operationId, sanitised and unique)
    function: str  # the Python function serving it
    method: str  # upper case
    path: str  # the path template, as the description writes it
    description: str
    tags: tuple[str, ...]
    arguments: str  # the definition of the tool's input schema (an object of params and body)
    params: tuple[Param, ...]
    body: Body | None
    response: Response
    security: tuple[tuple[str, ...], ...]  # alternatives, each the schemes it needs together; () none
    deprecated: bool = False
    resource: bool = False  # served as a resource (or a resource template) by the route map, not a tool


def tool_annotations(method: str) -> dict[str, bool]:
    """The tool hints an HTTP method implies (every operation reaches the API: open world)."""
    hints: dict[str, bool] = {"openWorldHint": True}
    if method in ("GET", "HEAD", "OPTIONS"):
        hints["readOnlyHint"] = True
    else:
        hints["destructiveHint"] = method == "DELETE"
        if method in ("PUT", "DELETE"):
            hints["idempotentHint"] = True
    return hints


def resource_uri(op: Operation, scheme: str, var: Callable[[Param], str]) -> str:
    """A resource operation's URI (template): `SCHEME://` then its path, each path parameter the
    variable `var(param)` names, and its required query parameters as a form-style query expansion
    (`{?q,lang}`); optional parameters keep their defaults (so the URI does not change when the API
    adds one). No variable: a plain resource."""
    path = op.path.lstrip("/")
    query: list[str] = []
    for param in op.params:
        if param.location == "path":
            path = path.replace("{" + param.name + "}", "{" + var(param) + "}")
        elif param.location == "query" and param.required:
            query.append(var(param))
    return f"{scheme}://{path}" + ("{?" + ",".join(query) + "}" if query else "")


@dataclass(frozen=True)
class Scheme:
    name: str  # as the description names it
    kind: SchemeKind
    env: tuple[str, ...]  # the variables it reads: (token,) / (user, password) / (key,) / (client id, secret)
    location: Location | None = None  # api_key: where the key goes
    param: str | None = None  # api_key: the header, query or cookie name
    description: str = ""
    token_url: str | None = None  # oauth2 (the client credentials flow): where tokens are asked for
    scopes: tuple[str, ...] = ()  # oauth2: every scope an operation asks of it (one token for them all)


@dataclass(frozen=True)
class Skipped:
    what: str  # `GET /files/{id}`
    reason: str


@dataclass
class ApiIR:
    title: str
    api_version: str
    description: str
    source: str  # where the description came from, for the generated headers
    sha256: str
    openapi: str  # the version of the input (`2.0` for converted Swagger)
    base_url: str
    uri_scheme: str = "api"  # of the resources' URIs (the package's name, `_` as `-`)
    schemas: dict[str, Any] = field(default_factory=dict[str, Any])  # definition name -> JSON Schema
    operations: list[Operation] = field(default_factory=list[Operation])
    schemes: dict[str, Scheme] = field(default_factory=dict[str, Scheme])
    skipped: list[Skipped] = field(default_factory=list[Skipped])


def _refs(node: Any, found: list[str]) -> None:
    if isinstance(node, dict):
        for key, value in cast("dict[str, Any]", node).items():
            if key == "$ref" and isinstance(value, str) and value.startswith(DEFS_PREFIX):
                found.append(value[len(DEFS_PREFIX) :])
            else:
                _refs(value, found)
    elif isinstance(node, list):
        for value in cast("list[Any]", node):
            _refs(value, found)


def closed_schema(ir: ApiIR, name: str) -> dict[str, Any]:
    """The definition `name` with every definition it reaches under `$defs`: a schema on its own."""
    top = dict(ir.schemas.get(name) or {})
    defs: dict[str, Any] = {}
    todo: list[str] = []
    _refs(top, todo)
    while todo:
        current = todo.pop()
        if current in defs or current not in ir.schemas:
            continue
        defs[current] = ir.schemas[current]
        _refs(defs[current], todo)
    return {**top, "$defs": defs} if defs else top
