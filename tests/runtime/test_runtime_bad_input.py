"""Bad input, raw over a running stdio server's stdin: every kind gets the right JSON-RPC error (or,
for notifications and responses, no reply at all), and the session answers the next ping after it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from tests.peers.harness import RawPeer, raw_server

pytestmark = pytest.mark.anyio

PARSE, INVALID_REQUEST, NOT_FOUND, INVALID_PARAMS, INTERNAL = -32700, -32600, -32601, -32602, -32603
LIMIT = 64 * 1024  # the test server's message size limit in this module
ANY = object()  # "any id"
DEADLINE = 20


@pytest.fixture(scope="module")
async def peer(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[RawPeer]:
    """One server for the whole table, initialized at 2025-11-25 (no batches)."""
    path = tmp_path_factory.mktemp("bad-input") / "server.stderr"
    async with raw_server(path, MCP_TEST_MAX_MESSAGE_BYTES=str(LIMIT)) as server:
        with anyio.fail_after(DEADLINE):
            await server.initialize("2025-11-25")
        yield server
        assert server.process.returncode is None, "the server died"


@pytest.fixture(scope="module")
async def batch_peer(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[RawPeer]:
    """A server initialized at 2025-03-26, the one version with JSON-RPC batches."""
    path = tmp_path_factory.mktemp("batches") / "server.stderr"
    async with raw_server(path, MCP_TEST_MAX_MESSAGE_BYTES=str(LIMIT)) as server:
        with anyio.fail_after(DEADLINE):
            await server.initialize("2025-03-26")
        yield server


def req(method: str, params: Any = None, id: Any = 1, **extra: Any) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    message.update(extra)
    return orjson.dumps(message)


def note(method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return orjson.dumps(message)


def call(tool: str, arguments: Any = None, id: Any = 1) -> bytes:
    params: dict[str, Any] = {"name": tool}
    if arguments is not None:
        params["arguments"] = arguments
    return req("tools/call", params, id)


@dataclass
class Case:
    name: str
    raw: bytes
    code: int | None = None  # the expected error code; None: no reply at all
    id: Any = None  # the expected id of the error (None: null)
    paths: list[str] = field(default_factory=list)  # field paths error.data must name (-32602)
    check: Callable[[Any], None] | None = None  # instead of code: a check of the (result) reply
    xfail: str | None = None

    def param(self) -> Any:
        marks = [pytest.mark.xfail(strict=True, reason=self.xfail)] if self.xfail else []
        return pytest.param(self, id=self.name, marks=marks)


def _text_is(expected: str) -> Callable[[Any], None]:
    def check(reply: Any) -> None:
        assert reply["result"]["content"][0]["text"] == expected, reply

    return check


UNICODE = 'héllo ✓ \U0001f600 中文 עברית \u200b\u0000 \\ " \n end'

TABLE = [
    # -- not JSON: -32700 with id null -----------------------------------------------------------
    Case("truncated-object", b'{"jsonrpc":"2.0","id":1,"method":"ping"', PARSE),
    Case("lone-brace", b"{", PARSE),
    Case("not-json-text", b"hello, server", PARSE),
    Case("trailing-garbage", b'{"jsonrpc":"2.0","id":1,"method":"ping"} x', PARSE),
    Case("single-quotes", b"{'jsonrpc':'2.0','id':1,'method':'ping'}", PARSE),
    Case("nan-literal", b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}', PARSE),
    Case("invalid-utf8", b'{"jsonrpc":"2.0","id":1,"method":"\xff\xfe"}', PARSE),
    Case("lone-surrogate-escape", b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\\ud800"}}', PARSE),
    Case("utf8-bom", b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"ping"}', PARSE),
    Case("deeply-nested-array", b"[" * 5000 + b"]" * 5000, PARSE),
    Case(
        "deeply-nested-params",
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":' + b'{"a":' * 3000 + b"1" + b"}" * 3001,
        PARSE,
    ),
    # -- JSON, but not a JSON-RPC message: -32600 ---------------------------------------------------
    Case("number", b"42", INVALID_REQUEST),
    Case("string", b'"ping"', INVALID_REQUEST),
    Case("null", b"null", INVALID_REQUEST),
    Case("true", b"true", INVALID_REQUEST),
    Case("empty-object", b"{}", INVALID_REQUEST),
    Case("jsonrpc-1.0", b'{"jsonrpc":"1.0","id":11,"method":"ping"}', INVALID_REQUEST, 11),
    Case("jsonrpc-missing", b'{"id":12,"method":"ping"}', INVALID_REQUEST, 12),
    Case("jsonrpc-number", b'{"jsonrpc":2.0,"id":13,"method":"ping"}', INVALID_REQUEST, 13),
    Case("method-number", b'{"jsonrpc":"2.0","id":14,"method":42}', INVALID_REQUEST, 14),
    Case("method-null-no-result", b'{"jsonrpc":"2.0","id":15,"method":null}', INVALID_REQUEST, 15),
    Case("id-null", b'{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID_REQUEST),
    Case("id-bool", b'{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID_REQUEST),
    Case("id-float", b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', INVALID_REQUEST),
    Case("id-object", b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', INVALID_REQUEST),
    Case("id-array", b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', INVALID_REQUEST),
    Case("neither-request-nor-response", b'{"jsonrpc":"2.0","id":16}', INVALID_REQUEST, 16),
    Case("batch-not-in-2025-11-25", b"[" + req("ping") + b"]", INVALID_REQUEST),
    Case("empty-batch-not-in-2025-11-25", b"[]", INVALID_REQUEST),
    Case(
        "second-initialize",
        req(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
            17,
        ),
        INVALID_REQUEST,
        17,
    ),
    # -- unknown or not advertised: -32601 ---------------------------------------------------------
    Case("unknown-method", req("foo/bar", id=21), NOT_FOUND, 21),
    Case("method-wrong-case", req("Ping", id=22), NOT_FOUND, 22),
    Case("non-ascii-method", req("pïng", id=23), NOT_FOUND, 23),
    Case("not-advertised-tasks-list", req("tasks/list", id=24), NOT_FOUND, 24),
    Case("later-version-method", req("server/discover", id=25), NOT_FOUND, 25),
    Case("server-side-method", req("sampling/createMessage", {"messages": [], "maxTokens": 1}, 26), NOT_FOUND, 26),
    Case("notification-method-as-request", req("notifications/initialized", id=27), NOT_FOUND, 27),
    # -- params failing validation: -32602 naming the field ------------------------------------------
    Case("params-array", req("tools/call", [1, 2], 31), INVALID_PARAMS, 31, ["params"]),
    Case("params-string-on-ping", req("ping", "x", 32), INVALID_PARAMS, 32, ["params"]),
    Case("tool-name-number", req("tools/call", {"name": 123}, 33), INVALID_PARAMS, 33, ["params.name"]),
    Case("tool-name-missing", req("tools/call", {"arguments": {}}, 34), INVALID_PARAMS, 34, ["params.name"]),
    Case("tool-arguments-not-object", call("echo", [1], 35), INVALID_PARAMS, 35, ["params.arguments"]),
    Case("read-uri-missing", req("resources/read", {}, 36), INVALID_PARAMS, 36, ["params.uri"]),
    Case(
        "prompt-argument-not-string",
        req("prompts/get", {"name": "p1", "arguments": {"topic": 1}}, 37),
        INVALID_PARAMS,
        37,
        ["params.arguments.topic"],
    ),
    Case(
        "complete-bad-ref",
        req("completion/complete", {"ref": {"type": "ref/nothing"}, "argument": {"name": "a", "value": "b"}}, 38),
        INVALID_PARAMS,
        38,
        ["params.ref"],
    ),
    Case(
        "progress-token-object",
        req("tools/call", {"name": "echo", "_meta": {"progressToken": {"x": 1}}}, 39),
        INVALID_PARAMS,
        39,
        ["params._meta.progressToken"],
    ),
    Case("bad-cursor", req("resources/list", {"cursor": "not-a-cursor"}, 40), INVALID_PARAMS, 40, ["params.cursor"]),
    Case("set-level-bogus", req("logging/setLevel", {"level": "loud"}, 41), INVALID_PARAMS, 41, ["params.level"]),
    Case("params-missing-when-required", req("tools/call", id=42), INVALID_PARAMS, 42, ["params"]),
    # -- handler failures: -32603 without internals ----------------------------------------------------
    Case("handler-exception", call("boom", {}, 51), INTERNAL, 51),
    # -- notifications and responses: never answered ---------------------------------------------------
    Case("notification-params-array", note("notifications/roots/list_changed", [1])),
    Case("notification-params-string", note("notifications/initialized", "x")),
    Case("cancelled-params-string", note("notifications/cancelled", "x")),
    Case("cancelled-unknown-id", note("notifications/cancelled", {"requestId": 999999})),
    Case("cancelled-id-object", note("notifications/cancelled", {"requestId": {"x": 1}})),
    Case("cancelled-id-bool", note("notifications/cancelled", {"requestId": True})),
    Case("progress-token-unhashable", note("notifications/progress", {"progressToken": [1], "progress": 1})),
    Case("progress-junk", note("notifications/progress", {"progressToken": "t", "progress": "lots"})),
    Case("unknown-notification", note("notifications/whatever", {"a": 1})),
    Case("repeated-initialized", note("notifications/initialized")),
    Case("response-unknown-id", b'{"jsonrpc":"2.0","id":424242,"result":{}}'),
    Case("error-response-unknown-id", b'{"jsonrpc":"2.0","id":424243,"error":{"code":-1,"message":"x"}}'),
    Case("error-response-null-id", b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}'),
    Case("response-error-not-object", b'{"jsonrpc":"2.0","id":424244,"error":"bad"}'),
    Case("response-id-object", b'{"jsonrpc":"2.0","id":{"a":1},"result":{}}'),
    Case("response-wrong-jsonrpc", b'{"jsonrpc":"1.0","id":424245,"result":{}}'),
    Case("blank-line", b""),
    Case("whitespace-line", b" \t "),
    # -- good requests in awkward clothes ----------------------------------------------------------------
    Case("unicode-roundtrip", call("echo", {"text": UNICODE}, 61), check=_text_is(UNICODE)),
    Case(
        "crlf-line-ending", req("ping", id=62) + b"\r", check=lambda r: r == {"jsonrpc": "2.0", "id": 62, "result": {}}
    ),
    Case("string-id", req("ping", id="ïd-✓"), check=lambda r: r["id"] == "ïd-✓" and r["result"] == {}),
    Case("negative-id", req("ping", id=-7), check=lambda r: r["id"] == -7 and r["result"] == {}),
    Case("big-int-id", req("ping", id=2**53 + 1), check=lambda r: r["id"] == 2**53 + 1),
    Case(
        "nested-but-legal",
        call("echo", {"deep": orjson.loads(b'{"a":' * 200 + b"1" + b"}" * 200)}, 63),
        check=_text_is(""),
    ),
    Case(
        "extra-envelope-member",
        req("ping", id=64, extra=1),
        check=lambda r: r == {"jsonrpc": "2.0", "id": 64, "result": {}},
    ),
]


@pytest.mark.parametrize("case", [case.param() for case in TABLE])
async def test_bad_input(peer: RawPeer, case: Case) -> None:
    with anyio.fail_after(DEADLINE):
        await peer.resync()  # independent of what an earlier case left behind
        await peer.send(case.raw)
        if case.code is not None or case.check is not None:
            reply = await peer.recv()
            line = orjson.dumps(reply).decode()
            if case.check is not None:
                case.check(reply)
            else:
                assert isinstance(reply, dict) and set(reply) == {"jsonrpc", "id", "error"}, reply
                assert reply["error"]["code"] == case.code, reply
                assert case.id is ANY or reply["id"] == case.id, reply
                assert isinstance(reply["error"]["message"], str) and reply["error"]["message"]
                assert "Traceback" not in line and "kaboom" not in line and "/work/" not in line, line
                if case.paths:
                    named = [problem["path"] for problem in (reply["error"].get("data") or {}).get("errors", [])]
                    for path in case.paths:  # pydantic may add a union member's tag: params.x.str
                        assert any(n == path or n.startswith(path + ".") for n in named), (
                            f"error.data names {named}, expected {path}"
                        )
        await peer.assert_alive()


async def test_table_covers_enough_kinds() -> None:
    assert len(TABLE) >= 30
    assert {case.code for case in TABLE} >= {PARSE, INVALID_REQUEST, NOT_FOUND, INVALID_PARAMS, INTERNAL, None}


# -- cases that need timing, several lines, or a fresh server ------------------------------------------


async def test_handler_exception_is_logged_on_the_server_side(peer: RawPeer) -> None:
    with anyio.fail_after(DEADLINE):
        reply = await peer.request("tools/call", {"name": "boom", "arguments": {}})
        assert reply["error"] == {"code": INTERNAL, "message": "Internal error"}
        await peer.assert_alive()
        assert "kaboom: secret detail" in peer.stderr_text()  # the details stay in the server's log


async def test_response_with_unknown_id_is_logged_and_dropped(peer: RawPeer) -> None:
    with anyio.fail_after(DEADLINE):
        await peer.send(b'{"jsonrpc":"2.0","id":515151,"result":{"x":1}}')
        await peer.assert_alive()
        assert "unknown id 515151" in peer.stderr_text()


async def test_duplicate_in_flight_id(peer: RawPeer) -> None:
    with anyio.fail_after(DEADLINE):
        await peer.send(call("sleep", {"seconds": 0.5, "tag": "dup"}, id="dup"))
        await anyio.sleep(0.1)
        await peer.send(req("ping", id="dup"))
        first = await peer.recv()
        assert first["id"] == "dup" and first["error"]["code"] == INVALID_REQUEST, first
        second = await peer.recv()
        assert second == {"jsonrpc": "2.0", "id": "dup", "result": {"content": [{"type": "text", "text": "dup"}]}}
        await peer.assert_alive()
        # the id is free again once answered
        assert (await peer.request("ping", id="dup")) == {"jsonrpc": "2.0", "id": "dup", "result": {}}


async def test_cancel_in_flight_request_gets_no_response(peer: RawPeer) -> None:
    with anyio.fail_after(DEADLINE):
        await peer.send(call("sleep", {"seconds": 5, "tag": "raw-cancel"}, id="to-cancel"))
        await anyio.sleep(0.2)
        await peer.send(note("notifications/cancelled", {"requestId": "to-cancel", "reason": "test"}))
        await peer.assert_alive(quiet=0.5)  # nothing for "to-cancel", ever
        # a late cancel for the same (finished) id, and the same id reused, are both fine
        await peer.send(note("notifications/cancelled", {"requestId": "to-cancel"}))
        assert (await peer.request("ping", id="to-cancel"))["result"] == {}
        state = await peer.request("tools/call", {"name": "state", "arguments": {}})
        events = orjson.loads(state["result"]["content"][0]["text"])["events"]
        assert "cancelled:raw-cancel" in events and "finished:raw-cancel" not in events


async def test_message_split_across_writes_and_many_in_one_write(peer: RawPeer) -> None:
    with anyio.fail_after(DEADLINE):
        message = req("ping", id="split")
        for i in range(0, len(message), 7):
            await peer.send(message[i : i + 7], newline=False)
            await anyio.sleep(0.01)
        await peer.send(b"")
        assert await peer.recv() == {"jsonrpc": "2.0", "id": "split", "result": {}}
        await peer.send(b"\n".join(req("ping", id=f"many-{i}") for i in range(20)))
        ids = {(await peer.recv())["id"] for _ in range(20)}
        assert ids == {f"many-{i}" for i in range(20)}
        await peer.assert_alive()


async def test_oversized_message_is_rejected(peer: RawPeer) -> None:
    with anyio.fail_after(DEADLINE):
        big = call("echo", {"text": "x" * (LIMIT + 10)}, id="big")
        await peer.send(big)
        reply = await peer.recv()
        assert reply["id"] is None and reply["error"]["code"] == INVALID_REQUEST, reply
        assert str(LIMIT) in reply["error"]["message"]
        await peer.assert_alive()
        # an oversized message between two good ones, in one write: both good ones are answered
        await peer.send(req("ping", id="before") + b"\n" + big + b"\n" + req("ping", id="after"))
        replies = [await peer.recv() for _ in range(3)]
        assert sorted(str(r["id"]) for r in replies) == ["None", "after", "before"], replies
        await peer.assert_alive()
        # just under the limit is fine
        text = "y" * (LIMIT - 200)
        reply = await peer.request("tools/call", {"name": "echo", "arguments": {"text": text}})
        assert reply["result"]["content"][0]["text"] == text


async def test_oversized_message_is_not_buffered(peer: RawPeer) -> None:
    with anyio.fail_after(60):
        before = peer.rss_kib()
        chunk = b"z" * (1024 * 1024)
        await peer.send(
            b'{"jsonrpc":"2.0","id":"huge","method":"tools/call","params":{"name":"echo","arguments":{"text":"',
            newline=False,
        )
        for _ in range(64):  # 64 MiB of one line, against a 64 KiB limit
            await peer.send(chunk, newline=False)
        await peer.send(b'"}}}')
        reply = await peer.recv(timeout=30)
        assert reply["id"] is None and reply["error"]["code"] == INVALID_REQUEST
        await peer.assert_alive()
        grown = peer.rss_kib() - before
        assert grown < 16 * 1024, f"the server grew by {grown} KiB reading a 64 MiB line"


async def test_batches_in_2025_03_26(batch_peer: RawPeer) -> None:
    peer = batch_peer
    with anyio.fail_after(DEADLINE):
        # requests and notifications mixed: one array with a response per request
        await peer.send(
            b"[" + b",".join([req("ping", id=1), note("notifications/whatever"), call("echo", {"text": "b"}, 2)]) + b"]"
        )
        replies = await peer.recv()
        assert isinstance(replies, list) and len(replies) == 2
        by_id = {r["id"]: r for r in replies}
        assert by_id[1]["result"] == {} and by_id[2]["result"]["content"][0]["text"] == "b"
        await peer.assert_alive()

        # only notifications (and responses): no reply at all
        await peer.send(b"[" + note("notifications/whatever") + b"," + b'{"jsonrpc":"2.0","id":777,"result":{}}' + b"]")
        await peer.assert_alive()

        # bad items get their own errors inside the array
        await peer.send(
            b"["
            + b",".join(
                [
                    b"1",
                    req("nope/nope", id=3),
                    req("tools/call", [1], 4),
                    b"[" + req("ping", id=5) + b"]",
                    req("ping", id=6),
                ]
            )
            + b"]"
        )
        replies = await peer.recv()
        assert isinstance(replies, list) and len(replies) == 5, replies
        codes = sorted((str(r["id"]), r.get("error", {}).get("code")) for r in replies)
        assert codes == sorted(
            [("None", INVALID_REQUEST), ("3", NOT_FOUND), ("4", INVALID_PARAMS), ("None", INVALID_REQUEST), ("6", None)]
        )
        await peer.assert_alive()

        # the empty batch is one error, not an array
        await peer.send(b"[]")
        reply = await peer.recv()
        assert isinstance(reply, dict) and reply["error"]["code"] == INVALID_REQUEST and reply["id"] is None
        await peer.assert_alive()

        # a batch request with the id of a request still in flight is refused
        await peer.send(call("sleep", {"seconds": 0.5, "tag": "b"}, id="busy"))
        await anyio.sleep(0.1)
        await peer.send(b"[" + req("ping", id="busy") + b"]")
        first = await peer.recv()
        assert first == [{"jsonrpc": "2.0", "id": "busy", "error": first[0]["error"]}]
        assert first[0]["error"]["code"] == INVALID_REQUEST
        second = await peer.recv()
        assert second["id"] == "busy" and second["result"]["content"][0]["text"] == "b"
        await peer.assert_alive()


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25"])
async def test_batches_rejected_in_other_versions(version: str, tmp_path: Path) -> None:
    with anyio.fail_after(DEADLINE):
        async with raw_server(tmp_path / "server.stderr") as peer:
            await peer.initialize(version)
            await peer.send(b"[" + req("ping", id=1) + b"," + req("ping", id=2) + b"]")
            reply = await peer.recv()
            assert isinstance(reply, dict) and reply["id"] is None and reply["error"]["code"] == INVALID_REQUEST, reply
            await peer.assert_alive()


async def test_before_initialize(tmp_path: Path) -> None:
    with anyio.fail_after(DEADLINE):
        async with raw_server(tmp_path / "server.stderr") as peer:
            # ping is allowed before initialize; notifications are ignored
            await peer.send(note("notifications/initialized"))
            await peer.send(note("notifications/roots/list_changed"))
            await peer.assert_alive()
            # a request that needs a session is refused (the server also speaks the stateless
            # 2026-07-28, so the request lacks either a handshake or its per-request `_meta`)
            reply = await peer.request("tools/list", id="early")
            assert reply["id"] == "early" and reply["error"]["code"] == INVALID_PARAMS, reply
            assert "initialize" in reply["error"]["message"]
            # batches are not allowed before a version that has them is negotiated
            await peer.send(b"[" + req("ping", id=3) + b"]")
            assert (await peer.recv())["error"]["code"] == INVALID_REQUEST
            await peer.assert_alive()
            # an unknown version is answered with the server's latest handshake version
            reply = await peer.request(
                "initialize",
                {"protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
            )
            assert reply["result"]["protocolVersion"] == "2025-11-25"
            await peer.send(note("notifications/initialized"))
            assert (await peer.request("tools/list"))["result"]["tools"]
            await peer.assert_alive()


async def test_initialize_with_bad_params(tmp_path: Path) -> None:
    with anyio.fail_after(DEADLINE):
        async with raw_server(tmp_path / "server.stderr") as peer:
            reply = await peer.request(
                "initialize",
                {"protocolVersion": "2025-11-25", "capabilities": [], "clientInfo": {"name": "x", "version": "1"}},
            )
            assert reply["error"]["code"] == INVALID_PARAMS
            assert "params.capabilities" in [p["path"] for p in reply["error"]["data"]["errors"]]
            reply = await peer.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
            assert reply["error"]["code"] == INVALID_PARAMS
            assert "params.clientInfo" in [p["path"] for p in reply["error"]["data"]["errors"]]
            await peer.assert_alive()
            await peer.initialize("2025-11-25")  # a failed initialize leaves the session open for a good one
            await peer.assert_alive()


async def test_initialize_without_version_names_the_field(tmp_path: Path) -> None:
    with anyio.fail_after(DEADLINE):
        async with raw_server(tmp_path / "server.stderr") as peer:
            reply = await peer.request("initialize", {"capabilities": {}, "clientInfo": {"name": "x", "version": "1"}})
            assert reply["error"]["code"] == INVALID_PARAMS
            assert "params.protocolVersion" in [p["path"] for p in (reply["error"].get("data") or {}).get("errors", [])]


async def test_server_exits_cleanly_when_stdin_closes(tmp_path: Path) -> None:
    with anyio.fail_after(DEADLINE):
        async with raw_server(tmp_path / "server.stderr") as peer:
            await peer.initialize("2025-11-25")
            # a request in flight when stdin closes is still answered (bounded drain), then the process exits 0
            await peer.send(call("sleep", {"seconds": 0.3, "tag": "drain"}, id="last"))
            assert peer.process.stdin is not None
            await peer.process.stdin.aclose()
            reply = await peer.recv()
            assert reply["id"] == "last" and reply["result"]["content"][0]["text"] == "drain"
            assert await peer.process.wait() == 0
