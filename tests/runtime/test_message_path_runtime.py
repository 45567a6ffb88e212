"""The per-message path of a server (`ServerRuntime.on_request` and the `jsonrpc` framing around it),
driven in-process without an event loop: the cached plan of a request of the stub's own version
(its result written as is) must answer exactly as the bridge does, validate once, and refuse what
the wire must not carry.
"""

from __future__ import annotations

import importlib
from typing import Any

import orjson
import pytest

from mcp_bindings.runtime.protocol import registry, versions
from mcp_bindings.runtime.rpc import jsonrpc
from mcp_bindings.runtime.rpc.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
)
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.server.runtime import ServerRuntime
from tests.support.message_path import LEGACY, STATELESS, call, complete, connect, make_server, serve, stateless_meta


def error_paths(reply: dict[str, Any]) -> list[str]:
    return [problem["path"] for problem in reply["error"]["data"]["errors"]]


# -- the plan ---------------------------------------------------------------------------------


def test_tools_call_answers_and_caches_its_route() -> None:
    runtime, session = connect()
    reply = serve(runtime, session, call({"name": "echo", "arguments": {"text": "hi"}}, 42))
    assert reply == {"jsonrpc": "2.0", "id": 42, "result": {"content": [{"type": "text", "text": "hi"}]}}
    assert runtime.view is not None
    plan = runtime.view.plans["tools/call"]
    assert plan.fast_result is not None and not plan.converts
    serve(runtime, session, call({"name": "echo", "arguments": {"text": "again"}}, "s-1"))
    assert runtime.view.plans["tools/call"] is plan


def test_plan_validates_once_and_skips_the_bridge(monkeypatch: pytest.MonkeyPatch) -> None:
    runtime, session = connect()
    serve(runtime, session, call({"name": "echo"}))
    assert runtime.view is not None
    plan = runtime.view.plans["tools/call"]
    calls: list[Any] = []
    validate = plan.validate
    assert validate is not None

    def counting(data: Any, **kwargs: Any) -> Any:
        calls.append(data)
        return validate(data, **kwargs)

    plan.validate = counting

    async def bridged(*args: Any) -> bytes:
        raise AssertionError("the bridge ran")

    monkeypatch.setattr(runtime.bridge, "settle", bridged)
    reply = serve(runtime, session, call({"name": "echo", "arguments": {"text": "x"}}))
    assert reply["result"]["content"][0]["text"] == "x"
    assert len(calls) == 1


def test_written_as_is_and_bridged_answer_alike() -> None:
    frames = [
        call({"name": "echo", "arguments": {"text": 'é ✓ "q"'}}, 7),
        call({"name": "echo", "_meta": {"progressToken": "p"}, "extra": [1, 2]}, "id-✓"),
        call({"name": 1}, 8),
        call({"name": "echo", "arguments": None}, 9),
        call(None, 10),
    ]
    runtime, session = connect()
    direct = [serve(runtime, session, frame) for frame in frames]
    general_runtime, general_session = connect()
    assert general_runtime.view is not None
    plan = general_runtime.plan("tools/call", general_runtime.view)
    plan.fast_result = None  # every result through `VersionBridge.settle`
    general = [serve(general_runtime, general_session, frame) for frame in frames]
    assert direct == general
    assert general_runtime.view.plans["tools/call"].fast_result is None


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({"name": "echo", "arguments": None}, "params.arguments"),
        ({"name": "echo", "_meta": None}, "params._meta"),
        ({"name": "echo", "_meta": {"progressToken": None}}, "params._meta.progressToken"),
        ({"name": "echo", "task": None}, "params.task"),
        ({"name": None}, "params.name"),
        ({"name": 5}, "params.name"),
        ({"arguments": {}}, "params.name"),
        ({"name": "echo", "arguments": [1]}, "params.arguments"),
    ],
)
def test_bad_params_are_invalid_params_naming_the_field(params: Any, path: str) -> None:
    runtime, session = connect()
    reply = serve(runtime, session, call(params, 3))
    assert reply["id"] == 3 and reply["error"]["code"] == INVALID_PARAMS, reply
    assert path in error_paths(reply)


def test_missing_params_are_invalid_params() -> None:
    runtime, session = connect()
    reply = serve(runtime, session, call(None, 4))
    assert reply["error"]["code"] == INVALID_PARAMS and error_paths(reply) == ["params"]


def test_numbers_keep_their_type() -> None:
    seen: list[Any] = []
    runtime, session = connect(seen=seen)
    arguments = {"i": 1, "big": 2**63 - 1, "f": 1.0, "neg": -0.5, "b": True, "n": None, "deep": {"i": [2]}}
    serve(runtime, session, call({"name": "echo", "arguments": arguments}))
    got = seen[0].arguments
    assert got == arguments
    assert type(got["i"]) is int and type(got["big"]) is int and type(got["deep"]["i"][0]) is int
    assert type(got["f"]) is float and type(got["b"]) is bool


def test_unknown_and_unoffered_methods_are_not_found_every_time_and_not_cached() -> None:
    runtime, session = connect()
    assert runtime.view is not None
    for _ in range(2):
        assert serve(runtime, session, call({}, 5, "foo/bar"))["error"]["code"] == METHOD_NOT_FOUND
        assert serve(runtime, session, call({"name": "p"}, 6, "prompts/get"))["error"]["code"] == METHOD_NOT_FOUND
    assert "foo/bar" not in runtime.view.plans and "prompts/get" not in runtime.view.plans


def test_a_dict_result_is_validated_and_a_wrong_type_is_an_internal_error() -> None:
    runtime, session = connect(result={"content": [{"type": "text", "text": "from a dict"}]})
    reply = serve(runtime, session, call({"name": "echo"}))
    assert reply["result"] == {"content": [{"type": "text", "text": "from a dict"}]}
    runtime, session = connect(result={"content": "not a list"})
    assert serve(runtime, session, call({"name": "echo"}))["error"]["code"] == INTERNAL_ERROR
    runtime, session = connect(result=lambda m: m.ListToolsResult(tools=[]))
    assert serve(runtime, session, call({"name": "echo"}))["error"]["code"] == INTERNAL_ERROR


def test_a_result_subclass_takes_the_general_path() -> None:
    def subclass_result(m: Any) -> Any:
        class Mine(m.CallToolResult):  # type: ignore[misc, name-defined]
            pass

        return Mine(content=[m.TextContent(type="text", text="sub")], is_error=False)

    runtime, session = connect(result=subclass_result)
    reply = serve(runtime, session, call({"name": "echo"}))
    assert reply["result"] == {"content": [{"type": "text", "text": "sub"}], "isError": False}


def test_progress_token_is_read_from_the_request() -> None:
    sent: list[tuple[str, Any]] = []

    class Recorder(Session):
        async def notify(self, method: str, params: Any = None, related: Any = None) -> None:
            sent.append((method, params))

    async def report(self: Any, params: Any, ctx: Any) -> Any:
        await ctx.report_progress(1, 2, "half")
        m = importlib.import_module(f"mcp_bindings.{registry.info(LEGACY).package}.models")
        return m.CallToolResult(content=[])

    server = make_server(LEGACY)
    type(server).call_tool = report
    runtime = ServerRuntime(server)
    session = Recorder(None, runtime)  # type: ignore[arg-type]
    init = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    complete(runtime.on_request(jsonrpc.Request(0, "initialize", init, {}), session))
    serve(runtime, session, call({"name": "echo", "_meta": {"progressToken": 9}}))
    serve(runtime, session, call({"name": "echo"}))  # no token: nothing sent
    assert sent == [("notifications/progress", {"progressToken": 9, "progress": 1, "total": 2, "message": "half"})]


# -- other versions: stateless requests, and a client of another version than the stub ----------------


def test_stateless_requests_are_stamped_and_share_the_route_table() -> None:
    runtime, session = connect(stub=STATELESS, version=STATELESS)
    frame = call({"name": "echo", "arguments": {"text": "s"}, "_meta": stateless_meta()}, 11)
    first = serve(runtime, session, frame)
    second = serve(runtime, session, frame)
    assert first == second
    result = first["result"]
    assert result["content"] == [{"type": "text", "text": "s"}]
    assert result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "echo", "version": "1.0.0"}
    plan = runtime._plans[registry.protocol(STATELESS)]["tools/call"]  # one plan for every stateless request
    assert not plan.converts and plan.fast_result is not None
    bad = serve(runtime, session, call({"name": "echo", "arguments": None, "_meta": stateless_meta()}, 12))
    assert bad["error"]["code"] == INVALID_PARAMS and "params.arguments" in error_paths(bad)


def test_a_client_of_another_version_is_converted() -> None:
    runtime, session = connect(stub=STATELESS, version=LEGACY)
    assert runtime.view is not None
    reply = serve(runtime, session, call({"name": "echo", "arguments": {"text": "old"}}, 13))
    assert reply["result"] == {"content": [{"type": "text", "text": "old"}]}  # no stateless-era fields
    assert runtime.view.plans["tools/call"].converts
    bad = serve(runtime, session, call({"name": "echo", "arguments": None}, 14))
    assert bad["error"]["code"] == INVALID_PARAMS and "params.arguments" in error_paths(bad)


# -- framing ----------------------------------------------------------------------------------------


def _outcome(function: Any, data: Any) -> Any:
    try:
        return ("ok", function(data))
    except jsonrpc.InvalidMessage as exc:
        return ("error", exc.code, exc.message, exc.id, exc.reply, exc.data)


ENVELOPES: list[Any] = [
    {"jsonrpc": "2.0", "id": 1, "method": "ping"},
    {"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "x"}},
    {"jsonrpc": "2.0", "id": -3, "method": "m", "params": None},
    {"jsonrpc": "2.0", "id": 1, "method": "m", "params": [1]},
    {"jsonrpc": "2.0", "id": 1, "method": "m", "params": "x"},
    {"jsonrpc": "2.0", "id": None, "method": "m"},
    {"jsonrpc": "2.0", "id": True, "method": "m"},
    {"jsonrpc": "2.0", "id": 1.0, "method": "m"},
    {"jsonrpc": "2.0", "id": [1], "method": "m"},
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}},
    {"jsonrpc": "2.0", "method": "n", "params": [1]},
    {"jsonrpc": "2.0", "method": "n", "params": "x"},
    {"jsonrpc": "2.0", "method": "n"},
    {"jsonrpc": "1.0", "id": 1, "method": "m"},
    {"id": 1, "method": "m"},
    {"jsonrpc": "2.0", "id": 1, "method": 5},
    {"jsonrpc": "2.0", "id": 1, "method": None},
    {"jsonrpc": "2.0", "id": 1, "result": {"a": 1}},
    {"jsonrpc": "2.0", "id": "r", "result": None},
    {"jsonrpc": "2.0", "id": 1, "result": {}, "error": None},
    {"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "m"}},
    {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}},
    {"jsonrpc": "2.0", "id": 1, "error": "bad"},
    {"jsonrpc": "2.0", "id": None, "error": {"code": 1, "message": "m"}},
    {"jsonrpc": "2.0", "id": True, "result": {}},
    {"jsonrpc": "1.0", "id": 1, "result": {}},
    {"jsonrpc": "2.0", "id": 1},
    {"jsonrpc": "2.0", "id": 1, "method": "m", "result": {}},
    {},
    [],
    None,
    "x",
    42,
]


@pytest.mark.parametrize("data", ENVELOPES, ids=[orjson.dumps(e).decode()[:60] for e in ENVELOPES])
def test_classify_fast_path_agrees_with_the_full_checks(data: Any) -> None:
    assert _outcome(jsonrpc.classify, data) == _outcome(jsonrpc._classify, data)


@pytest.mark.parametrize("id", [0, 42, -7, 2**53 + 1, "a", "ïd-✓", 'q"uote'])
@pytest.mark.parametrize("body", [b"{}", b'{"content":[]}', bytearray(b'{"x":1}'), b'{"t":"' + b"x" * 300_000 + b'"}'])
def test_encode_result_frames_the_body_once(id: Any, body: Any) -> None:
    frame = jsonrpc.encode_result(id, body)
    assert frame == b'{"jsonrpc":"2.0","id":' + orjson.dumps(id) + b',"result":' + bytes(body) + b"}"
    assert orjson.loads(frame) == {"jsonrpc": "2.0", "id": id, "result": orjson.loads(bytes(body))}


def test_dump_matches_model_dump() -> None:
    m = importlib.import_module(f"mcp_bindings.{registry.info(LEGACY).package}.models")
    values = [
        m.CallToolResult(content=[m.TextContent(text="a", meta={"k": None})], is_error=False),
        m.ProgressNotificationParams(progress_token="t", progress=1.5, total=None, message="m"),
        m.Tool(name="t", input_schema=m.ToolInputSchema(type="object", properties={"a": {"type": "string"}})),
    ]
    for value in values:
        assert versions.dump(value) == value.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert versions.dump(values) == [v.model_dump(mode="json", by_alias=True, exclude_none=True) for v in values]
    assert versions.dump({"x": values[0]}) == {"x": values[0].model_dump(mode="json", by_alias=True, exclude_none=True)}
    assert versions.dump({"plain": 1}) == {"plain": 1}


# -- the benchmark replays these calls ------------------------------------------------------------------


def test_benchmark_message_path_runs_the_runtime() -> None:
    from benchmarks.corpus import build_corpus
    from benchmarks.ours_message_path import build

    corpus = build_corpus()
    fns = build(corpus)
    assert set(fns) == {item.name for item in corpus}
    for item in corpus:
        out = fns[item.name]()
        assert out.endswith(b"\n")
        reply = orjson.loads(out)
        sent = orjson.loads(item.wire)
        if item.kind == "request":
            text = sent["params"]["arguments"]["text"]
            assert reply == {
                "jsonrpc": "2.0",
                "id": sent["id"],
                "result": {"content": [{"type": "text", "text": text}]},
            }
        else:
            assert reply == sent


@pytest.mark.parametrize("number", [2**64 + 1, -(2**63) - 1, 10**40])
def test_integers_beyond_64_bits_are_read_exactly_wherever_they_stand(number: int) -> None:
    """`jsonrpc.decode` looks for a run of 19 digits at every 19th byte first: a run at any offset,
    in a frame with few or many other digits, is still found (and read by the standard library)."""
    for padding in range(45):
        for filler in ("x" * padding, "1 " * (padding // 2) + "x" * (padding % 2)):
            frame = f'{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":"{filler}","n":{number}}}}}'.encode()
            value = jsonrpc.decode(frame)
            assert value["params"]["n"] == number and type(value["params"]["n"]) is int, (padding, filler)
    assert jsonrpc.decode(b'{"n":1234567890123456789.5}')["n"] == 1234567890123456789.5
