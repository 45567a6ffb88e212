"""Ours' per-message path for the message-path benchmark: the same calls the runtime makes.

Request: decode + classify (runtime.jsonrpc), look up the method in the generated table, validate the
params with the version's model, run the echo handler, serialise the result model with pydantic,
frame the response. Result: classify + validate with the typed result of the method (the client's
receive side), then serialise and frame it (the server's send side). Notification: decode + validate
the params, then encode.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchmarks.corpus import CorpusItem


def build(corpus: Sequence[CorpusItem]) -> Mapping[str, Callable[[], bytes]]:
    from mcp_bindings.runtime import jsonrpc, versions

    out: dict[str, Callable[[], bytes]] = {}
    for item in corpus:
        protocol = versions.methods_of(item.protocol_version)
        models = protocol.m
        if item.kind == "request":
            spec = protocol.CLIENT_REQUESTS[item.method]

            def request_path(wire: bytes = item.wire, spec: Any = spec, models: Any = models) -> bytes:
                message = jsonrpc.classify(jsonrpc.decode(wire))
                params = versions.validate(spec.params, message.params)
                text = str((params.arguments or {}).get("text", ""))
                result = models.CallToolResult(content=[models.TextContent(type="text", text=text)])
                return jsonrpc.encode_result(message.id, versions.to_json(result)) + b"\n"

            out[item.name] = request_path
        elif item.kind == "result":
            spec = protocol.CLIENT_REQUESTS[item.method]

            def result_path(wire: bytes = item.wire, spec: Any = spec) -> bytes:
                message = jsonrpc.classify(jsonrpc.decode(wire))
                result = versions.validate(spec.result, message.result)
                return jsonrpc.encode_result(message.id, versions.to_json(result)) + b"\n"

            out[item.name] = result_path
        else:
            spec = protocol.SERVER_NOTIFICATIONS[item.method]

            def notification_path(wire: bytes = item.wire, spec: Any = spec) -> bytes:
                message = jsonrpc.classify(jsonrpc.decode(wire))
                params = versions.validate(spec.params, message.params)
                return jsonrpc.encode_notification(message.method, versions.dump(params)) + b"\n"

            out[item.name] = notification_path
    return out
