"""1b. Start-up: spawn-to-first-response of a stdio server.

Timer starts just before the process is spawned; the first request is written
to its stdin at once (it waits in the pipe), and the timer stops when the
response line is read. 2025-11-25: ``initialize``; 2026-07-28 (no handshake):
``server/discover`` with the per-request ``_meta`` envelope. One untimed
warm-up spawn per server first (fills its bytecode tree); a note says how many of ours' modules then
have fresh bytecode there (`bytecode_note`), so the figure is the one a user whose install
precompiled the package (pip does for wheels, `scripts/setup` for this checkout) gets.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from benchmarks import ours
from benchmarks.config import PEERS_DIR, PROTOCOL_LEGACY, PROTOCOL_VERSIONS, Budget
from benchmarks.driver import DriverError, StdioClient, discover_request, initialize_request
from benchmarks.procs import spawn, stop
from benchmarks.report import Row, Section, ratio_at_most
from benchmarks.setup_env import Environment
from benchmarks.stats import stat_or_none


def stdio_commands(env: Environment, version: str) -> dict[str, tuple[list[str], str]]:
    """{peer: (argv, side)} of the stdio servers that serve ``version``."""
    cmds: dict[str, tuple[list[str], str]] = {
        "official": (
            [env.official_python, str(PEERS_DIR / "official_stdio_server.py")],
            "official",
        ),
        "floor": ([env.official_python, str(PEERS_DIR / "floor_stdio_echo.py")], "floor"),
    }
    if env.ours_python:
        argv = ours.ours_stdio_server_command(version)
        if argv:
            cmds["ours"] = (list(argv), "ours")
    return cmds


# Run by ours' interpreter in ours' environment (its PYTHONPYCACHEPREFIX): of the .py files of the
# `mcp_bindings` namespace (the runtime and the generated packages), how many have a .pyc whose
# header matches the source's mtime and size (what the import system checks before using it).
_BYTECODE_CHECK = """
import importlib.util, os, pathlib, sys
import mcp_bindings
fresh = total = 0
for root in mcp_bindings.__path__:
    for source in pathlib.Path(root).rglob("*.py"):
        total += 1
        try:
            head = pathlib.Path(importlib.util.cache_from_source(str(source))).read_bytes()[:16]
        except OSError:
            continue
        st = source.stat()
        if head[8:12] == (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little") and head[12:16] == (
            st.st_size & 0xFFFFFFFF
        ).to_bytes(4, "little"):
            fresh += 1
print(fresh, total)
"""


def bytecode_note(python: str, side_env: dict[str, str]) -> str:
    """One line: how many of ours' modules have fresh bytecode where `side_env`'s interpreter looks."""
    r = subprocess.run(
        [python, "-c", _BYTECODE_CHECK], env=side_env, capture_output=True, text=True, timeout=120, check=False
    )
    if r.returncode != 0:
        return f"ours' bytecode: not checked ({(r.stderr.strip().splitlines() or ['?'])[-1]})"
    fresh, total = r.stdout.split()
    where = side_env.get("PYTHONPYCACHEPREFIX", "__pycache__ beside the sources")
    return f"ours' bytecode: {fresh} of {total} mcp_bindings modules have a fresh .pyc in {where}"


def _first_response_ms(argv: list[str], side_env: dict[str, str], version: str, timeout: float, log: str) -> float:
    first = initialize_request(0, version) if version == PROTOCOL_LEGACY else discover_request(0, version)
    start = time.perf_counter()
    proc = spawn(argv, env=side_env, log_name=log, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        client = StdioClient(proc, timeout)
        response = client.request(first, 0)
        elapsed = time.perf_counter() - start
        if "result" not in response:
            raise DriverError(f"first request failed: {str(response)[:300]}")
        return elapsed * 1e3
    finally:
        stop(proc)


def run(env: Environment, budget: Budget) -> Section:
    section = Section()
    title = "1. Start-up (bytecode precompiled for both sides)"
    for version in PROTOCOL_VERSIONS:
        cmds = stdio_commands(env, version)
        samples: dict[str, list[float]] = {peer: [] for peer in cmds}
        broken: set[str] = set()
        for peer, (argv, side) in cmds.items():
            try:
                _first_response_ms(
                    argv,
                    env.side_env(side, write=True),
                    version,
                    budget.server_start_timeout,
                    f"spawn-{peer}",
                )
            except (DriverError, OSError) as exc:
                broken.add(peer)
                section.notes.append(f"spawn {peer} @ {version}: {exc}")
        if "ours" in cmds and "ours" not in broken and env.ours_python:
            section.notes.append(f"spawn @ {version}: {bytecode_note(env.ours_python, env.side_env('ours'))}")
        peers = [p for p in cmds if p not in broken]
        for rep in range(budget.spawn_reps):
            for peer in peers[rep % max(1, len(peers)) :] + peers[: rep % max(1, len(peers))]:
                argv, side = cmds[peer]
                samples[peer].append(
                    _first_response_ms(
                        argv,
                        env.side_env(side),
                        version,
                        budget.server_start_timeout,
                        f"spawn-{peer}",
                    )
                )
        print(f"  spawn-to-first-response @ {version} done", file=sys.stderr, flush=True)
        first = "initialize" if version == PROTOCOL_LEGACY else "server/discover"
        section.rows.append(
            Row(
                title,
                f"stdio spawn -> first response ({first}, {version})",
                "ms",
                {p: stat_or_none(samples.get(p, []), "ms") for p in ("ours", "official", "floor")},
                target=ratio_at_most(0.5),
            )
        )
    return section


# --- instructions to the first answer (valgrind), a figure the machine's load does not move ------

# Runs the server script (argv[1:]) with the runtime's pipe transport ending the process right after
# it sent its first frame (a result or any other message), so the count stops at the first answer as
# the wall figure does.
_UNTIL_FIRST_ANSWER = """
import functools, os, runpy, sys
from mcp_bindings.runtime.rpc.pipes import PipeTransport
def _then_exit(send):
    @functools.wraps(send)
    async def wrapper(*args, **kwargs):
        await send(*args, **kwargs)
        os._exit(0)
    return wrapper
PipeTransport.send = _then_exit(PipeTransport.send)
PipeTransport.send_result = _then_exit(PipeTransport.send_result)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def instructions_to_first_answer(script: str, version: str, env: dict[str, str], timeout: float = 600) -> int:
    """Instructions (callgrind's `Ir`) ours' stdio server `script` (written against `version`) executes
    from its start to its first answer, over pipes as in the benchmark (so on uvloop). Its stdin stays
    open: a server that did not end at its answer runs into `timeout` (`subprocess.TimeoutExpired`)
    instead of being counted up to its shutdown."""
    first = initialize_request(0, version) if version == PROTOCOL_LEGACY else discover_request(0, version)
    valgrind = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    argv = [*valgrind, ours.ours_python(), "-c", _UNTIL_FIRST_ANSWER, script, "--stub", version]
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, first + b"\n")
        proc = subprocess.run(
            argv,
            stdin=read_end,
            env={**env, "PYTHONHASHSEED": "0"},
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    finally:
        os.close(read_end)
        os.close(write_end)
    collected = [line for line in proc.stderr.decode().splitlines() if "Collected :" in line]
    if b'"result"' not in proc.stdout or not collected:
        raise DriverError(f"no first answer under valgrind: {proc.stderr.decode()[-300:]}")
    return int(collected[-1].split(":")[-1].replace(",", ""))


def main() -> None:
    """`python -m benchmarks.bench_spawn`: instructions to the first answer of the stub and the app
    layer echo servers at each version (docs/performance.md, "counted in instructions")."""
    import argparse
    import shutil

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--versions", default=",".join(PROTOCOL_VERSIONS))
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    servers = {
        "stub": str(ours.REPO_ROOT / "examples" / "echo_server.py"),
        "app layer": str(PEERS_DIR / "ours_app_echo.py"),
    }
    env = {**os.environ, **ours.OURS_EXTRA_ENV}
    for version in args.versions.split(","):
        for name, script in servers.items():
            count = instructions_to_first_answer(script, version, env)
            print(f"{name} @ {version}: {count / 1e6:,.0f} million instructions to the first answer", flush=True)


if __name__ == "__main__":
    main()
