"""In-process cost of the 2026-07-28 per-request header check (SEP-2243), run by ours' interpreter for
``benchmarks/curves/tools.py``: a tool catalog of N tools (every even-numbered one mapping ``region``
to ``Mcp-Param-Region``, as ``ours_server.py --headers`` lists them), then ``ToolHeaders.check`` timed on
a request to a mapped tool and to an unmapped one. Prints JSON:
``{N: {"mapped_us": [..], "plain_us": [..]}}`` (µs per check, one figure per repetition).

    .venv/bin/python benchmarks/curves/header_worker.py 10 100 1000
"""

from __future__ import annotations

import json
import sys
import timeit
from types import SimpleNamespace
from typing import Any

from mcp_bindings.runtime.http.stateless import ToolHeaders
from mcp_bindings.runtime.protocol.tool_catalog import ToolCatalog, definitions
from mcp_bindings.runtime.rpc.jsonrpc import Request

META: dict[str, Any] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}


def _tools(count: int) -> list[dict[str, Any]]:
    out = []
    for i in range(count):
        region: dict[str, Any] = {"type": "string"}
        if i % 2 == 0:
            region["x-mcp-header"] = "Region"
        out.append(
            {
                "name": f"tool_{i}",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}, "region": region}},
            }
        )
    return out


def measure(count: int, loops: int = 20_000) -> dict[str, list[float]]:
    catalog = ToolCatalog()
    catalog.remember(definitions(_tools(count), "https://json-schema.org/draft/2020-12/schema"))
    check = ToolHeaders(SimpleNamespace(tool_catalog=catalog)).check  # type: ignore[arg-type]  # only the catalog is read
    out: dict[str, list[float]] = {}
    plain_index = count - 1 if (count - 1) % 2 else count - 2
    for label, name, headers in (
        ("mapped_us", "tool_0", {"mcp-param-region": "eu"}),
        ("plain_us", f"tool_{plain_index}", {}),
    ):
        rpc = Request(1, "tools/call", {"name": name, "arguments": {"text": "hi", "region": "eu"}}, {})
        check(headers, rpc, META)  # the first reads the annotations from the schema (once per tool)
        runs = timeit.repeat(lambda: check(headers, rpc, META), number=loops, repeat=7)  # noqa: B023
        out[label] = [run / loops * 1e6 for run in runs]
    return out


def main() -> None:
    print(json.dumps({count: measure(int(count)) for count in sys.argv[1:]}))


if __name__ == "__main__":
    main()
