"""What a server advertises and who it says it is, kept per version (`peer.Lifecycle.advertised`,
`peer.ServerIdentity`) and stamped onto stateless results without copying the model
(`results_out.ResultWriter._stamped_json`): anything registered or changed at run time must show in the
very next request, and the stamped JSON must be what the long way (`_stamped`) writes.

Driven in-process, without an event loop, with the helpers of `test_message_path_runtime`.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from mcp_bindings.runtime.protocol import registry, versions
from mcp_bindings.runtime.rpc import jsonrpc
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND
from mcp_bindings.runtime.server import extensions
from tests.support.message_path import STATELESS, call, connect, serve, stateless_meta

EXT = "com.example/late"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


class Ping(BaseModel):
    text: str = ""


LATE = extensions.request("example/late", Ping, Ping, extension=EXT)


def discover(runtime: Any, session: Any) -> dict[str, Any]:
    reply = serve(runtime, session, call({"_meta": stateless_meta()}, method="server/discover"))
    return reply["result"]


def tools_call(runtime: Any, session: Any) -> dict[str, Any]:
    params = {"name": "echo", "arguments": {"text": "hi"}, "_meta": stateless_meta()}
    return serve(runtime, session, call(params))


def test_a_method_registered_after_the_first_request_is_advertised_and_served() -> None:
    runtime, session = connect(STATELESS, STATELESS)
    before = discover(runtime, session)
    assert EXT not in before["capabilities"].get("extensions", {})
    late = serve(runtime, session, call({"_meta": stateless_meta()}, method=LATE.method))
    assert late["error"]["code"] == METHOD_NOT_FOUND

    async def answer(params: Ping, ctx: Any) -> Ping:
        return Ping(text=params.text.upper())

    runtime.server.register_method(LATE, answer)
    assert EXT in discover(runtime, session)["capabilities"]["extensions"]
    served = serve(runtime, session, call({"text": "hi", "_meta": stateless_meta()}, method=LATE.method))
    assert served["result"]["text"] == "HI"


def test_a_re_registered_handler_serves_the_next_request() -> None:
    runtime, session = connect(STATELESS, STATELESS)

    async def first(params: Ping, ctx: Any) -> Ping:
        return Ping(text="first")

    async def second(params: Ping, ctx: Any) -> Ping:
        return Ping(text="second")

    runtime.server.register_method(LATE, first)
    assert serve(runtime, session, call({"_meta": stateless_meta()}, method=LATE.method))["result"]["text"] == "first"
    runtime.server.register_method(LATE, second)
    assert serve(runtime, session, call({"_meta": stateless_meta()}, method=LATE.method))["result"]["text"] == "second"


def test_capabilities_and_extension_settings_changed_in_place_show() -> None:
    runtime, session = connect(STATELESS, STATELESS)
    assert "listChanged" not in discover(runtime, session)["capabilities"]["tools"]
    runtime.server.capabilities["tools"]["listChanged"] = True
    assert discover(runtime, session)["capabilities"]["tools"] == {"listChanged": True}
    runtime.server.use_extension(EXT, {"mode": "a"})
    assert discover(runtime, session)["capabilities"]["extensions"][EXT] == {"mode": "a"}
    extensions.methods_of(runtime.server).extensions[EXT]["mode"] = "b"
    assert discover(runtime, session)["capabilities"]["extensions"][EXT] == {"mode": "b"}


def test_an_identity_changed_at_run_time_is_stamped_on_the_next_result() -> None:
    runtime, session = connect(STATELESS, STATELESS)
    assert tools_call(runtime, session)["result"]["_meta"][SERVER_INFO] == {"name": "echo", "version": "1.0.0"}
    icons: list[dict[str, Any]] = [{"src": "https://example.com/a.png"}]
    server = type(runtime.server)  # a class of its own per test (`make_server`)
    server.version, server.icons = "2.0.0", icons
    stamped = tools_call(runtime, session)["result"]["_meta"][SERVER_INFO]
    assert stamped["version"] == "2.0.0"
    assert stamped["icons"] == [{"src": "https://example.com/a.png"}]
    icons[0]["src"] = "https://example.com/b.png"  # changed in place
    assert tools_call(runtime, session)["result"]["_meta"][SERVER_INFO]["icons"][0]["src"].endswith("b.png")
    assert discover(runtime, session)["_meta"][SERVER_INFO]["version"] == "2.0.0"


def _results() -> list[tuple[str, Any]]:
    m = importlib.import_module(f"mcp_bindings.{registry.info(STATELESS).package}.models")
    text = [m.TextContent(type="text", text="hi")]
    return [
        ("tools/call", m.CallToolResult(content=text)),  # not cacheable: only the identity is stamped
        ("tools/list", m.ListToolsResult(tools=[])),  # the common case: written into the JSON
        ("tools/list", m.ListToolsResult(tools=[], _meta={"mine": 1})),  # its own _meta: merged the long way
        ("tools/list", m.ListToolsResult(tools=[], ttlMs=7, cacheScope="public")),  # its own settings: kept
    ]


@pytest.mark.parametrize("case", range(4))
@pytest.mark.parametrize("ttl", [0, 5000])
def test_stamped_json_is_what_the_long_way_writes(case: int, ttl: int) -> None:
    runtime, _ = connect(STATELESS, STATELESS)
    type(runtime.server).cache_ttl_ms = ttl
    method, result = _results()[case]
    view = runtime.lifecycle.stateless_view(jsonrpc.Request(1, method, {"_meta": stateless_meta()}, {}))
    spec = view.protocol.client_requests[method]
    written = orjson.loads(runtime.bridge._result_bytes(spec, result, view, 0, None))  # noqa: SLF001
    long_way = orjson.loads(versions.checked_json(runtime.results.stamped(result, view), "x"))
    assert written == long_way
    assert written["_meta"][SERVER_INFO] == {"name": "echo", "version": "1.0.0"}
    if method == "tools/list":
        assert written["ttlMs"] == (7 if case == 3 else ttl)
        assert written["cacheScope"] == ("public" if case == 3 else "private")
    if case == 2:
        assert written["_meta"]["mine"] == 1


def test_an_invalid_identity_is_refused_as_before() -> None:
    runtime, session = connect(STATELESS, STATELESS)
    type(runtime.server).icons = [{"src": 5}]  # not a string: the stamped _meta fails its check
    reply = tools_call(runtime, session)
    assert reply["error"]["code"] == INTERNAL_ERROR
    assert "_meta" in reply["error"]["message"]


def test_a_handshake_on_a_path_version_reads_no_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    scans: list[int] = []
    read = registry._from_entry_points  # noqa: SLF001
    monkeypatch.setattr(registry, "_from_entry_points", lambda: scans.append(1) or read())
    registry.refresh()
    try:
        runtime, session = connect()  # 2025-11-25, every version served
        assert serve(runtime, session, call({"name": "echo", "arguments": {"text": "hi"}}))["result"]
        assert registry.info(STATELESS).stateless and registry.load_version("2025-11-25")
        assert scans == []
        # Listing every version reads them: a stateless request (the newest's `_meta` keys), discovery.
        runtime, session = connect(STATELESS, STATELESS)
        assert discover(runtime, session)["supportedVersions"][0] == STATELESS
        assert scans == [1]
        assert runtime.lifecycle.handshake_supported == registry.handshake_versions()
    finally:
        registry.refresh()


def test_an_unserved_handshake_version_settles_on_the_newest() -> None:
    runtime, session = connect()
    init = {"protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    reply = serve(runtime, session, call(init, method="initialize"))
    assert reply["error"]["code"]  # already initialized on this connection
    runtime, session = connect(STATELESS, STATELESS)
    reply = serve(runtime, session, call(init, method="initialize"))
    assert reply["result"]["protocolVersion"] == registry.handshake_versions()[-1]


@pytest.mark.parametrize("version", [["2026-07-28"], {"v": 1}, 7, None])
def test_a_version_of_the_wrong_type_is_refused_after_a_first_request(version: Any) -> None:
    runtime, session = connect(STATELESS, STATELESS)
    assert "result" in tools_call(runtime, session)  # the version's keys are now known
    meta = {**stateless_meta(), "io.modelcontextprotocol/protocolVersion": version}
    reply = serve(runtime, session, call({"name": "echo", "arguments": {}, "_meta": meta}))
    assert reply["error"]["code"] == INVALID_PARAMS


def test_capabilities_of_the_wrong_type_are_refused_after_a_first_request() -> None:
    runtime, session = connect(STATELESS, STATELESS)
    assert "result" in tools_call(runtime, session)
    meta = {**stateless_meta(), "io.modelcontextprotocol/clientCapabilities": []}
    reply = serve(runtime, session, call({"name": "echo", "arguments": {}, "_meta": meta}))
    assert reply["error"]["code"] == INVALID_PARAMS
    assert "clientCapabilities" in reply["error"]["message"]


def test_an_identity_that_is_not_json_is_refused_not_crashed() -> None:
    runtime, session = connect(STATELESS, STATELESS)
    type(runtime.server).icons = [{"src": "https://example.com/a.png", "sizes": [object()]}]
    reply = tools_call(runtime, session)
    assert reply["error"]["code"] == INTERNAL_ERROR


def test_a_version_only_an_entry_point_names_is_still_found(monkeypatch: pytest.MonkeyPatch) -> None:
    pinned = registry._on_path()["2025-11-25"]  # noqa: SLF001
    installed = registry._Found(dataclasses.replace(pinned.info, version="2099-01-01", name=""), pinned.module)  # noqa: SLF001
    monkeypatch.setattr(registry, "_from_entry_points", lambda: [installed])
    registry.refresh()
    try:
        assert "2099-01-01" not in registry.on_path()
        assert registry.wire_version("2099-01-01") == "2099-01-01"  # not on the path: the entry points are read
        assert "2099-01-01" in registry.handshake_versions()
        runtime, _ = connect()
        assert runtime.lifecycle.handshake_supported[-1] == "2099-01-01"
    finally:
        registry.refresh()
