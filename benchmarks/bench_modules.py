"""4b. Where a stdio server's start-up memory and time go: RSS and import time added per layer.

One fresh process per repetition takes the steps below in order (each import also pays for what it
pulls in that earlier steps did not) and reads its own VmRSS after each: the interpreter, asyncio,
pydantic, anyio and orjson, the runtime's layers, the 2025-11-25 version package (tables and stubs,
no model), the models an echo server's traffic creates (``initialize`` + ``tools/list`` +
``tools/call``) and their validators, and then, for comparison, every model of the version and every
validator: what the models split and deferred building leave out. A last row is pydantic's plugin
discovery (``importlib.metadata`` and its entry-point scan, paid at the first validator). Figures are
medians over the repetitions, of ours only (the official SDK has no matching layers).
"""

from __future__ import annotations

import json
import subprocess

from benchmarks.config import Budget
from benchmarks.report import Row, Section
from benchmarks.setup_env import Environment
from benchmarks.stats import stat_or_none

# Each step: (label, statements run in the probe). Cumulative, in this order.
STEPS: tuple[tuple[str, str], ...] = (
    ("interpreter", "pass"),
    ("asyncio", "import asyncio"),
    ("pydantic (BaseModel)", "from pydantic import BaseModel"),
    ("anyio + orjson", "import anyio, orjson"),
    ("runtime: rpc + protocol", "import mcp_bindings.runtime.rpc.session, mcp_bindings.runtime.protocol.versions"),
    ("runtime: server + stdio", "import mcp_bindings.runtime.server.runtime, mcp_bindings.runtime.stdio"),
    ("runtime: authoring layer (App)", "import mcp_bindings.runtime.app"),
    (
        "2025-11-25 package (tables, stubs)",
        "import mcp_bindings.v2025_11_25.server as s, mcp_bindings.v2025_11_25.methods",
    ),
    ("models an echo's traffic creates", "used = [getattr(m, n) for n in ECHO]"),
    ("their validators built", "[c.model_rebuild() for c in used if isinstance(c, type)]"),
    ("every other model of the version", "every = [getattr(m, n) for n in m.__all__]"),
    ("every validator of the version", "[c.model_rebuild() for c in every if isinstance(c, type)]"),
)

# The models a 2025-11-25 echo server's handshake, listing and call name (and so create).
ECHO = (
    "InitializeRequestParams",
    "InitializeResult",
    "PaginatedRequestParams",
    "ListToolsResult",
    "CallToolRequestParams",
    "CallToolResult",
)

PROBE = """
import json, time
def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
ECHO = {echo!r}
import mcp_bindings.v2025_11_25.models as m
out = []
t = time.perf_counter()
for label, code in {steps!r}:
    exec(code)
    now = time.perf_counter()
    out.append((label, rss(), (now - t) * 1e3))
    t = now
print(json.dumps(out))
"""

PLUGINS = """
import time
t = time.perf_counter()
from importlib.metadata import entry_points
t1 = time.perf_counter()
found = list(entry_points(group="pydantic"))
t2 = time.perf_counter()
print((t1 - t) * 1e3, (t2 - t1) * 1e3, len(found))
"""


def _probe(python: str, env: dict[str, str]) -> list[tuple[str, int, float]]:
    # `import ...models` up front is the lazy index only (no model): it names `m` for the steps.
    code = PROBE.format(echo=ECHO, steps=STEPS)
    result = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise RuntimeError((result.stderr.strip().splitlines() or ["?"])[-1])
    return [tuple(step) for step in json.loads(result.stdout)]  # type: ignore[misc]


def run(env: Environment, budget: Budget) -> Section:
    section = Section()
    if env.ours_python is None:
        section.notes.append("modules: ours not importable, skipped")
        return section
    side_env = env.side_env("ours")
    runs: list[list[tuple[str, int, float]]] = []
    try:
        for _ in range(budget.spawn_reps):
            runs.append(_probe(env.ours_python, side_env))
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        section.notes.append(f"modules: probe failed: {exc}")
        return section
    title = "4b. Start-up by layer (ours, stdio server, 2025-11-25)"
    for i, (label, _) in enumerate(STEPS):
        if i == 0:
            added = [r[0][1] / 1024 for r in runs]
        else:
            added = [(r[i][1] - r[i - 1][1]) / 1024 for r in runs]
        ms = [r[i][2] for r in runs]
        section.rows.append(
            Row(title, f"{label}: RSS added", "MiB", {"ours": stat_or_none(added, "MiB")}, better="info")
        )
        if i:
            section.rows.append(Row(title, f"{label}: time", "ms", {"ours": stat_or_none(ms, "ms")}, better="info"))
    plugin_import: list[float] = []
    plugin_scan: list[float] = []
    for _ in range(budget.spawn_reps):
        result = subprocess.run(
            [env.ours_python, "-c", PLUGINS], env=side_env, capture_output=True, text=True, timeout=60
        )
        if result.returncode == 0:
            first, second, _count = result.stdout.split()
            plugin_import.append(float(first))
            plugin_scan.append(float(second))
    section.rows.append(
        Row(
            title,
            "pydantic plugin discovery: import importlib.metadata",
            "ms",
            {"ours": stat_or_none(plugin_import, "ms")},
            better="info",
        )
    )
    section.rows.append(
        Row(
            title,
            "pydantic plugin discovery: entry-point scan",
            "ms",
            {"ours": stat_or_none(plugin_scan, "ms")},
            better="info",
        )
    )
    section.raw = {"steps": [label for label, _ in STEPS], "runs": runs}
    return section
