"""Curve: catalog. Servers of N tools (the operations of a made-up REST API: ``<verb>_<resource>_<i>``,
a description and two described parameters each; one catalog file, the same for every peer) over
stdio at 2025-11-25: start-up, RSS, ``tools/list``, ``tools/call``, and behind a tool search (ours:
``ToolSearch``; FastMCP: ``BM25SearchTransform``; the official SDK has none) the first search (the
index is made), a search's wall time and the server's CPU per search (``/proc/<pid>/stat``, over a
run of searches). The servers: ``ours_catalog_server.py`` and its twins ``peers/official_catalog_server.py``
and ``peers/fastmcp_catalog_server.py``."""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.config import PEERS_DIR, PROTOCOL_LEGACY
from benchmarks.curves.common import Ids, call, ms_stat, request, timed_stdio
from benchmarks.curves.model import Curve, Metric
from benchmarks.curves.servers import CurveBudget, python_of
from benchmarks.driver import DriverError, StdioClient, stdio_handshake
from benchmarks.procs import cpu_seconds, spawn, stop
from benchmarks.setup_env import Environment
from benchmarks.stats import Stat, stat_or_none

HERE = Path(__file__).parent
SCRIPTS = {
    "ours": HERE / "ours_catalog_server.py",
    "official": PEERS_DIR / "official_catalog_server.py",
    "fastmcp": PEERS_DIR / "fastmcp_catalog_server.py",
}
SEARCHING = {"ours": "ours + ToolSearch", "fastmcp": "fastmcp + BM25SearchTransform"}
META = {"ours": 3, "fastmcp": 2}  # the tools a search variant lists in place of the catalog
VERBS = ("list", "get", "create", "update", "delete")
RESOURCES = (
    "invoice", "customer", "order", "shipment", "warehouse", "product", "coupon", "refund", "payment",
    "subscription", "webhook", "team", "member", "project", "issue", "label", "milestone", "release",
    "branch", "commit", "deployment", "secret", "runner", "artifact", "package",
)  # fmt: skip
QUERIES = (
    "create a new customer",
    "delete an invoice",
    "list the webhooks",
    "update a shipment",
    "get the artifact of a release",
    "refund a payment",
)


def catalog(count: int) -> list[dict[str, Any]]:
    """`count` tool definitions, as `tools/list` lists them."""
    tools = []
    for i in range(count):
        verb, resource = VERBS[i % len(VERBS)], RESOURCES[(i // len(VERBS)) % len(RESOURCES)]
        properties = {
            f"{resource}_id": {"type": "string", "description": f"The id of the {resource}."},
            "text": {"type": "string", "description": "A note kept with the change."},
        }
        tools.append(
            {
                "name": f"{verb}_{resource}_{i}",
                "description": f"{verb.capitalize()} a {resource} of the account (variant {i}).",
                "inputSchema": {"type": "object", "properties": properties, "required": [f"{resource}_id"]},
            }
        )
    return tools


def series(names: list[str]) -> list[tuple[str, str, bool]]:
    """(series label, peer, behind a search) for the peers this environment has."""
    plain = [(peer, peer, False) for peer in names]
    return plain + [(SEARCHING[peer], peer, True) for peer in names if peer in SEARCHING]


def run(env: Environment, budget: CurveBudget, names: list[str]) -> Curve:
    xs = list(budget.catalog)
    metrics = {
        "start": Metric("start-up (spawn to initialized)", "ms", per_unit="us per tool", per_unit_scale=1000.0),
        "rss": Metric("RSS after listing and searching", "MiB", per_unit="KiB per tool", per_unit_scale=1024.0),
        "list": Metric("tools/list", "ms", per_unit="us per tool", per_unit_scale=1000.0, log_y=True),
        "call": Metric("tools/call (search variants: through call_tool)", "ms"),
        "first": Metric("first search_tools (index made)", "ms", per_unit="us per tool", per_unit_scale=1000.0),
        "search": Metric("search_tools, wall", "ms", per_unit="ns per tool", per_unit_scale=1e6),
        "cpu": Metric("search_tools, server CPU per search", "ms", per_unit="ns per tool", per_unit_scale=1e6),
    }
    labels = series(names)
    with tempfile.TemporaryDirectory(prefix="catalog-curve-") as folder:
        for index, count in enumerate(xs):
            path = Path(folder) / f"catalog-{count}.json"
            path.write_text(json.dumps(catalog(count)))
            for label, peer, search in labels:
                point = _point(env, budget, peer, search, path, count)
                for key, stat in point.items():
                    metrics[key].add(label, index, stat, len(xs))
    curve = Curve(
        "catalog",
        "Catalog: start-up, memory, list, call and search against the number of tools",
        "tools",
        [float(x) for x in xs],
        list(metrics.values()),
    )
    curve.notes.append(
        "stdio, 2025-11-25, one server process per peer and point, started alone (no other peer running). "
        "Start-up: spawn to the initialize answer. RSS: VmRSS after the lists, calls and searches. Search "
        f"variants list the catalog as {META['ours']} tools (ours) / {META['fastmcp']} (FastMCP) and are "
        f"called through their call_tool; a search is search_tools(query) with each peer's default of 5 "
        f"results, over {len(QUERIES)} queries in turn. Server CPU: utime+stime of the server process over "
        f"{budget.catalog_searches} searches after the first, divided by their number."
    )
    return curve


def _point(
    env: Environment, budget: CurveBudget, peer: str, search: bool, path: Path, count: int
) -> dict[str, Stat | None]:
    ids = Ids()
    with catalog_server(env, peer, search, path, budget.timeout) as (proc, client, started):
        out: dict[str, Stat | None] = {"start": ms_stat([started])}
        listed = META[peer] if search else count
        lists: list[float] = []
        for rep in range(budget.catalog_reps + 1):  # the first round warms up
            req = ids()
            seconds, result = timed_stdio(client, request(req, "tools/list"), req, "tools/list")
            if len(result.get("tools", ())) != listed:
                raise DriverError(f"{peer}: tools/list gave {len(result.get('tools', ()))} tools, not {listed}")
            if rep:
                lists.append(seconds)
        out["list"] = ms_stat(lists)
        last = catalog(count)[-1]  # the last tool, with its required argument
        target, arguments = last["name"], {name: "x" for name in last["inputSchema"]["properties"]}
        calls: list[float] = []
        for rep in range(budget.catalog_reps * 4 + 1):
            req = ids()
            if search:
                line = call(req, "call_tool", {"name": target, "arguments": arguments})
            else:
                line = call(req, target, arguments)
            seconds, result = timed_stdio(client, line, req, target)
            if result.get("isError") or target not in json.dumps(result.get("content")):
                raise DriverError(f"{peer}: calling {target} answered {str(result)[:300]}")
            if rep:
                calls.append(seconds)
        out["call"] = ms_stat(calls)
        if search:
            out.update(_searches(client, ids, proc.pid, budget.catalog_searches, peer))
        out["rss"] = stat_or_none([_rss_mib(proc.pid)], "MiB")
    return out


def _searches(client: StdioClient, ids: Ids, pid: int, count: int, peer: str) -> dict[str, Stat | None]:
    def one(query: str) -> float:
        req = ids()
        seconds, result = timed_stdio(client, call(req, "search_tools", {"query": query}), req, "search_tools")
        if result.get("isError"):  # finding nothing is an answer (a small catalog lacks some words)
            raise DriverError(f"{peer}: search_tools answered {str(result)[:300]}")
        return seconds

    first = one(QUERIES[0])
    walls: list[float] = []
    cpu_before = cpu_seconds(pid)
    for i in range(count):
        walls.append(one(QUERIES[i % len(QUERIES)]))
    cpu = (cpu_seconds(pid) - cpu_before) / max(1, count)
    return {"first": ms_stat([first]), "search": ms_stat(walls), "cpu": ms_stat([cpu])}


@contextmanager
def catalog_server(
    env: Environment, peer: str, search: bool, path: Path, timeout: float
) -> Iterator[tuple[subprocess.Popen[bytes], StdioClient, float]]:
    python = python_of(env, peer)
    assert python is not None
    argv = [python, str(SCRIPTS[peer]), "--catalog", str(path), *(["--search"] if search else [])]
    started = time.perf_counter()
    proc = spawn(
        argv,
        env=env.side_env(peer),
        log_name=f"catalog-{peer}{'-search' if search else ''}",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        client = StdioClient(proc, timeout)
        stdio_handshake(client, PROTOCOL_LEGACY)
        yield proc, client, time.perf_counter() - started
    finally:
        stop(proc)


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise DriverError(f"no VmRSS for process {pid}")
