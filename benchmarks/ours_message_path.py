"""Ours' per-message path for the message-path benchmark: the same calls the runtime makes.

Request (server side): the calls `Session` makes for one frame, around the real dispatcher — decode +
classify (`Session._dispatch_frame`), `ServerRuntime.on_request` of a runtime serving the `echo`
server of ``examples/echo_server.py`` after an `initialize` handshake (route lookup, gate, params
validation with the negotiated version's model, the handler, the result's serialisation), then
`jsonrpc.encode_result` (`Session._answer`) and the newline (`LineTransport.send`). The coroutine is
driven by hand (it never suspends: the echo handler does no I/O); the async plumbing around it
(task spawn, cancel scope, stream writes) is left out, as in the official replay.
Result: classify + validate with the typed result of the method (the client's receive side), then
serialise and frame it (the server's send side). Notification: decode + validate the params, then
encode.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchmarks.corpus import CorpusItem

ECHO_SERVER = Path(__file__).resolve().parent.parent / "examples" / "echo_server.py"


def _complete(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that does not suspend, as the event loop would, and return its value."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError("the request path suspended; the message benchmark needs one that does not")


def _echo_runtime(protocol_version: str) -> tuple[Any, Any]:
    """A ServerRuntime + Session for the example echo server (stub = `protocol_version`), initialized."""
    from mcp_bindings.runtime.rpc import jsonrpc
    from mcp_bindings.runtime.rpc.session import Session
    from mcp_bindings.runtime.server.runtime import ServerRuntime

    spec = importlib.util.spec_from_file_location("_bench_echo_server", ECHO_SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    runtime = ServerRuntime(module.make_server(protocol_version))
    session = Session(None, runtime)  # type: ignore[arg-type]  # no transport: frames are returned, not sent
    initialize = jsonrpc.encode_request(
        0,
        "initialize",
        {
            "protocolVersion": protocol_version,
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    )
    request = jsonrpc.classify(jsonrpc.decode(initialize))
    assert isinstance(request, jsonrpc.Request)
    _complete(runtime.on_request(request, session))
    initialized = jsonrpc.classify({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert isinstance(initialized, jsonrpc.Notification)
    _complete(runtime.on_notification(initialized, session))
    return runtime, session


def build(corpus: Sequence[CorpusItem]) -> Mapping[str, Callable[[], bytes]]:
    from mcp_bindings.runtime.protocol import registry, versions
    from mcp_bindings.runtime.rpc import jsonrpc

    out: dict[str, Callable[[], bytes]] = {}
    for item in corpus:
        protocol = registry.protocol(item.protocol_version)
        if item.kind == "request":
            runtime, session = _echo_runtime(item.protocol_version)

            def request_path(wire: bytes = item.wire, runtime: Any = runtime, session: Any = session) -> bytes:
                message = jsonrpc.classify(jsonrpc.decode(wire))
                assert isinstance(message, jsonrpc.Request)  # the session's routing check (`Session._route`)
                result = _complete(runtime.on_request(message, session))
                return jsonrpc.encode_result(message.id, result) + b"\n"

            out[item.name] = request_path
        elif item.kind == "result":
            spec = protocol.client_requests[item.method]

            def result_path(wire: bytes = item.wire, spec: Any = spec) -> bytes:
                message = jsonrpc.classify(jsonrpc.decode(wire))
                assert isinstance(message, jsonrpc.Response)  # the session's routing check (`Session._route`)
                result = versions.validate(spec.result, message.result)
                return jsonrpc.encode_result(message.id, versions.to_json(result)) + b"\n"

            out[item.name] = result_path
        else:
            spec = protocol.server_notifications[item.method]

            def notification_path(wire: bytes = item.wire, spec: Any = spec) -> bytes:
                message = jsonrpc.classify(jsonrpc.decode(wire))
                assert isinstance(message, jsonrpc.Notification)  # the session's routing check (`Session._route`)
                params = versions.validate(spec.params, message.params)
                return jsonrpc.encode_notification(message.method, versions.dump(params)) + b"\n"

            out[item.name] = notification_path
    return out
