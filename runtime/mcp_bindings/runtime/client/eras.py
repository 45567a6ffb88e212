"""Which version a typed call follows, in one place: its availability, params and result follow the
*negotiated* version; the stub's version only chooses the Python types the caller sees, crossed
with the generated crossing tables the server side uses (`protocol.crossing`).

With `protocol_version="auto"` a client written on one stub may speak either lifecycle era
(2025-11-25's `initialize` handshake, or 2026-07-28's stateless requests). A call the negotiated
version does not have raises `NotExpressible` naming that version before anything is sent; a call
the stub's version does not have (a request of the other era: `policy/era_methods.json` of the
generator) is sent by name and answers the stub's type of the same name, else the JSON object.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_bindings.runtime.protocol import crossing, versions
from mcp_bindings.runtime.protocol.spec import MethodSpec, ProtocolTables
from mcp_bindings.runtime.rpc.errors import METHOD_NOT_FOUND, McpError, NotExpressible
from mcp_bindings.v2025_11_25 import names as v2025

if TYPE_CHECKING:
    from mcp_bindings.runtime.client.runtime import ClientRuntime

SET_LEVEL = v2025.LOGGING_SET_LEVEL
# A task-augmented request's param (2025-11-25): the task-handle hook refuses it by its capability
# (`task_handle.call_as_task`: `CapabilityError` naming `tasks.requests.<method>`), not this module,
# where the stub's or the session's version has it; where neither has it (a stub that takes it as the
# other era's param, policy/era_methods.json, on a session without core tasks) this module refuses it.
TASK = "task"


def connected(runtime: ClientRuntime, method: str) -> ProtocolTables:
    """The negotiated version's tables (McpError before the session is open)."""
    if runtime.protocol is None:
        raise McpError(METHOD_NOT_FOUND, f"{method}: not connected")
    return runtime.protocol


def missing(runtime: ClientRuntime, method: str) -> NotExpressible:
    """The error of a call the negotiated version does not have."""
    version = runtime.version or "?"
    stub = f"; the client's stub is MCP {runtime.stub_version}" if runtime.stub_version != version else ""
    return NotExpressible(f"{method} does not exist in MCP {version}, which this session speaks{stub}", version=version)


def negotiated(runtime: ClientRuntime, method: str, kind: str = "request") -> MethodSpec:
    """The negotiated version's spec of a method the client sends, or `NotExpressible` naming it."""
    protocol = connected(runtime, method)
    table = protocol.client_requests if kind == "request" else protocol.client_notifications
    spec = table.get(method)
    if spec is None:
        raise missing(runtime, method)
    return spec


def stub_spec(runtime: ClientRuntime, spec: MethodSpec, result: Any = None) -> MethodSpec:
    """The stub's spec of a method the negotiated version has; for a method of the other era (not
    in the stub's version) the negotiated spec whose result is the stub's `result` type (None: the
    JSON object, see `typed_result`)."""
    table = runtime.stub.client_requests if spec.kind == "request" else runtime.stub.client_notifications
    own = table.get(spec.method)
    return own if own is not None else spec.replace(params=None, result=result)


def params(runtime: ClientRuntime, stub: MethodSpec, spec: MethodSpec, data: Any) -> Any:
    """The params (wire JSON) as the negotiated version's. In the stub's own version they are checked
    against its model (a bad argument is refused here, with its path); in the other they are
    crossed (the pair's generated crossing table), and a param that version cannot carry is `NotExpressible`
    unless the policy drops it."""
    if data is None or spec.params is None:
        return data
    version = runtime.version or "?"
    if data.get(TASK) is not None and not (versions.defines(spec.params, TASK) or versions.defines(stub.params, TASK)):
        raise NotExpressible(
            f"cannot send {spec.method} with task= in MCP {version}, which this session speaks: params.task "
            "does not exist there (a task-augmented request is MCP 2025-11-25's; from 2026-07-28 on, a client "
            "that declares the tasks extension gets a task where the server makes the call one)",
            version=version,
        )
    if runtime.protocol is runtime.stub:
        if stub.params is not None:
            versions.validate_params(spec, data)
        return data
    return crossing.cross_params(
        data,
        spec.params,
        method=spec.method,
        source=runtime.stub_version,
        destination=version,
        keep=frozenset({pg.param for pg in stub.param_gates} | {TASK}),
        where=f"in MCP {version}, which this session speaks",
    )


def result(runtime: ClientRuntime, stub: MethodSpec, spec: MethodSpec, value: Any) -> Any:
    """A result validated in the negotiated version as the stub's type (`value` itself where they
    are the same version; the JSON object where the stub's version has no such type)."""
    if runtime.protocol is runtime.stub:
        return value
    if stub.result is None:
        return versions.dump(value)
    what, source, destination = f"the {spec.method} result", runtime.version or "?", runtime.stub_version
    return crossing.cross(versions.dump(value), stub.result, what=what, source=source, destination=destination)


async def set_logging_level(runtime: ClientRuntime, level: str, timeout: float | None) -> None:
    """`logging/setLevel` on a handshake session (a request: the server must advertise `logging`);
    in the stateless era the level every later request carries in `_meta`, whichever stub the client
    is written on. That is the client opting in (the schema's words), nothing is sent: it needs no
    capability, which servers there may leave out (the official SDK 2.x deprecates it, SEP-2577, yet
    sends the messages a request asks for). The server checks the level: -32602 on the next request
    if it is no level."""
    protocol = connected(runtime, SET_LEVEL)
    spec = protocol.client_requests.get(SET_LEVEL)
    if spec is not None:
        await runtime.call(stub_spec(runtime, spec), {"level": level}, timeout=timeout)
        return
    if protocol.meta.log_level is None:
        raise missing(runtime, SET_LEVEL)
    own = runtime.stub.client_requests.get(SET_LEVEL)
    if own is not None:  # the stub's level type: a bad level is refused now
        versions.validate_params(own, {"level": level})
    runtime.log_level = level
