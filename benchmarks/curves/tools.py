"""Curve: tools. A server with N tools (plus ``echo`` and ``sleep``): ``tools/list`` time, one
``tools/call``'s time, over stdio at 2025-11-25 for every peer; for ours also the 2026-07-28
per-request header mapping (SEP-2243 ``x-mcp-header``) over Streamable HTTP, as the difference
between calling a tool that maps ``region`` to ``Mcp-Param-Region`` and one that maps nothing, on the
same server (calls alternate in blocks)."""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
from pathlib import Path

from benchmarks.config import LOOPBACK, PROTOCOL_MODERN
from benchmarks.curves.common import Ids, call, ms_stat, request, rotated, timed_http, timed_stdio
from benchmarks.curves.model import Curve, Metric
from benchmarks.curves.servers import CurveBudget, http_servers, stdio_servers
from benchmarks.driver import DriverError, HttpClient, discover_request, envelope
from benchmarks.setup_env import Environment
from benchmarks.stats import Stat, stat_or_none

BLOCK = 25  # calls of one kind before switching to the other


def run(env: Environment, budget: CurveBudget, names: list[str]) -> Curve:
    xs = list(budget.tools)
    listing = Metric("tools/list", "ms", per_unit="us per tool", per_unit_scale=1000.0, log_y=True)
    calling = Metric("tools/call", "ms", per_unit="us per tool", per_unit_scale=1000.0)
    mapping = Metric("x-mcp-header check, 2026-07-28", "us per call", per_unit="ns per tool", per_unit_scale=1000.0)
    over_http = Metric("x-mcp-header: mapped - unmapped call, HTTP", "us")
    in_process = _in_process(env, xs) if "ours" in names else {}
    for index, count in enumerate(xs):
        lists, calls = _stdio_point(env, budget, names, count)
        for peer in names:
            listing.add(peer, index, lists.get(peer), len(xs))
            calling.add(peer, index, calls.get(peer), len(xs))
        if "ours" in names:
            samples = in_process.get(str(count), {})
            mapping.add("ours mapped, in process", index, stat_or_none(samples.get("mapped_us", []), "us"), len(xs))
            mapping.add("ours unmapped, in process", index, stat_or_none(samples.get("plain_us", []), "us"), len(xs))
            over_http.add("ours", index, _header_point(env, budget, count), len(xs))
    curve = Curve(
        "tools",
        "Tools: list and call time against the number of tools",
        "tools",
        [float(x) for x in xs],
        [listing, calling, mapping, over_http],
    )
    curve.notes.append(
        "tools/list and tools/call: stdio, 2025-11-25, the driver's wall time per request (the client's "
        "JSON decode of the list included, the same for every peer); the call is tool_<N-1>."
    )
    curve.notes.append(
        "x-mcp-header check: ours only (the official SDK and FastMCP do not check x-mcp-header). In process "
        "(header_worker.py): ToolHeaders.check on a request to a tool mapping region to Mcp-Param-Region and "
        "to one mapping nothing, the catalog holding N tools. Over HTTP: the median wall time of a call to "
        f"the mapped tool minus that of the unmapped one, per pair of blocks of {BLOCK} calls alternating on "
        "one server at 2026-07-28 after a tools/list (a difference below the noise shows as ~0 or negative)."
    )
    return curve


def _stdio_point(
    env: Environment, budget: CurveBudget, names: list[str], count: int
) -> tuple[dict[str, Stat | None], dict[str, Stat | None]]:
    ids = Ids()
    lists: dict[str, list[float]] = {p: [] for p in names}
    calls: dict[str, list[float]] = {p: [] for p in names}
    target = f"tool_{count - 1}"
    with stdio_servers(env, names, budget.timeout, tools=count, headers=True) as running:
        for rep in range(budget.tool_reps + 1):  # the first round warms up
            for peer in rotated(names, rep):
                req_id = ids()
                seconds, result = timed_stdio(running[peer].client, request(req_id, "tools/list"), req_id, "tools/list")
                if len(result.get("tools", ())) != count + 2:
                    raise DriverError(f"{peer}: tools/list gave {len(result.get('tools', ()))} tools, not {count + 2}")
                if rep:
                    lists[peer].append(seconds)
        per_block = max(1, budget.tool_calls // max(1, budget.tool_reps))
        for rep in range(budget.tool_reps + 1):
            for peer in rotated(names, rep):
                client = running[peer].client
                for _ in range(per_block):
                    req_id = ids()
                    seconds, _ = timed_stdio(
                        client, call(req_id, target, {"text": "hi", "region": "eu"}), req_id, target
                    )
                    if rep:
                        calls[peer].append(seconds)
    return ({p: ms_stat(v) for p, v in lists.items()}, {p: ms_stat(v) for p, v in calls.items()})


def _in_process(env: Environment, counts: list[int]) -> dict[str, dict[str, list[float]]]:
    assert env.ours_python is not None
    argv = [env.ours_python, str(Path(__file__).with_name("header_worker.py")), *map(str, counts)]
    done = subprocess.run(argv, env=env.side_env("ours"), capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise DriverError(f"header_worker.py failed: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout)


def _header_point(env: Environment, budget: CurveBudget, count: int) -> Stat | None:
    with http_servers(env, ["ours"], budget.timeout, tools=count, headers=True) as running:
        return asyncio.run(_header_calls(running["ours"].port, budget, count))


async def _header_calls(port: int, budget: CurveBudget, count: int) -> Stat | None:
    http = HttpClient(LOOPBACK, port, "/mcp", budget.timeout)
    await http.connect()
    try:
        base = f"MCP-Protocol-Version: {PROTOCOL_MODERN}\r\n"
        status, _, data = await http.post(discover_request(0), (base + "Mcp-Method: server/discover\r\n").encode())
        if status != 200:
            raise DriverError(f"server/discover: HTTP {status}: {data[:200]!r}")
        listed = request(1, "tools/list", {"_meta": envelope(PROTOCOL_MODERN)})
        await timed_http(http, listed, (base + "Mcp-Method: tools/list\r\n").encode(), "tools/list")
        mapped, plain = "tool_0", f"tool_{count - 1 if (count - 1) % 2 else count - 2}"
        heads = {
            mapped: (base + f"Mcp-Method: tools/call\r\nMcp-Name: {mapped}\r\nMcp-Param-Region: eu\r\n").encode(),
            plain: (base + f"Mcp-Method: tools/call\r\nMcp-Name: {plain}\r\n").encode(),
        }
        differences: list[float] = []  # per pair of blocks: median mapped - median plain
        req_id = 10
        for pair in range(max(2, budget.tool_calls // BLOCK) + 1):  # the first pair warms up
            medians: dict[str, float] = {}
            for tool in (mapped, plain) if pair % 2 == 0 else (plain, mapped):
                times: list[float] = []
                for _ in range(BLOCK):
                    req_id += 1
                    body = call(req_id, tool, {"text": "hi", "region": "eu"}, PROTOCOL_MODERN)
                    seconds, _ = await timed_http(http, body, heads[tool], tool)
                    times.append(seconds)
                medians[tool] = statistics.median(times)
            if pair:
                differences.append((medians[mapped] - medians[plain]) * 1e6)
    finally:
        await http.close()
    return stat_or_none(differences, "us")
