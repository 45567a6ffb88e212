"""Tool-schema validation benchmark worker: ours only, with vs without, in one process.

``python -m benchmarks.tool_schemas_worker OUT.json [--quick]`` (cwd = repo root, ours' interpreter).

Three pairs, each a `tools/call` measured with the tool schemas enforced and not (`validate_tools` on
the server class, `tool_checks.enabled` on the client), after a `tools/list` so the tool is known:

* ``request``: the server's request path for ``echo`` of ``examples/echo_server.py`` at 2025-11-25,
  in-process, as the message-path benchmark drives it (decode, `ServerRuntime.on_request`, encode);
  the inputSchema is checked.
* ``structured``: the same path for an echo whose result carries `structuredContent` and whose
  definition an outputSchema; both schemas are checked.
* ``roundtrip``: typed client + server in memory (`connect_in_memory`), the ``echo`` call.

Samples alternate between the two sides of a pair (each sample a calibrated number of calls) so
that drift on a busy machine hits both alike; the overhead is given per pair of samples.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import anyio

from benchmarks.ours_message_path import ECHO_SERVER, _complete

VERSION = "2025-11-25"
CALL = {"name": "echo", "arguments": {"text": "hello"}}


def _echo_module() -> Any:
    spec = importlib.util.spec_from_file_location("_bench_echo_server", ECHO_SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _server(structured: bool, validate: bool) -> Any:
    echo: Any = type(_echo_module().make_server(VERSION))
    if structured:
        from mcp_bindings.v2025_11_25 import models as m

        output = m.ToolOutputSchema(type="object", properties={"text": {"type": "string"}}, required=["text"])

        class StructuredEcho(echo):
            async def list_tools(self, params: Any, ctx: Any) -> Any:
                listed = await super().list_tools(params, ctx)
                return m.ListToolsResult(tools=[t.model_copy(update={"output_schema": output}) for t in listed.tools])

            async def call_tool(self, params: Any, ctx: Any) -> Any:
                text = str((params.arguments or {}).get("text", ""))
                content: list[m.ContentBlock] = [m.TextContent(type="text", text=text)]
                return m.CallToolResult(content=content, structured_content={"text": text})

        echo = StructuredEcho
    server = echo()
    server.validate_tools = validate
    return server


def _request_path(structured: bool, validate: bool) -> Callable[[], bytes]:
    from mcp_bindings.runtime.rpc import jsonrpc
    from mcp_bindings.runtime.rpc.session import Session
    from mcp_bindings.runtime.server.runtime import ServerRuntime
    from mcp_bindings.runtime.server.tool_schemas import ServerToolChecks

    runtime = ServerRuntime(_server(structured, validate))
    session = Session(None, runtime)  # type: ignore[arg-type]  # no transport: frames are returned
    hello = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
    for frame in (jsonrpc.encode_request(0, "initialize", hello), jsonrpc.encode_request(1, "tools/list", None)):
        request = jsonrpc.classify(jsonrpc.decode(frame))
        assert isinstance(request, jsonrpc.Request)
        _complete(runtime.on_request(request, session))
    checks = [state for state in runtime.feature_state.values() if isinstance(state, ServerToolChecks)]
    # Every server keeps its listed tools (the tools/list hook); the call checks run only with validate.
    assert [state.check_calls for state in checks] == [validate]
    wire = jsonrpc.encode_request(2, "tools/call", CALL)

    def path() -> bytes:
        message = jsonrpc.classify(jsonrpc.decode(wire))
        assert isinstance(message, jsonrpc.Request)
        return jsonrpc.encode_result(message.id, _complete(runtime.on_request(message, session))) + b"\n"

    return path


def _calibrate(fn: Callable[[], Any], seconds: float) -> int:
    for _ in range(20):
        fn()
    number = 16
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds / 4 or number >= 1 << 20:
            return max(1, int(number * seconds / max(elapsed, 1e-9)))
        number *= 4


def _pairs(on: Callable[[], Any], off: Callable[[], Any], samples: int, seconds: float) -> dict[str, list[float]]:
    """µs per call of each side, sample by sample, the side that goes first alternating."""
    number = _calibrate(off, seconds)
    out: dict[str, list[float]] = {"on": [], "off": []}
    for i in range(samples):
        for side in ("on", "off") if i % 2 else ("off", "on"):
            fn = on if side == "on" else off
            gc.collect()
            start = time.perf_counter()
            for _ in range(number):
                fn()
            out[side].append((time.perf_counter() - start) / number * 1e6)
    return out


async def _roundtrip_pairs(samples: int, seconds: float) -> dict[str, list[float]]:
    from mcp_bindings.runtime.memory import connect_in_memory
    from mcp_bindings.v2025_11_25.client import Client

    async with (
        connect_in_memory(_server(False, True), Client) as on,
        connect_in_memory(_server(False, False), Client) as off,
    ):
        off.session.tool_checks.enabled = False
        for client in (on, off):
            await client.list_tools()
        clients = {"on": on, "off": off}
        for client in clients.values():  # warm, and calibrate on the unchecked side
            for _ in range(50):
                await client.call_tool(**CALL)
        number = 16
        while True:
            start = time.perf_counter()
            for _ in range(number):
                await off.call_tool(**CALL)
            elapsed = time.perf_counter() - start
            if elapsed >= seconds / 4 or number >= 1 << 16:
                number = max(1, int(number * seconds / max(elapsed, 1e-9)))
                break
            number *= 4
        out: dict[str, list[float]] = {"on": [], "off": []}
        for i in range(samples):
            for side in ("on", "off") if i % 2 else ("off", "on"):
                client = clients[side]
                gc.collect()
                start = time.perf_counter()
                for _ in range(number):
                    await client.call_tool(**CALL)
                out[side].append((time.perf_counter() - start) / number * 1e6)
        return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    samples, seconds = (31, 0.02) if args.quick else (61, 0.04)
    report: dict[str, Any] = {"python": sys.version, "version": VERSION, "samples": samples, "items": {}}
    for structured in (False, True):
        on, off = _request_path(structured, True), _request_path(structured, False)
        assert json.loads(on()) == json.loads(off()), "the same answer with and without the checks"
        report["items"]["structured" if structured else "request"] = _pairs(on, off, samples, seconds)
    report["items"]["roundtrip"] = anyio.run(_roundtrip_pairs, samples, seconds * 2)
    for item in report["items"].values():
        item["overhead_pct"] = [100 * (a / b - 1) for a, b in zip(item["on"], item["off"], strict=True)]
        item["median_overhead_pct"] = statistics.median(item["overhead_pct"])
    with open(args.out, "w") as f:
        json.dump(report, f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
