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
What both sides share (`ToolDefinition`, `ToolCatalog`, `ToolOutputError`, `default_dialect`) is
`protocol.tool_catalog`; the client's checks are `client.tool_checks`.

Not covered: the result of a stateless-era handler that asked for input and is called again by the
version bridge for a handshake-era client (the bridge calls it itself); the client still checks it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from mcp_bindings.runtime.protocol import reshape, versions
from mcp_bindings.runtime.protocol.json_schema import CompiledSchema, Violation, describe
from mcp_bindings.runtime.protocol.tool_catalog import (
    TOOL_METHODS,
    TOOLS_CALL,
    TOOLS_LIST,
    TOOLS_LIST_CHANGED,
    ToolCatalog,
    ToolDefinition,
    ToolListing,
    ToolOutputError,
    default_dialect,
    definitions,
)
from mcp_bindings.runtime.protocol.tool_catalog import report_unusable as _report
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.server.calls import ServerCall
from mcp_bindings.runtime.server.host import host_for
from mcp_bindings.runtime.server.seam import Plan, ServerAround, ServerFeature, ServerNext, handle

if TYPE_CHECKING:
    from mcp_bindings.runtime.server.peer import PeerView
    from mcp_bindings.runtime.server.runtime import ServerRuntime
    from mcp_bindings.runtime.server.stubs import ServerStub

__all__ = [
    "TOOLS_LIST_CHANGED",
    "TOOL_METHODS",
    "ServerToolChecks",
    "ToolCatalog",
    "ToolDefinition",
    "ToolOutputError",
    "declare_tools",
    "default_dialect",
]

log = logs.logger("tool_schemas")


# -- the server side ------------------------------------------------------------------------------


def _shared_catalog(server: ServerStub) -> ToolCatalog:
    """The server's catalog (latest definitions listed to any connection), kept by its host."""
    return host_for(server).tool_catalog


def declare_tools(server: ServerStub, tools: Iterable[Any]) -> None:
    """Declare the server's whole tool list (models or decoded JSON), for servers that know their
    tools up front (the authoring layer, `mcp_bindings.runtime.app`): calls are checked as if a
    client had listed them, and a tool left out is gone. Declare again after every change."""
    _shared_catalog(server).declare(definitions(tools, default_dialect(server.protocol.info)))


class ServerToolChecks:
    """The tool schemas of one server connection (`ServerRuntime`): what runs around its list_tools and
    call_tool handlers (`hook`)."""

    __slots__ = ("_listed", "_result_type", "_shared", "check_calls", "dialect", "listed", "shared")

    def __init__(self, server: ServerStub, check_calls: bool = True) -> None:
        protocol = server.protocol
        self.check_calls = check_calls
        self.dialect = default_dialect(protocol.info)
        self.listed = ToolCatalog()  # shown to this connection
        self.shared = _shared_catalog(server)
        self._listed, self._shared = self.listed.tools, self.shared.tools  # read on every call
        call = protocol.client_requests.get(TOOLS_CALL)
        self._result_type: Any = call.result if call is not None else None

    def hook(self, method: str) -> ServerAround | None:
        """What wraps the handler of `method` (None: nothing)."""
        if method == TOOLS_LIST:
            return self.list_tools
        if method == TOOLS_CALL and self.check_calls and self._result_type is not None:
            return self.call_tool
        return None

    async def list_tools(self, call: ServerCall, next: ServerNext) -> object:
        result: Any = await next(call)
        tools = result.get("tools") if isinstance(result, dict) else getattr(result, "tools", None)
        if isinstance(tools, list):
            # Written to JSON once; the definitions are made only where a catalog does not hold
            # this very listing already (a server answering the same list again: nothing to do).
            listing = ToolListing(tools, self.dialect)  # pyright: ignore[reportUnknownArgumentType]
            self.listed.take(listing)
            self.shared.take(listing)
        return result

    def call_tool(self, call: ServerCall, next: ServerNext) -> Awaitable[object]:
        """Check the arguments (`call.raw`: the request's params as received) against the tool's definition
        as listed to this connection, else as last listed to any connection; then the handler's result
        against its outputSchema. Returns what the runtime awaits: the handler's own
        coroutine where there is nothing to check after it (no extra frame on the usual path; where
        the rest of the chain is the handler alone, it is called here, one call fewer)."""
        # On every tools/call: kept to a few operations (a lookup, the schema's generated fast check).
        raw: Any = call.raw
        name = raw["name"]  # validated: a dict with a string name
        tool = self._listed.get(name) or self._shared.get(name)
        if tool is None:
            return call.handler(call.params, call.context) if next is handle else next(call)
        arguments = raw.get("arguments")
        if arguments is None:
            arguments = {}
        if not (tool.accepts or tool.resolve())(arguments):
            refusal = self._refusal(tool, arguments)
            if refusal is not None:
                return _ready(refusal)
        answer = call.handler(call.params, call.context) if next is handle else next(call)
        return answer if tool.output_schema is None else self._checked(tool, answer)

    async def _checked(self, tool: ToolDefinition, answer: Awaitable[Any]) -> Any:
        result = await answer
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
        return versions.validate(self._result_type, reshape.shape(data, self._result_type))  # the version's shape

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


class ToolChecks(ServerFeature):
    """The tool catalog and the tool schema checks on the dispatch seam: around the handlers of
    tools/list (remember what is listed: the catalog the stateless wire's header checks read too)
    and, for a server whose class keeps `validate_tools` on, tools/call (check the arguments, then
    the result), per connection. The innermost wrapper: it calls the handler itself."""

    def wrap(self, runtime: ServerRuntime, plan: Plan, view: PeerView) -> None:
        checks = runtime.feature_state.get(self)
        if checks is None:
            checks = runtime.feature_state[self] = ServerToolChecks(runtime.server, runtime.server.validate_tools)
        hook = checks.hook(plan.spec.method)
        if hook is not None:
            plan.wrap(hook)
