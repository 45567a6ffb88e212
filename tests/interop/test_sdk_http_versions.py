"""The official MCP Python SDK (mcp==2.3.0) client, pinned to each handshake protocol version
(2024-11-05 .. 2025-11-25), drives our server over Streamable HTTP.

The server is the stdio tests' `TestServer` (tests/peers/stdio_server.py, written against the
2025-11-25 stub), served by `create_app` on uvicorn in a thread of this process (127.0.0.1, a free
port; a fresh server per version, as its state is per process). The client is
tests/peers/sdk_client.py with `--url`: the same scenario the stdio interop tests run
(tests/interop/test_runtime_interop.py), with the handshake pinned the same way (a hand-made `initialize`
offering the version, then `session.adopt`). Its report is checked with the stdio tests' assertions.

Between the two sits a tap on the ASGI app recording every HTTP exchange, so the wire itself is
checked too: the client pins the version in the MCP-Protocol-Version header of every request after
`initialize`; every result, notification and server request our server sends validates against that
version's schema.json, closed to the fields the version defines (the runtime's contract: values cross
versions "projected onto the fields that version defines", runtime/mcp_bindings/runtime/protocol/versions.py);
only sessions of 2025-11-25 get SSE priming events; and the server's requests are exactly the ones
the version has, each answered by the client.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import pytest
from jsonschema import Draft7Validator, Draft202012Validator
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.http.resume import primes_streams
from mcp_bindings.runtime.rpc.calls import REQUEST_TIMEOUT
from tests.peers import stdio_server
from tests.peers.harness import HANDSHAKE_VERSIONS, PEERS
from tests.support import REPO_ROOT
from tests.support.http import serve_in_thread
from tests.support.sdk import step

pytestmark = pytest.mark.interop

versions = pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)


# -- the wire tap -----------------------------------------------------------------------------------


@dataclass
class Exchange:
    """One HTTP request to the app and the app's response, as bytes."""

    method: str
    headers: dict[str, str]
    request: bytearray = field(default_factory=bytearray)
    status: int | None = None
    content_type: str = ""
    response: bytearray = field(default_factory=bytearray)

    def sent(self) -> Any:
        """The JSON-RPC message(s) the client POSTed, or None."""
        return json.loads(self.request) if self.request else None

    def events(self) -> list[str]:
        """The data of each SSE event of the response (comments skipped; "" for a priming event)."""
        if not self.content_type.startswith("text/event-stream"):
            return []
        out: list[str] = []
        for block in bytes(self.response).decode().replace("\r\n", "\n").split("\n\n"):
            lines = block.split("\n")
            if any(line and not line.startswith(":") for line in lines):
                out.append("\n".join(line[5:].removeprefix(" ") for line in lines if line.startswith("data:")))
        return out

    def received(self) -> list[Any]:
        """The JSON-RPC messages of the response (a JSON body or the SSE events carrying data)."""
        if self.content_type.startswith("application/json") and self.response:
            return [json.loads(self.response)]
        return [json.loads(data) for data in self.events() if data.strip()]


class WireTap:
    """ASGI middleware recording every HTTP exchange of the wrapped app (read them once it stopped)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.exchanges: list[Exchange] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        exchange = Exchange(scope["method"], headers)
        self.exchanges.append(exchange)

        async def tapped_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                exchange.request += message.get("body", b"")
            return message

        async def tapped_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                exchange.status = message["status"]
                for name, value in message.get("headers", []):
                    if name.lower() == b"content-type":
                        exchange.content_type = value.decode("latin-1")
            elif message["type"] == "http.response.body":
                exchange.response += message.get("body", b"")
            await send(message)

        await self.app(scope, tapped_receive, tapped_send)


# -- one run per version --------------------------------------------------------------------------


@dataclass
class Run:
    report: dict[str, Any]
    exchanges: list[Exchange]

    def posts(self) -> Iterator[tuple[Exchange, Any]]:
        for exchange in self.exchanges:
            if exchange.method == "POST":
                yield exchange, exchange.sent()

    def server_messages(self) -> list[Any]:
        return [message for exchange in self.exchanges for message in exchange.received()]


_runs: dict[str, Run] = {}


def http_run(sdk_python: str, version: str) -> Run:
    """The SDK client scenario at `version` against a fresh TestServer over HTTP, once per version."""
    if version not in _runs:
        tap = WireTap(create_app(stdio_server.TestServer()))
        with serve_in_thread(tap) as base:
            argv = [sdk_python, str(PEERS / "sdk_client.py"), "--version", version, "--url", base + "/mcp"]
            done = subprocess.run(argv, capture_output=True, text=True, timeout=180, cwd=str(REPO_ROOT))
        assert done.returncode == 0, f"the SDK client failed:\n{done.stderr[-3000:]}"
        _runs[version] = Run(json.loads(done.stdout.strip().splitlines()[-1]), tap.exchanges)
    return _runs[version]


# -- the stdio interop assertions, over HTTP ---------------------------------------------------------


@versions
def test_sdk_http_initialize_and_discovery(sdk_python: str, version: str) -> None:
    report = http_run(sdk_python, version).report
    init = step(report, "initialize")
    assert init["protocolVersion"] == version
    assert init["serverInfo"] == {"name": "runtime-test-server", "version": "1.0.0"}
    assert init["instructions"] == "a server for the runtime's process tests"
    assert init["capabilities"]["tools"] == {"listChanged": True}
    assert init["capabilities"]["prompts"] == {"listChanged": True}
    assert init["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}
    assert "logging" in init["capabilities"]
    assert ("completions" in init["capabilities"]) == (version != "2024-11-05")
    assert "echo" in step(report, "tools") and "ask_sampling" in step(report, "tools")
    assert step(report, "echo") == "héllo ✓ \U0001f600"
    assert step(report, "ping") == {}
    assert step(report, "ping_client") == "pong"
    assert step(report, "concurrent") == {str(i): f"cc{i}" for i in range(10)}


@versions
def test_sdk_http_resources_prompts_completion(sdk_python: str, version: str) -> None:
    report = http_run(sdk_python, version).report
    uris, cursors = step(report, "resource_pages")
    assert uris == [f"test://r/{i}" for i in range(25)] and len(cursors) == 3 and cursors[-1] is None
    bad = step(report, "bad_cursor")["mcp_error"]
    assert bad["code"] == -32602 and bad["data"]["errors"][0]["path"] == "params.cursor"
    assert step(report, "read")["contents"] == [
        {"uri": "test://r/3", "mimeType": "text/plain", "text": "content of test://r/3"}
    ]
    assert [p["name"] for p in step(report, "prompts")["prompts"]] == [f"p{i}" for i in range(7)]
    assert step(report, "prompt")["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "talk about sdk"}}
    ]
    if version != "2024-11-05":
        assert step(report, "complete")["completion"]["values"] == ["blue", "black", "brown"]
    else:
        assert "complete" not in report  # completion/complete is not in 2024-11-05


@versions
def test_sdk_http_logging_and_progress(sdk_python: str, version: str) -> None:
    report = http_run(sdk_python, version).report
    assert sorted(step(report, "log_levels")) == sorted(["error", "critical", "alert", "emergency"])
    text, seen = step(report, "progress")
    assert text == "done"
    assert sorted(p for p, _, _ in seen) == [1, 2, 3, 4] and all(total == 4 for _, total, _ in seen)
    if version != "2024-11-05":
        assert {m for _, _, m in seen} == {f"step {i}" for i in range(1, 5)}


@versions
def test_sdk_http_answers_sampling_elicitation_roots(sdk_python: str, version: str) -> None:
    report = http_run(sdk_python, version).report
    sampled = json.loads(step(report, "sampling"))
    assert sampled == {
        "role": "assistant",
        "content": {"type": "text", "text": "sdk sampled: from our server"},
        "model": "sdk-model",
    }
    assert report["asked"]["sampling"]["maxTokens"] == 10
    assert report["asked"]["sampling"]["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "from our server"}}
    ]
    assert json.loads(step(report, "roots")) == {"roots": [{"uri": "file:///sdk/root", "name": "sdk-root"}]}
    assert report["asked"]["roots"] is True
    if version >= "2025-06-18":
        assert json.loads(step(report, "elicitation")) == {"action": "accept", "content": {"name": "Grace"}}
        assert report["asked"]["elicitation"]["message"] == "your name?"
    else:
        assert "elicitation" not in report["asked"]
    assert step(report, "roots_changed") == 1


@versions
def test_sdk_http_notifications_errors_and_timeout(sdk_python: str, version: str) -> None:
    report = http_run(sdk_python, version).report
    assert step(report, "list_changed") == [
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/tools/list_changed",
    ]
    boom = step(report, "boom")["mcp_error"]
    assert boom["code"] == -32603 and "kaboom" not in boom["message"]
    outcome, events = step(report, "timeout")
    assert outcome["code"] == REQUEST_TIMEOUT  # the SDK's own timeout code happens to be ours
    assert "cancelled:sdk-timeout" in events and "finished:sdk-timeout" not in events  # it sent notifications/cancelled
    # Every notification the scenario causes reached the SDK's message handler, once, and nothing else.
    assert Counter(report["notifications"]) == {
        "notifications/message": 4,
        "notifications/progress": 4,
        "notifications/resources/updated": 1,
        "notifications/tools/list_changed": 1,
        "notifications/prompts/list_changed": 1,
        "notifications/resources/list_changed": 1,
    }


@versions
def test_sdk_http_resource_subscriptions(sdk_python: str, version: str) -> None:
    report = http_run(sdk_python, version).report
    first, second, updates = step(report, "subscriptions")
    assert json.loads(first) == {"subscribed": True} and json.loads(second) == {"subscribed": False}
    assert updates == 1


# -- the wire ---------------------------------------------------------------------------------------


@versions
def test_sdk_http_pins_the_version_on_the_wire(sdk_python: str, version: str) -> None:
    run = http_run(sdk_python, version)
    (first, init), *later = list(run.posts())
    assert init["method"] == "initialize" and init["params"]["protocolVersion"] == version
    assert first.status == 200 and init["id"] == first.received()[0]["id"]
    assert "mcp-session-id" not in first.headers  # the client learns it from the initialize response
    assert later, "nothing was POSTed after initialize"
    for exchange in run.exchanges[1:]:
        sent = exchange.sent()
        assert exchange.headers.get("mcp-protocol-version") == version, (exchange.method, sent)
        assert exchange.headers.get("mcp-session-id"), (exchange.method, sent)
        assert exchange.status is not None and exchange.status < 400, (exchange.method, exchange.status, sent)
    methods = [exchange.method for exchange in run.exchanges]
    assert methods.count("GET") == 1 and methods[-1] == "DELETE"


@versions
def test_sdk_http_server_requests_are_the_versions(sdk_python: str, version: str) -> None:
    """The server asked exactly what the scenario makes it ask, and the client's answer to each
    was POSTed back and accepted (202)."""
    run = http_run(sdk_python, version)
    requests = [message for message in run.server_messages() if "method" in message and "id" in message]
    expected = ["sampling/createMessage", "roots/list"]
    if version >= "2025-06-18":
        expected.append("elicitation/create")
    expected.append("ping")
    assert [message["method"] for message in requests] == expected
    answers = {
        sent["id"]: exchange.status
        for exchange, sent in run.posts()
        if isinstance(sent, dict) and "method" not in sent and ("result" in sent or "error" in sent)
    }
    assert answers == {message["id"]: 202 for message in requests}


@versions
def test_sdk_http_sse_priming_only_where_the_version_has_it(sdk_python: str, version: str) -> None:
    run = http_run(sdk_python, version)
    post_streams = [
        exchange.events() for exchange, _ in run.posts() if exchange.content_type.startswith("text/event-stream")
    ]
    assert post_streams, "no POST was answered with an SSE stream"
    primed = [events[0] == "" for events in post_streams]
    assert primed == [primes_streams(version)] * len(post_streams)
    for events in post_streams:
        assert all(data.strip() for data in events[1:]), events  # only the first event may be a priming one


# The wire against the version's schema, closed: a field the version does not define is an error.
@versions
def test_sdk_http_server_messages_in_the_versions_schema(sdk_python: str, version: str) -> None:
    run = http_run(sdk_python, version)
    schema = VersionSchema.of(version)
    asked_by_client = {sent["id"]: sent["method"] for _, sent in run.posts() if "method" in sent and "id" in sent}
    problems: list[str] = []
    checked = Counter[str]()
    for message in run.server_messages():
        if "method" in message:
            what = message["method"]
            errors = schema.check_server_message(message)
        elif "error" in message:
            what = "error"
            errors = schema.check_error(message)
        else:
            what = f"result of {asked_by_client[message['id']]}"
            errors = schema.check_result(asked_by_client[message["id"]], message["result"])
        checked[what] += 1
        problems += [f"{what}: {error}\n    sent: {json.dumps(message)}" for error in errors]
    assert not problems, "\n".join(problems)
    assert checked["notifications/progress"] == 4 and checked["notifications/message"] == 4
    assert checked["result of initialize"] == 1 and checked["result of tools/call"] >= 20


@pytest.mark.parametrize("version", ["2024-11-05"])
def test_sdk_http_progress_without_message_at_2024_11_05(sdk_python: str, version: str) -> None:
    """The precise reproduction of the 2024-11-05 schema failure above."""
    run = http_run(sdk_python, version)
    progress = [m["params"] for m in run.server_messages() if m.get("method") == "notifications/progress"]
    assert progress == [{"progressToken": progress[0]["progressToken"], "progress": i, "total": 4} for i in range(1, 5)]


class VersionSchema:
    """A version's schema.json with every object that lists `properties` closed to them."""

    def __init__(self, version: str) -> None:
        schema = json.loads((REPO_ROOT / "schema" / version / "schema.json").read_text())
        self.key = "definitions" if "definitions" in schema else "$defs"
        self.defs: dict[str, Any] = _closed(schema[self.key])
        self.validator_class: Any = Draft7Validator if self.key == "definitions" else Draft202012Validator
        self.server_methods = {**self._members("ServerRequest"), **self._members("ServerNotification")}
        self.client_requests = self._members("ClientRequest")
        self.error = "JSONRPCError" if "JSONRPCError" in self.defs else "JSONRPCErrorResponse"

    @staticmethod
    @cache
    def of(version: str) -> VersionSchema:
        return VersionSchema(version)

    def _members(self, union: str) -> dict[str, str]:
        names = [ref["$ref"].rsplit("/", 1)[1] for ref in self.defs[union]["anyOf"]]
        return {self.defs[name]["properties"]["method"]["const"]: name for name in names}

    def errors(self, name: str, instance: Any) -> list[str]:
        validator = self.validator_class({"$ref": f"#/{self.key}/{name}", self.key: self.defs})
        return [
            f"{'/'.join(map(str, error.absolute_path)) or '.'}: {error.message} ({name})"
            for error in validator.iter_errors(instance)
        ]

    def check_server_message(self, message: dict[str, Any]) -> list[str]:
        """A server request or notification: its method is one the version has the server send."""
        name = self.server_methods.get(message["method"])
        if name is None:
            return [f"{message['method']} is not a server request or notification of this version"]
        # Older schemas leave the JSON-RPC envelope (jsonrpc, id) to JSONRPCRequest/JSONRPCNotification.
        properties = self.defs[name]["properties"]
        return self.errors(name, {k: v for k, v in message.items() if k in properties or k not in ("jsonrpc", "id")})

    def check_result(self, method: str, result: Any) -> list[str]:
        name = self.client_requests[method].removesuffix("Request") + "Result"
        return self.errors(name if name in self.defs else "EmptyResult", result)

    def check_error(self, message: dict[str, Any]) -> list[str]:
        return self.errors(self.error, message)


def _closed(node: Any) -> Any:
    """`additionalProperties: false` on every schema object listing `properties` without saying
    (not inside `allOf`, whose parts each see only their own properties)."""
    if isinstance(node, dict):
        if "properties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
        for key, value in node.items():
            if key != "allOf":
                _closed(value)
    elif isinstance(node, list):
        for value in node:
            _closed(value)
    return node
