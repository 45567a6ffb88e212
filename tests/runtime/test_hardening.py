"""Hostile and unusual input, on real stdio or real sockets on 127.0.0.1: each case gets its
specified answer, and the server answers a normal request afterwards."""

from __future__ import annotations

import importlib
import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.errors import McpError
from mcp_bindings.runtime.stdio.connect import connect_stdio

ARGS_SERVER = """
import importlib
import json
import logging
from mcp_bindings.runtime.stdio.serve import serve_stdio
from mcp_bindings.v2025_11_25 import models as m
from mcp_bindings.v2025_11_25.server import Server


class Args(Server):
    name, version = "args", "1"

    async def list_tools(self, params, ctx):
        return m.ListToolsResult(tools=[m.Tool(name="args", input_schema=m.ToolInputSchema(type="object"))])

    async def call_tool(self, params, ctx):
        arguments = params.arguments or {}
        return m.CallToolResult(
            content=[m.TextContent(text=json.dumps(arguments))], structured_content={"echo": arguments}
        )


serve_stdio(Args())
"""

BIG = 2**64 + 1
NEGATIVE = -(2**63) - 1
HUGE = 10**40


def run_stdio(tmp_path: Path, script: str, lines: list[bytes]) -> list[dict[str, Any]]:
    server = tmp_path / "server.py"
    server.write_text(script, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(server)], input=b"".join(line + b"\n" for line in lines), capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def initialize_lines() -> list[bytes]:
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    return [
        orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}),
        orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]


def test_integers_beyond_64_bits_reach_the_handler_and_come_back_exactly(tmp_path: Path) -> None:
    arguments = f'{{"big": {BIG}, "negative": {NEGATIVE}, "huge": {HUGE}, "list": [{BIG}, 1.5]}}'
    params = f'{{"name": "args", "arguments": {arguments}}}'
    call = f'{{"jsonrpc": "2.0", "id": {BIG}, "method": "tools/call", "params": {params}}}'
    after = orjson.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    replies = run_stdio(tmp_path, ARGS_SERVER, [*initialize_lines(), call.encode(), after])
    by_id = {reply["id"]: reply for reply in replies}
    result = by_id[BIG]["result"]  # the request id itself comes back exact
    expected = {"big": BIG, "negative": NEGATIVE, "huge": HUGE, "list": [BIG, 1.5]}
    assert json.loads(result["content"][0]["text"]) == expected
    assert result["structuredContent"] == {"echo": expected}
    assert by_id[2]["result"]["tools"][0]["name"] == "args"  # and the server goes on


def test_fuzzed_input_writes_bounded_logs(tmp_path: Path) -> None:
    """4,000 hostile frames (each quoting up to 200 kB back in a log line) leave a few kB of stderr,
    not megabytes, and the server still answers afterwards."""
    long = "x" * 200_000
    junk = [
        *[b'{"jsonrpc": "2.0", "result": {}, "id": {"bad": "' + long.encode() + b'"}}' for _ in range(1_000)],
        *[orjson.dumps({"jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": [long]})] * 1_000,
        *[b'{"jsonrpc": "2.0", "id": 5, "result": {}, "error": "' + long.encode() + b'"}' for _ in range(1_000)],
        *[orjson.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": 1, "message": long}})] * 1_000,
    ]
    after = orjson.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    server = tmp_path / "server.py"
    server.write_text(ARGS_SERVER, encoding="utf-8")
    frames = [*initialize_lines(), *junk, after]
    done = subprocess.run(
        [sys.executable, str(server)], input=b"".join(f + b"\n" for f in frames), capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert replies[-1] == {"jsonrpc": "2.0", "id": 2, "result": replies[-1]["result"]}
    assert replies[-1]["result"]["tools"][0]["name"] == "args"
    assert len(done.stderr) < 200_000, f"{len(done.stderr)} bytes of logs for 4,000 bad frames"


def test_the_log_bound_cuts_long_lines_and_counts_what_it_suppressed() -> None:
    now = [0.0]
    bound = logs.Bounded(clock=lambda: now[0])
    kept: list[str] = []

    def emit(msg: str, *args: Any) -> None:
        record = logging.LogRecord("mcp_bindings.runtime", logging.WARNING, __file__, 1, msg, args, None)
        if bound.filter(record):
            kept.append(record.getMessage())

    for i in range(100):
        emit("dropping %s", i)
    assert len(kept) == logs.BURST
    now[0] = logs.WINDOW + 1
    emit("dropping %s", "again")
    assert kept[-1] == f"dropping again [{100 - logs.BURST} similar messages suppressed in the last {logs.WINDOW:g} s]"
    emit("quote %s", "y" * 10 * logs.MAX_CHARS)
    assert len(kept[-1]) < logs.MAX_CHARS + 100 and kept[-1].endswith("more characters)")


INVALID_RESULTS_SERVER = """
from mcp_bindings.runtime.stdio.serve import serve_stdio
from mcp_bindings.{package} import models as m
from mcp_bindings.{package}.server import Server


class Careless(Server):
    name, version = "careless", "1"

    async def list_tools(self, params, ctx):
        return m.ListToolsResult(tools=[m.Tool(name=n, input_schema=m.ToolInputSchema(type="object"))
                                        for n in ("ok", "constructed", "nan")])

    async def call_tool(self, params, ctx):
        if params.name == "constructed":  # skips validation: `content` is missing
            return m.CallToolResult.model_construct(is_error=False)
        if params.name == "nan":
            annotations = m.Annotations.model_construct(priority=float("nan"))
            block = m.TextContent.model_construct(type="text", text="x", annotations=annotations)
            return m.CallToolResult(content=[block])
        return m.CallToolResult(content=[m.TextContent(text="fine")])


serve_stdio(Careless())
"""


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_invalid_results_never_leave_the_server(tmp_path: Path, version: str) -> None:
    package = registry.info(version).package
    server = tmp_path / "careless.py"
    server.write_text(INVALID_RESULTS_SERVER.replace("{package}", package), encoding="utf-8")
    client_cls = importlib.import_module(f"mcp_bindings.{package}.client").Client
    with anyio.fail_after(30):
        async with connect_stdio([sys.executable, str(server)], client_cls, stderr=subprocess.DEVNULL) as client:
            for _ in range(3):  # not only the first result of a type is checked
                for name in ("constructed", "nan"):
                    with pytest.raises(McpError) as caught:
                        await client.call_tool(name=name, arguments={})
                    assert caught.value.code == -32603 and "the tools/call result is invalid" in caught.value.message
                result = await client.call_tool(name="ok", arguments={})
                assert result.content[0].text == "fine"
