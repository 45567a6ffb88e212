"""A stateless client sends the same `_meta` with every request: what the server reads from it (the
view, `peer.Lifecycle.view_of`), the `_meta` model of the params (`peer.MetaModels`) and the check of
the server's identity stamped on results (`results_out`) are made once and reused while it repeats,
and made again the moment anything they depend on differs (#51 item 2).

Driven in-process, without an event loop, with the helpers of `test_message_path_runtime`.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_bindings.runtime.protocol.result_checks import ResultChecks
from mcp_bindings.runtime.rpc import jsonrpc
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_PARAMS
from tests.support.message_path import STATELESS, call, connect, serve, stateless_meta

CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def request(meta: dict[str, Any]) -> jsonrpc.Request:
    return jsonrpc.Request(1, "tools/call", {"name": "echo", "arguments": {}, "_meta": meta}, {})


def echo(runtime: Any, session: Any, meta: dict[str, Any]) -> dict[str, Any]:
    return serve(runtime, session, call({"name": "echo", "arguments": {"text": "hi"}, "_meta": meta}))


def test_equal_meta_is_read_into_one_view() -> None:
    runtime, _ = connect(STATELESS, STATELESS)
    first = runtime.lifecycle.stateless_view(request(stateless_meta()))
    assert runtime.lifecycle.stateless_view(request(stateless_meta())) is first


@pytest.mark.parametrize(
    ("key", "value"),
    [(CAPABILITIES, {"sampling": {}}), (CLIENT_INFO, {"name": "other", "version": "1"}), (LOG_LEVEL, "debug")],
)
def test_a_different_meta_gets_a_view_of_its_own(key: str, value: Any) -> None:
    runtime, _ = connect(STATELESS, STATELESS)
    first = runtime.lifecycle.stateless_view(request(stateless_meta()))
    other = runtime.lifecycle.stateless_view(request({**stateless_meta(), key: value}))
    assert other is not first
    assert (other.client_capabilities, other.client_info, other.log_level) != (
        first.client_capabilities,
        first.client_info,
        first.log_level,
    )
    assert first.client_capabilities == {} and first.log_level is None  # the first view is not changed


def test_each_principal_gets_a_view_of_its_own_and_none_is_changed() -> None:
    runtime, _ = connect(STATELESS, STATELESS)
    alice = runtime.lifecycle.stateless_view(request(stateless_meta()), "alice")
    bob = runtime.lifecycle.stateless_view(request(stateless_meta()), "bob")
    assert (alice.principal, bob.principal) == ("alice", "bob")
    assert runtime.lifecycle.stateless_view(request(stateless_meta()), "bob") is bob


def test_equal_meta_is_validated_once_and_a_different_one_in_full() -> None:
    seen: list[Any] = []
    runtime, session = connect(STATELESS, STATELESS, seen=seen)
    assert "result" in echo(runtime, session, stateless_meta())
    assert "result" in echo(runtime, session, stateless_meta())
    assert seen[1].meta is seen[0].meta  # the model made of the first `_meta`, passed as it is
    assert seen[1].meta.client_info.name == "t"
    assert "result" in echo(runtime, session, {**stateless_meta(), "progressToken": "p1"})
    assert seen[2].meta is not seen[0].meta and seen[2].meta.progress_token == "p1"
    bad = echo(runtime, session, {**stateless_meta(), CLIENT_INFO: {"name": 5, "version": "0"}})
    assert bad["error"]["code"] == INVALID_PARAMS
    assert "clientInfo" in bad["error"]["message"]


def test_the_identity_is_checked_once_per_result_type(monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[bytes] = []
    check = ResultChecks.check_bytes
    monkeypatch.setattr(
        ResultChecks, "check_bytes", lambda self, model, data: checked.append(data) or check(self, model, data)
    )
    runtime, session = connect(STATELESS, STATELESS)
    replies = [echo(runtime, session, stateless_meta()) for _ in range(3)]
    assert all(r["result"]["_meta"][SERVER_INFO] == {"name": "echo", "version": "1.0.0"} for r in replies)
    assert [SERVER_INFO.encode() in data for data in checked] == [True, False, False]


def test_an_identity_made_invalid_after_a_valid_one_is_refused() -> None:
    runtime, session = connect(STATELESS, STATELESS)
    assert "result" in echo(runtime, session, stateless_meta())
    type(runtime.server).icons = [{"src": 5}]  # not a string: the new identity fails its check
    reply = echo(runtime, session, stateless_meta())
    assert reply["error"]["code"] == INTERNAL_ERROR
    assert "_meta" in reply["error"]["message"]


def test_a_repeated_meta_is_served_under_the_last_view_without_reading_it_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`Lifecycle.repeated`: a request whose `_meta` equals the last one's gets that view straight from
    its params (no `stateless_meta`, no `view_of`), and its `_meta` model is matched by identity (the
    view's copy of the `_meta`), not compared again; anything that differs takes the full path."""
    seen: list[Any] = []
    runtime, session = connect(STATELESS, STATELESS, seen=seen)
    assert "result" in echo(runtime, session, stateless_meta())
    lifecycle = runtime.lifecycle
    view = lifecycle.stateless_view(request(stateless_meta()))
    lifecycle.prepare(view.protocol)  # every validator built: the full path is left only then
    while not lifecycle.prepared(view.protocol):
        lifecycle.prepare(view.protocol)
    full: list[Any] = []
    view_of = type(lifecycle).view_of
    monkeypatch.setattr(type(lifecycle), "view_of", lambda self, *a: full.append(a) or view_of(self, *a))
    assert lifecycle.repeated({"name": "echo", "_meta": stateless_meta()}, None) is view
    assert view.meta == stateless_meta()
    assert "result" in echo(runtime, session, stateless_meta())
    assert full == []  # served under the last view
    assert seen[-1].meta is seen[0].meta and runtime.metas._last[next(iter(runtime.metas._last))][0] is view.meta
    assert lifecycle.repeated({"name": "echo", "_meta": {**stateless_meta(), LOG_LEVEL: "debug"}}, None) is None
    assert lifecycle.repeated({"name": "echo", "_meta": stateless_meta()}, "alice") is None
    assert lifecycle.repeated({"name": "echo"}, None) is None and lifecycle.repeated([1], None) is None
    runtime.server.capabilities = {**runtime.server.capabilities, "logging": {}}  # what it advertises changed
    assert lifecycle.repeated({"name": "echo", "_meta": stateless_meta()}, None) is None
    assert "result" in echo(runtime, session, {**stateless_meta(), LOG_LEVEL: "debug"})
    assert len(full) == 1 and runtime.lifecycle.repeated({"_meta": {**stateless_meta(), LOG_LEVEL: "debug"}}, None)
