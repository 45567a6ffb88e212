"""`App.openapi(SOURCE, ...)`: an app serving an OpenAPI description's operations as tools at run
time, with no generation step (docs/openapi.md, "At run time").

The description is read and lowered by `mcp_bindings.openapi`, the same stages and IR
`mcp-bindgen openapi` renders from (the same tool names, input schemas, output schemas, route map
and exclusions); each operation's call is `app.openapi.Api.call`, the same call a generated package
makes (the base URL fixed when the app is made, path parameters encoded, redirects to another origin
refused, answers bounded, credentials from the environment). What a generated package adds is code:
pydantic models to read and type-check against. Here the server checks each call's arguments
against the tool's input schema and each structured answer against its output schema
(`server.tool_schemas`), as it does for any tool.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter
from typing_extensions import TypedDict, Unpack

from mcp_bindings.openapi import ir
from mcp_bindings.openapi.errors import DescriptionError
from mcp_bindings.openapi.load import load
from mcp_bindings.openapi.lower import Options, lower
from mcp_bindings.openapi.normalise import as_dict
from mcp_bindings.openapi.routes import Route, read_routes
from mcp_bindings.runtime.app import openapi
from mcp_bindings.runtime.app.context import Context
from mcp_bindings.runtime.app.entries import Entry, ToolEntry
from mcp_bindings.runtime.app.signature import FunctionSignature, analyse
from mcp_bindings.runtime.protocol import registry, reshape

if TYPE_CHECKING:
    import httpx

    from mcp_bindings.runtime.app.core import App

__all__ = ["ApiTool", "OpenApiOptions", "openapi_app", "operation"]

_ANY: TypeAdapter[Any] = TypeAdapter(Any)


class OpenApiOptions(TypedDict, total=False):
    """`App.openapi`'s keyword arguments."""

    name: str  # the app's name, and the first part of the credentials' variables (default: from the title)
    base_url: str  # default: the description's first server (a relative one against its URL)
    routes: Sequence[Route] | str  # a route map: its rules, or a file (`mcp_bindings.openapi.routes`)
    exclude_tags: Collection[str]
    exclude_paths: Sequence[str]  # fnmatch globs over the path template
    exclude_methods: Collection[str]
    env_prefix: str  # of the credentials' environment variables (default: the name in upper case)
    protocol: str  # the MCP version the app is written against (default: the newest)
    timeout: float  # `Api`'s bounds (app.openapi)
    retries: int
    max_response_bytes: int
    environ: Mapping[str, str]  # where credentials are read (default: os.environ, at each call)
    transport: httpx.AsyncBaseTransport  # tests: an httpx transport in place of the network


def operation(op: ir.Operation) -> openapi.Operation:
    """What `Api.call` sends for an operation of the IR (a generated package writes the same literal in
    its operations.py). A JSON answer is taken as it is: the server checks it against the output schema."""
    params = tuple(openapi.Param(p.prop, p.name, p.location, p.explode, p.deep) for p in op.params)
    body = openapi.Body(op.body.prop, op.body.media_type, op.body.kind, op.body.files) if op.body else None
    answer = openapi.Answer(op.response.kind, op.response.media_type)
    return openapi.Operation(op.tool, op.method, op.path, params, body, answer, op.security)


def scheme(found: ir.Scheme) -> openapi.Scheme:
    return openapi.Scheme(found.kind, found.env, found.location, found.param, found.token_url, found.scopes)


async def _with_arguments(arguments: dict[str, Any], ctx: Context[Any]) -> Any:  # pragma: no cover - a signature
    raise NotImplementedError


@cache
def _signature() -> FunctionSignature:
    """The signature every operation's tool shares (analysed once; each tool replaces `fn`)."""
    return analyse(_with_arguments, "an OpenAPI operation's call", model_name="OpenApiArguments")


class ApiTool(ToolEntry):
    """An operation as a tool: the IR's input schema, its call `Api.call` with the arguments as given
    (the server has checked them against the schema), its JSON answer structured content where the
    description gives the answer's schema (`{"result": ...}` where that is not an object), else
    content (text, an embedded blob for binary answers)."""

    __slots__ = ()

    def __init__(self, op: ir.Operation, api_ir: ir.ApiIR, api: openapi.Api, pkg: Any) -> None:
        Entry.__init__(self)
        self.name = op.tool
        call_op = operation(op)

        async def call(arguments: dict[str, Any], ctx: Context[Any]) -> Any:
            return await api.call(call_op, arguments)

        self.fn: Callable[..., Awaitable[Any]] = call
        self.sig = dataclasses.replace(_signature(), fn=call)
        self.arguments = _as_given
        self.task, self.input_first, self.scopes = None, False, ()
        self.output, self.wrap, self.result, self.output_schema = "content", False, None, None
        tool = pkg.Tool
        if op.response.kind == "json" and op.response.schema and reshape.carries(tool, "outputSchema", pkg.INFO.key):
            schema = ir.closed_schema(api_ir, op.response.schema)
            self.wrap = schema.get("type") != "object"  # structuredContent is an object
            if self.wrap:
                defs = schema.pop("$defs", None)
                schema = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
                schema.update({"$defs": defs} if defs else {})
            self.output, self.result, self.output_schema = "structured", _ANY, schema
        definition: dict[str, Any] = {
            "name": op.tool,
            "description": op.description,
            "inputSchema": ir.closed_schema(api_ir, op.arguments),
            "annotations": ir.tool_annotations(op.method),
        }
        if self.output_schema is not None:
            definition["outputSchema"] = self.output_schema
        self.definition = tool.model_validate(definition)


def _as_given(arguments: Any) -> dict[str, Any]:
    return {"arguments": dict(arguments or {})}


def _name(title: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", title.lower()).strip("_") or "api"


def openapi_app(make: Callable[..., App], source: str, **options: Unpack[OpenApiOptions]) -> App:
    """`App.openapi`: an app (made by `make`, the `App` class) with one tool per operation of the
    description at `source` (a file, an `https://` URL, or an `http://` URL of a loopback host).
    `DescriptionError` for a description (or route map) that cannot be served, naming the problem."""
    loaded = load(source)
    routes = options.get("routes", ())
    name = options.get("name") or _name(str(as_dict(loaded.document.get("info")).get("title") or ""))
    lowered = lower(
        loaded,
        Options(
            name=name,
            base_url=options.get("base_url"),
            exclude_tags=frozenset(options.get("exclude_tags", ())),
            exclude_paths=tuple(options.get("exclude_paths", ())),
            exclude_methods=frozenset(m.upper() for m in options.get("exclude_methods", ())),
            env_prefix=options.get("env_prefix"),
            routes=read_routes(routes) if isinstance(routes, str) else tuple(routes),
        ),
    )
    resources = [f"{op.method} {op.path}" for op in lowered.operations if op.resource]
    if resources:
        raise DescriptionError(
            f"{source}: the route map makes {', '.join(resources)} a resource, which App.openapi does not serve "
            "yet (generate the package with `mcp-bindgen openapi` for resources, or route it as a tool)"
        )
    if not lowered.operations:
        raise DescriptionError(f"{source}: no operation is left to make a tool of")
    text = f"Tools calling the {lowered.title} HTTP API at {lowered.base_url}, one per operation of its description."
    app = make(
        name,
        lowered.api_version or "0.1.0",
        instructions=f"{text}\n\n{lowered.description}" if lowered.description else text,
        protocol=options.get("protocol"),
    )
    api = openapi.Api(
        lowered.base_url,
        {key: scheme(found) for key, found in lowered.schemes.items()},
        timeout=options.get("timeout", 30.0),
        retries=options.get("retries", 2),
        max_response_bytes=options.get("max_response_bytes", 16 * 1024 * 1024),
        environ=options.get("environ"),
        transport=options.get("transport"),
    )
    pkg = registry.load_version(app.protocol_version)
    for op in lowered.operations:
        app.registries.tools[op.tool] = ApiTool(op, lowered, api, pkg)
    return app
