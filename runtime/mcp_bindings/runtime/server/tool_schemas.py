"""Tool schemas enforced on both sides: `tools/call` arguments against the tool's `inputSchema` (server),
`structuredContent` against its `outputSchema` (server and client).

The spec: servers MUST validate all tool inputs, and input validation errors are tool execution
errors (a `CallToolResult` with `isError: true`, which the model can act on); a tool with an output
schema MUST return structured results that conform to it, and clients SHOULD validate them.

Where the schemas come from: the tools/list results themselves. A server's runtime remembers every
tool definition its `list_tools` handler returns, in two catalogs: the connection's (what this client
was shown) and the server object's (the latest definition of each name, listed to anyone). A call is
checked against the definition its connection was shown (so per-client lists are honoured), else
against the server's latest (clients that call without listing first or past the pages they read, the
stateless HTTP runtime). A client remembers what its own tools/list calls returned, and forgets it on
`notifications/tools/list_changed`. Pages add to what is known; a name listed again replaces its
definition. A tool never listed is not checked (the official Python SDK calls its list_tools handler
on such a miss; a runtime cannot call a handler on its own, outside any client's request).

Outcomes:
* server, arguments that violate the inputSchema: the handler is not called; the answer is a
  `CallToolResult` with `isError: true` whose text lists the violations (JSON path and message each,
  at most `json_schema.MAX_VIOLATIONS`). Missing arguments are checked as `{}`.
* server, a result without `isError: true` whose `structuredContent` is missing or violates the
  outputSchema: a JSON-RPC internal error (-32603) naming the tool and the violations, logged. Not
  an `isError` result: the fault is the server's, not something the model can correct by calling
  again with other arguments, and an error result would hide a broken contract from the server's
  author (the official Python SDK answers `isError` here; the TypeScript SDK a JSON-RPC error).
* client, the same check on what arrives: `ToolOutputError` (an `McpError`, -32603) naming the tool
  and the violations.
* a schema that cannot be used (see `json_schema`): logged once, then not enforced.

Schemas are compiled on the first call that needs them, once per distinct schema (`json_schema.compiled`).
Their default dialect is the protocol version's: the one its own schema is written in
(`VersionInfo.schema_dialect`: JSON Schema 2020-12 from 2025-11-25, SEP-1613; draft-07 before); a
`$schema` keyword is honoured. A server's definitions are read in its stub's version; a client's in
the negotiated one. A server turns all of this off with
`validate_tools = False` on its class; a client with `runtime.tool_checks.enabled = False`.

Not covered: the result of a stateless-era handler that asked for input and is called again by the
version bridge for a handshake-era client (the bridge calls it itself); the client still checks it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from mcp_bindings.runtime.protocol import registry, versions
from mcp_bindings.runtime.protocol.json_schema import (
    DRAFT_07,
    DRAFT_2020_12,
    MAX_VIOLATIONS,
    Check,
    CompiledSchema,
    Violation,
    compiled,
    describe,
)
from mcp_bindings.runtime.protocol.spec import VersionInfo
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, McpError
from mcp_bindings.runtime.server.notifications import host_for
from mcp_bindings.runtime.server.seam import Plan, ServerFeature, around

if TYPE_CHECKING:
    from mcp_bindings.runtime.server.peer import PeerView
    from mcp_bindings.runtime.server.runtime import ServerRuntime
    from mcp_bindings.runtime.server.stubs import ServerStub

__all__ = [
    "TOOLS_LIST_CHANGED",
    "TOOL_METHODS",
    "ClientToolChecks",
    "ServerToolChecks",
    "ToolCatalog",
    "ToolDefinition",
    "ToolOutputError",
    "declare_tools",
    "default_dialect",
]

log = logs.logger("tool_schemas")

TOOLS_LIST = "tools/list"
TOOLS_CALL = "tools/call"
TOOL_METHODS = frozenset({TOOLS_LIST, TOOLS_CALL})
TOOLS_LIST_CHANGED = "notifications/tools/list_changed"

Handler = Callable[[Any, Any], Awaitable[Any]]
ToolHook = Callable[[Handler, Any, Any, Any], Awaitable[Any]]  # (handler, params, context, raw params)


def default_dialect(version: str | VersionInfo) -> str:
    """The JSON Schema dialect of a tool schema without `$schema`, in a protocol version (given by
    wire version or by its `VersionInfo`): the dialect the version's own schema is written in, as
    the spec makes them the same (SEP-1613: 2020-12 for both from 2025-11-25, draft-07 before)."""
    info = version if isinstance(version, VersionInfo) else registry.info(version)
    return DRAFT_2020_12 if info.schema_dialect == "2020-12" else DRAFT_07


class ToolOutputError(McpError):
    """A tools/call result whose `structuredContent` is missing or does not satisfy the tool's outputSchema."""

    def __init__(self, tool: str, violations: list[Violation]) -> None:
        if violations:
            what = f"returned structuredContent that does not match its outputSchema:\n{describe(violations)}"
        else:
            what = "has an outputSchema but its result has no structuredContent"
        data = {"tool": tool, "violations": [v._asdict() for v in violations[:MAX_VIOLATIONS]]}
        super().__init__(INTERNAL_ERROR, f"tool {tool!r} {what}", data)
        self.tool = tool
        self.violations = violations


# -- what tools/list said -------------------------------------------------------------------------


class ToolDefinition:
    """One listed tool's schemas, as the JSON they were listed with; compiled on first use (`resolve`)."""

    __slots__ = ("accepts", "dialect", "input_schema", "input_source", "name", "output_schema", "output_source")

    def __init__(self, name: str, input_source: bytes | None, output_source: bytes | None, dialect: str) -> None:
        self.name = name
        self.input_source = input_source
        self.output_source = output_source
        self.dialect = dialect
        # Once resolved: the usable schemas (None: none listed, or one that cannot be used), and what
        # the arguments meet first: True when they are valid for sure (the inputSchema's fast check;
        # always True without an inputSchema), False when `input_schema.violations` must tell.
        self.input_schema: CompiledSchema | None = None
        self.output_schema: CompiledSchema | None = None
        self.accepts: Check | None = None  # None: not resolved yet

    def same_as(self, other: ToolDefinition) -> bool:
        return (self.input_source, self.output_source, self.dialect) == (
            other.input_source,
            other.output_source,
            other.dialect,
        )

    def resolve(self) -> Check:
        """Compile the schemas (once: `json_schema.compiled`) and return `accepts`."""
        accepts = self.accepts
        if accepts is None:
            self.input_schema = _resolve(self.name, "inputSchema", self.input_source, self.dialect)
            self.output_schema = _resolve(self.name, "outputSchema", self.output_source, self.dialect)
            schema = self.input_schema
            accepts = self.accepts = _always if schema is None else schema.fast or _unsure
        return accepts


def _always(value: Any) -> bool:
    return True


def _unsure(value: Any) -> bool:
    return False


def _resolve(tool: str, which: str, source: bytes | None, dialect: str) -> CompiledSchema | None:
    if source is None:
        return None
    schema = compiled(source, dialect)
    if schema.usable:
        return schema
    _report(tool, which, schema)
    return None


def _report(tool: str, which: str, schema: CompiledSchema) -> None:
    """Tell, once per schema, that it cannot be used (and so is not enforced)."""
    if not schema.reported:  # once per schema: on a client, what is logged comes from the server
        schema.reported = True
        log.error("tool %.100r: its %s is not enforced: it is %s", tool, which, schema.problem)


def definitions(tools: Iterable[Any], dialect: str) -> list[ToolDefinition]:
    """The definitions in a tools/list result's `tools` (models or decoded JSON); malformed ones skipped."""
    out: list[ToolDefinition] = []
    for tool in tools:
        if isinstance(tool, BaseModel):
            name = getattr(tool, "name", None)
            input_schema, output_schema = getattr(tool, "input_schema", None), getattr(tool, "output_schema", None)
        elif isinstance(tool, dict):
            name, input_schema, output_schema = tool.get("name"), tool.get("inputSchema"), tool.get("outputSchema")
        else:
            continue
        if isinstance(name, str):
            out.append(ToolDefinition(name, _source(input_schema), _source(output_schema), dialect))
    return out


def _source(schema: Any) -> bytes | None:
    """A schema as the JSON clients see (a model is written as on the wire)."""
    if schema is None:
        return None
    try:
        return versions.to_json(schema) if isinstance(schema, BaseModel) else orjson.dumps(schema)
    except Exception:  # noqa: BLE001 - not writable as JSON (e.g. nested deeper than orjson writes)
        return b'"not writable as JSON"'  # compiles to "not a JSON Schema": reported once, not enforced


class ToolCatalog:
    """Tool definitions by name, as listed."""

    __slots__ = ("tools",)

    def __init__(self) -> None:
        self.tools: dict[str, ToolDefinition] = {}

    def remember(self, listed: Iterable[ToolDefinition]) -> None:
        tools = self.tools
        for definition in listed:
            known = tools.get(definition.name)
            if known is None or not known.same_as(definition):  # unchanged: keep what is compiled
                tools[definition.name] = definition

    def forget(self) -> None:
        self.tools.clear()


# -- the server side ------------------------------------------------------------------------------


def _shared_catalog(server: ServerStub) -> ToolCatalog:
    """The server's catalog (latest definitions listed to any connection), kept by its host."""
    host = host_for(server)
    if host.tool_catalog is None:
        host.tool_catalog = ToolCatalog()
    catalog: ToolCatalog = host.tool_catalog
    return catalog


def declare_tools(server: ServerStub, tools: Iterable[Any]) -> None:
    """Check calls to `tools` (models or decoded JSON) as if a client had listed them: for servers
    that know their tools up front (the authoring layer, `mcp_bindings.runtime.app`)."""
    _shared_catalog(server).remember(definitions(tools, default_dialect(server.protocol.info)))


class ServerToolChecks:
    """The tool schemas of one server connection (`ServerRuntime`): what runs around its list_tools and
    call_tool handlers (`hook`)."""

    __slots__ = ("_listed", "_result_type", "_shared", "dialect", "listed", "shared")

    def __init__(self, server: ServerStub) -> None:
        protocol = server.protocol
        self.dialect = default_dialect(protocol.info)
        self.listed = ToolCatalog()  # shown to this connection
        self.shared = _shared_catalog(server)
        self._listed, self._shared = self.listed.tools, self.shared.tools  # read on every call
        call = protocol.client_requests.get(TOOLS_CALL)
        self._result_type: Any = call.result if call is not None else None

    def hook(self, method: str) -> ToolHook | None:
        """What wraps the handler of `method` (None: nothing)."""
        if method == TOOLS_LIST:
            return self.list_tools
        if method == TOOLS_CALL and self._result_type is not None:
            return self.call_tool
        return None

    async def list_tools(self, handler: Handler, params: Any, context: Any, raw: Any) -> Any:
        result = await handler(params, context)
        tools = result.get("tools") if isinstance(result, dict) else getattr(result, "tools", None)
        if isinstance(tools, list):
            listed = definitions(tools, self.dialect)  # pyright: ignore[reportUnknownArgumentType]
            self.listed.remember(listed)
            self.shared.remember(listed)
        return result

    def call_tool(self, handler: Handler, params: Any, context: Any, raw: Any) -> Awaitable[Any]:
        """Check the arguments (`raw`: the request's params as received) against the tool's definition
        as listed to this connection, else as last listed to any connection; then the handler's result
        against its outputSchema. Returns what the runtime awaits: the handler's own
        coroutine where there is nothing to check after it (no extra frame on the usual path)."""
        # On every tools/call: kept to a few operations (a lookup, the schema's generated fast check).
        name = raw["name"]  # validated: a dict with a string name
        tool = self._listed.get(name) or self._shared.get(name)
        if tool is None:
            return handler(params, context)
        arguments = raw.get("arguments")
        if arguments is None:
            arguments = {}
        if not (tool.accepts or tool.resolve())(arguments):
            refusal = self._refusal(tool, arguments)
            if refusal is not None:
                return _ready(refusal)
        if tool.output_schema is None:
            return handler(params, context)
        return self._checked(tool, handler(params, context))

    async def _checked(self, tool: ToolDefinition, call: Awaitable[Any]) -> Any:
        result = await call
        output = tool.output_schema
        assert output is not None
        if type(result) is self._result_type:  # the usual CallToolResult: read directly
            structured, fast = result.structured_content, output.fast
            if result.is_error is not True and (structured is None or fast is None or not fast(structured)):
                self._check_result(tool.name, output, result)
        else:
            self._check_result(tool.name, output, result)
        return result

    def _refusal(self, tool: ToolDefinition, arguments: Any) -> Any:
        """The tool execution error for arguments that violate the inputSchema, in the stub's version;
        None if they do not (the fast check was not sure)."""
        schema = tool.input_schema
        assert schema is not None
        violations = schema.violations(arguments)
        if not violations:
            if schema.problem is not None:
                _report(tool.name, "inputSchema", schema)
            return None
        log.debug("tools/call %r refused: its arguments violate the inputSchema", tool.name)
        text = f"Input validation error: the arguments do not match the inputSchema of tool {tool.name!r}:\n"
        data = {"content": [{"type": "text", "text": text + describe(violations)}], "isError": True}
        return versions.validate(self._result_type, data)

    def _check_result(self, name: str, output: CompiledSchema, result: Any) -> None:
        if isinstance(result, BaseModel):
            if getattr(result, "is_error", None) is True or getattr(result, "content", None) is None:
                return  # a tool execution error, or not a CallToolResult (asks for input, creates a task)
            structured = getattr(result, "structured_content", None)
        elif isinstance(result, dict):
            if result.get("isError") is True or "content" not in result:
                return
            structured = result.get("structuredContent")
        else:
            return  # the bridge refuses it
        violations: list[Violation] = []
        if structured is not None:
            violations = output.violations(structured)
            if violations:
                violations = output.violations(_wire(structured))  # judged as written: tuples, enums, dates...
            if not violations:
                if output.problem is not None:
                    _report(name, "outputSchema", output)
                return
        error = ToolOutputError(name, violations)
        log.error("tools/call %r answered with an internal error: %s", name, error.message)
        raise error


async def _ready(value: Any) -> Any:
    return value


def _wire(value: Any) -> Any:
    """A handler's value as the JSON it is written as."""
    try:
        return to_jsonable_python(value)
    except Exception:  # noqa: BLE001 - not serialisable: the bridge reports that
        return value


# -- the client side ------------------------------------------------------------------------------


class ClientToolChecks:
    """What a client checks of tool results: remembers tools/list results, checks tools/call ones."""

    __slots__ = ("catalog", "enabled")

    def __init__(self) -> None:
        self.catalog = ToolCatalog()
        self.enabled = True

    def on_result(self, method: str, params: Any, raw: Any, version: str) -> None:
        """After a tools/list or tools/call result arrived (decoded JSON, already typed as valid)."""
        if not self.enabled or not isinstance(raw, dict):
            return
        if method == TOOLS_LIST:
            tools = raw.get("tools")
            if isinstance(tools, list):
                self.catalog.remember(definitions(tools, default_dialect(version)))  # pyright: ignore[reportUnknownArgumentType]
            return
        name = params.get("name") if isinstance(params, dict) else None
        tool = self.catalog.tools.get(name) if isinstance(name, str) else None
        if tool is not None:
            tool.resolve()
        output = tool.output_schema if tool is not None else None
        if tool is None or output is None or raw.get("isError") is True or "content" not in raw:
            return
        structured = raw.get("structuredContent")
        violations = output.violations(structured) if structured is not None else []
        if structured is None or violations:
            raise ToolOutputError(tool.name, violations)
        if output.problem is not None:
            _report(tool.name, "outputSchema", output)

    def forget(self) -> None:
        """Forget the listed tools (on `notifications/tools/list_changed`): unchecked until listed again."""
        self.catalog.forget()


class ToolChecks(ServerFeature):
    """Tool schema checks on the dispatch seam: around the handlers of tools/list (remember what is
    listed) and tools/call (check the arguments, then the result), per connection, for a server
    whose class keeps `validate_tools` on. The innermost wrapper: it calls the handler itself."""

    def wrap(self, runtime: ServerRuntime, plan: Plan, view: PeerView) -> None:
        if not runtime.server.validate_tools:
            return
        checks = runtime.feature_state.get(self)
        if checks is None:
            checks = runtime.feature_state[self] = ServerToolChecks(runtime.server)
        hook = checks.hook(plan.spec.method)
        if hook is not None:
            plan.wrap(lambda inner: around(hook, inner))
