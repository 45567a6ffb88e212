"""Message-path implementations for the *official* SDK and the *floor* (see ``corpus.py`` for the contract).

Imported only inside the mixed venv (mcp==2.3.0, orjson). The official path
replays, call for call, what mcp 2.3.0 does per message on its stdio transport
(read with the code in ``mcp/server/stdio.py``, ``mcp/client/stdio.py``,
``mcp/shared/jsonrpc_dispatcher.py``, ``mcp/server/runner.py`` and
``mcp/client/session.py``):

request (server side, handshake era):
    ``jsonrpc_message_adapter.validate_json(line)`` (stdio reader) ->
    ``progress_token_from_params`` (dispatcher) -> ``_extract_meta`` (runner) ->
    ``methods.validate_client_request`` (surface validation) ->
    ``CallToolRequestParams.model_validate`` (handler params) -> handler builds
    ``CallToolResult`` -> ``model_dump(mode="json", by_alias, exclude_none)`` ->
    ``methods.serialize_server_result`` -> ``JSONRPCResponse(...)`` ->
    ``model_dump_json(by_alias, exclude_unset)`` + newline, UTF-8 encoded.
result (client receive, then server send):
    ``validate_json`` -> ``_clamp_inbound_ttl`` -> ``methods.validate_server_result``
    -> later-revision field filter -> ``ListToolsResult.model_validate`` /
    ``_ReadResourceResultAdapter.validate_python``; then the server's
    ``model_dump`` -> ``serialize_server_result`` -> ``JSONRPCResponse`` -> JSON.
notification (client receive, then server send):
    ``validate_json`` -> ``methods.parse_server_notification``; then
    ``model_dump`` -> ``JSONRPCNotification`` -> JSON (``ServerSession._notify``
    + dispatcher ``notify``).

The async plumbing around it (anyio streams, task spawn, OpenTelemetry
middleware, contexts) is not in this figure; the round-trip benchmarks carry it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from benchmarks.corpus import CorpusItem


def floor_message_path(corpus: Sequence[CorpusItem]) -> dict[str, Callable[[], bytes]]:
    import orjson

    loads, dumps, nl = orjson.loads, orjson.dumps, orjson.OPT_APPEND_NEWLINE

    def request_path(wire: bytes) -> Callable[[], bytes]:
        def fn() -> bytes:
            msg = loads(wire)
            text = msg["params"]["arguments"]["text"]
            return dumps(
                {
                    "jsonrpc": "2.0",
                    "id": msg["id"],
                    "result": {"content": [{"type": "text", "text": text}]},
                },
                option=nl,
            )

        return fn

    def passthrough_path(wire: bytes) -> Callable[[], bytes]:
        def fn() -> bytes:
            return dumps(loads(wire), option=nl)

        return fn

    return {
        item.name: (request_path(item.wire) if item.kind == "request" else passthrough_path(item.wire))
        for item in corpus
    }


def official_message_path(corpus: Sequence[CorpusItem]) -> dict[str, Callable[[], bytes]]:
    # The official SDK is installed in the mixed venv only, not in the one that type-checks this file.
    import mcp_types as types  # pyright: ignore[reportMissingImports]
    from mcp.client import session as client_session  # pyright: ignore[reportMissingImports]
    from mcp.server.runner import _extract_meta  # pyright: ignore[reportMissingImports]
    from mcp.shared.jsonrpc_dispatcher import progress_token_from_params  # pyright: ignore[reportMissingImports]
    from mcp_types import methods  # pyright: ignore[reportMissingImports]

    adapter = types.jsonrpc_message_adapter
    JSONRPCRequest, JSONRPCResponse, JSONRPCNotification = (
        types.JSONRPCRequest,
        types.JSONRPCResponse,
        types.JSONRPCNotification,
    )
    clamp = client_session._clamp_inbound_ttl
    later_fields = client_session._later_revision_fields
    result_types: Mapping[str, Any] = {
        "tools/list": types.ListToolsResult,
        "resources/read": client_session._ReadResourceResultAdapter,
    }

    def server_send_result(method: str, version: str, req_id: Any, result: Any) -> bytes:
        dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        dumped = methods.serialize_server_result(method, version, dumped)
        out = JSONRPCResponse(jsonrpc="2.0", id=req_id, result=dumped).model_dump_json(
            by_alias=True, exclude_unset=True
        )
        return (out + "\n").encode()

    def request_path(wire: bytes, version: str, method: str) -> Callable[[], bytes]:
        assert method == "tools/call", "the official request path is written for tools/call"

        def fn() -> bytes:
            msg = adapter.validate_json(wire.decode(), by_name=False)
            assert isinstance(msg, JSONRPCRequest)
            params = msg.params
            progress_token_from_params(params)
            _extract_meta(params)
            if msg.method in methods.SPEC_CLIENT_METHODS:
                methods.validate_client_request(msg.method, version, params)
            typed = types.CallToolRequestParams.model_validate({} if params is None else params, by_name=False)
            text = (typed.arguments or {}).get("text", "")
            result = types.CallToolResult(content=[types.TextContent(type="text", text=str(text))])
            return server_send_result(method, version, msg.id, result)

        return fn

    def result_path(wire: bytes, version: str, method: str) -> Callable[[], bytes]:
        target = result_types[method]
        validate = target.validate_python if hasattr(target, "validate_python") else target.model_validate

        def fn() -> bytes:
            msg = adapter.validate_json(wire.decode(), by_name=False)
            assert isinstance(msg, JSONRPCResponse)
            raw = msg.result
            clamp(raw)
            try:
                methods.validate_server_result(method, version, raw)
            except KeyError:
                pass
            if not (foreign := later_fields(method, version)).isdisjoint(raw):
                raw = {k: v for k, v in raw.items() if k not in foreign}
            typed = validate(raw, by_name=False)
            return server_send_result(method, version, msg.id, typed)

        return fn

    def notification_path(wire: bytes, version: str) -> Callable[[], bytes]:
        def fn() -> bytes:
            msg = adapter.validate_json(wire.decode(), by_name=False)
            assert isinstance(msg, JSONRPCNotification)
            notification = methods.parse_server_notification(msg.method, version, msg.params)
            data = notification.model_dump(by_alias=True, mode="json", exclude_none=True)
            out = JSONRPCNotification(
                jsonrpc="2.0", method=data["method"], params=dict(data["params"])
            ).model_dump_json(by_alias=True, exclude_unset=True)
            return (out + "\n").encode()

        return fn

    fns: dict[str, Callable[[], bytes]] = {}
    for item in corpus:
        if item.kind == "request":
            fns[item.name] = request_path(item.wire, item.protocol_version, item.method)
        elif item.kind == "result":
            fns[item.name] = result_path(item.wire, item.protocol_version, item.method)
        else:
            fns[item.name] = notification_path(item.wire, item.protocol_version)
    return fns
