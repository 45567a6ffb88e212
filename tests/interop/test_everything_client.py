"""examples/everything_client.py, run as the conformance harness runs it (`<command> <url>`, scenario
and protocol version in the environment), against a small server of our own (the 2026-07-28 stub,
which serves both wire eras) that records every POST it receives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from tests.support import REPO_ROOT
from tests.support.http import serve_config

pytestmark = pytest.mark.interop

CLIENT = REPO_ROOT / "examples" / "everything_client.py"
VERSIONS = ["2025-11-25", "2026-07-28"]
RUN_TIMEOUT = 60  # seconds per client process; a run normally takes well under 2 s


def make_server() -> Any:
    from mcp_bindings.v2026_07_28 import models as m
    from mcp_bindings.v2026_07_28.server import Server

    def tool(name: str, properties: dict[str, Any], required: list[str]) -> Any:
        schema = {"type": "object", "properties": properties, "required": required}
        return m.Tool(name=name, description=f"The {name} tool", input_schema=m.ToolInputSchema.model_validate(schema))

    def text(value: str) -> Any:
        return m.CallToolResult(content=[m.TextContent(type="text", text=value)])

    confirm_schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "verified": {"type": "boolean", "default": True},
            "note": {"type": "string"},  # required, no default: the client makes one up
        },
        "required": ["note"],
    }

    class TestServer(Server):  # type: ignore[misc]
        name = "everything-client-test"
        version = "1.0.0"

        async def list_tools(self, params: Any, ctx: Any) -> Any:
            return m.ListToolsResult(
                tools=[
                    tool("add_numbers", {"a": {"type": "number"}, "b": {"type": "number"}}, ["a", "b"]),
                    tool("tagged", {"region": {"type": "string", "x-mcp-header": "Region"}}, ["region"]),
                    # x-mcp-header on a number is invalid: a stateless HTTP client must not call it.
                    tool("bad_header", {"score": {"type": "number", "x-mcp-header": "Score"}}, ["score"]),
                    tool("confirm", {}, []),
                ]
            )

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            arguments = params.arguments or {}
            if params.name == "add_numbers":
                return text(f"The sum is {arguments['a'] + arguments['b']}")
            if params.name == "confirm":
                answer = (params.input_responses or {}).get("confirm")
                if answer is None:  # ask first: MRTR at 2026-07-28, a real elicitation/create before
                    ask = m.ElicitRequest(
                        method="elicitation/create",
                        params=m.ElicitRequestFormParams(
                            message="Accept the defaults?",
                            requested_schema=m.ElicitRequestFormParamsRequestedSchema.model_validate(confirm_schema),
                        ),
                    )
                    return m.InputRequiredResult(input_requests={"confirm": ask})
                return text(json.dumps({"action": answer.action, "content": answer.content}))
            return text(f"{params.name} called")

    return TestServer()


class Recorder:
    """ASGI middleware keeping (headers, JSON body) of every POST."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.posts: list[tuple[dict[str, str], Any]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
        self.posts.append((headers, orjson.loads(body) if body else None))
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    def calls(self, tool: str) -> list[tuple[dict[str, str], Any]]:
        return [
            (headers, body)
            for headers, body in self.posts
            if isinstance(body, dict) and body.get("method") == "tools/call" and body["params"]["name"] == tool
        ]


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Recorder]]:
    import uvicorn

    from mcp_bindings.runtime.http.app import create_app

    recorder = Recorder(create_app(make_server()))
    # On a socket bound once by serve_config (uvicorn listens on it): no port picked, closed and bound again.
    with serve_config(uvicorn.Config(recorder, host="127.0.0.1", port=0, log_level="warning")) as base:
        yield f"{base}/mcp", recorder


def run_client(url: str, version: str, scenario: str = "", context: Any = None) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("MCP_CONFORMANCE_")}
    env.update(MCP_CONFORMANCE_SCENARIO=scenario, MCP_CONFORMANCE_PROTOCOL_VERSION=version)
    if context is not None:
        env["MCP_CONFORMANCE_CONTEXT"] = json.dumps(context)
    return subprocess.run(
        [sys.executable, str(CLIENT), url],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_tools_call_scenario(server: tuple[str, Recorder], version: str) -> None:
    url, recorder = server
    recorder.posts.clear()
    done = run_client(url, version, "tools_call")
    assert done.returncode == 0, done.stderr
    [(headers, body)] = recorder.calls("add_numbers")
    arguments = body["params"]["arguments"]
    assert isinstance(arguments["a"], (int, float)) and isinstance(arguments["b"], (int, float))
    first = recorder.posts[0][1]
    if version == "2025-11-25":
        assert first["method"] == "initialize" and first["params"]["protocolVersion"] == version
    else:
        assert headers["mcp-protocol-version"] == version and headers["mcp-name"] == "add_numbers"
        meta = body["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == version
        assert "io.modelcontextprotocol/clientCapabilities" in meta


@pytest.mark.parametrize("version", VERSIONS)
def test_exercises_every_tool(server: tuple[str, Recorder], version: str) -> None:
    """Without a scenario: every tool is called with arguments made up from its schema, elicitation
    is accepted with the schema's defaults, and (stateless HTTP) a tool with an invalid
    x-mcp-header annotation is never called while a valid one is mirrored into Mcp-Param-*."""
    url, recorder = server
    recorder.posts.clear()
    done = run_client(url, version)
    assert done.returncode == 0, done.stderr
    [(headers, body)] = recorder.calls("tagged")
    region = body["params"]["arguments"]["region"]
    assert isinstance(region, str)
    if version == "2025-11-25":
        assert len(recorder.calls("bad_header")) == 1  # no header mirroring on this wire
        # the answer to the server's elicitation/create request, POSTed back
        [answer] = [b["result"] for _, b in recorder.posts if isinstance(b, dict) and "result" in b]
    else:
        assert recorder.calls("bad_header") == []
        assert headers["mcp-param-region"] == region
        assert all(h.get("mcp-method") == b["method"] for h, b in recorder.posts if isinstance(b, dict))
        [retry] = [b for _, b in recorder.calls("confirm") if "inputResponses" in b["params"]]
        answer = retry["params"]["inputResponses"]["confirm"]
    assert answer["action"] == "accept"
    assert answer["content"]["name"] == "John Doe" and answer["content"]["verified"] is True
    assert isinstance(answer["content"]["note"], str)


def test_custom_header_context(server: tuple[str, Recorder]) -> None:
    """http-custom-headers: the calls come from MCP_CONFORMANCE_CONTEXT, values mirrored and encoded."""
    url, recorder = server
    recorder.posts.clear()
    calls = [{"name": "tagged", "arguments": {"region": " padded"}}, {"name": "tagged", "arguments": {"region": None}}]
    done = run_client(url, "2026-07-28", "http-custom-headers", {"name": "http-custom-headers", "toolCalls": calls})
    assert done.returncode == 0, done.stderr
    [(padded, _), (null, _)] = recorder.calls("tagged")
    assert padded["mcp-param-region"] == "=?base64?IHBhZGRlZA==?="
    assert "mcp-param-region" not in null


def prop(kind: str, header: Any) -> dict[str, Any]:
    return {"type": kind, "x-mcp-header": header}


@pytest.mark.parametrize(
    ("properties", "extra", "valid"),
    [
        ({"region": prop("string", "Region"), "n": prop("integer", "N"), "b": prop("boolean", "B")}, {}, True),
        ({"region": {"type": "string"}}, {}, True),
        ({"v": prop("string", "")}, {}, False),
        ({"v": prop("object", "Data")}, {}, False),
        ({"v": prop("array", "Items")}, {}, False),
        ({"v": prop("null", "Nil")}, {}, False),
        ({"v": prop("number", "Score")}, {}, False),
        ({"a": prop("string", "Region"), "b": prop("string", "Region")}, {}, False),
        ({"a": prop("string", "MyField"), "b": prop("string", "myfield")}, {}, False),
        ({"v": prop("string", "My Region")}, {}, False),
        ({"v": prop("string", "Region:Primary")}, {}, False),
        ({"v": prop("string", "Région")}, {}, False),
        ({"v": prop("string", "Region\t1")}, {}, False),
        # only properties reachable through the root's `properties` may carry one
        ({"o": {"type": "object", "properties": {"v": prop("string", "V")}}}, {}, False),
        ({"v": {"$ref": "#/$defs/v"}}, {"$defs": {"v": prop("string", "V")}}, False),
        ({}, {"anyOf": [{"properties": {"v": prop("string", "V")}}]}, False),
    ],
)
def test_header_annotation_validity(properties: dict[str, Any], extra: dict[str, Any], valid: bool) -> None:
    """The x-mcp-header rules the runtime applies before calling a tool (http-invalid-tool-headers)."""
    from mcp_bindings.runtime.protocol.headers import header_params

    schema = {"type": "object", "properties": properties, **extra}
    assert (header_params(schema) is not None) is valid


def test_mirrored_header_values() -> None:
    from mcp_bindings.runtime.protocol import registry
    from mcp_bindings.runtime.protocol.headers import header_params, mirrored_headers

    schema = {
        "type": "object",
        "properties": {
            "s": prop("string", "S"),
            "u": prop("string", "U"),
            "e": prop("string", "E"),
            "i": prop("integer", "I"),
            "t": prop("boolean", "T"),
            "n": prop("string", "N"),
            "plain": {"type": "string"},
        },
    }
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "tool",
            "arguments": {
                "s": "us west 1",
                "u": "Hello, 世界",
                "e": "",
                "i": 42,
                "t": False,
                "n": None,
                "plain": "x",
            },
        },
    }
    routing = registry.protocol("2026-07-28").routing
    assert mirrored_headers(message, lambda tool: header_params({"tool": schema}.get(tool, {})), routing) == {
        "Mcp-Method": "tools/call",
        "Mcp-Name": "tool",
        "Mcp-Param-S": "us west 1",
        "Mcp-Param-U": "=?base64?SGVsbG8sIOS4lueVjA==?=",
        "Mcp-Param-E": "",
        "Mcp-Param-I": "42",
        "Mcp-Param-T": "false",
    }
    read = {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "file:///é"}}
    assert mirrored_headers(read, lambda tool: {}, routing)["Mcp-Name"] == "=?base64?ZmlsZTovLy/DqQ==?="
