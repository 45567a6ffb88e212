"""Plug-in points for *ours* (mcp-bindgen / ``mcp_bindings``). Fill these in; everything else adapts.

Every hook returns ``None`` (or an empty mapping) to mean "skip ours for this
measurement"; the harness then prints ``-`` in the *ours* column. Hooks must be
cheap to import: this module is imported by the harness (any Python 3.11,
stdlib only) and by the message-path worker (the mixed venv: mcp==2.3.0 +
orjson + ``pip install -e`` of this repo). Never import ``mcp_bindings`` at
module level.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchmarks.corpus import CorpusItem

REPO_ROOT = Path(__file__).resolve().parent.parent

# 1. Start-up ----------------------------------------------------------------------------------

OURS_IMPORT_FULL: tuple[str, ...] = (
    "mcp_bindings.v2025_11_25",
    "mcp_bindings.v2025_11_25.methods",
    "mcp_bindings.v2025_11_25.server",
    "mcp_bindings.runtime",
)
"""One version's full surface; compared with ``import mcp_types.methods, mcp.server``."""

OURS_IMPORT_TYPES: tuple[str, ...] = (
    "mcp_bindings.v2025_11_25",
    "mcp_bindings.v2025_11_25.methods",
)
"""Types-only surface; compared with ``import mcp_types.methods``."""

OURS_EXTRA_ENV: dict[str, str] = {}
"""Extra environment for every process of ours (e.g. ``{"PYTHONPATH": str(REPO_ROOT / "generated")}``)."""


def ours_python() -> str:
    """Interpreter that runs ours (imports, servers). Default: the project's dev venv."""
    venv_python = REPO_ROOT / ".venv" / "bin" / "python"
    return str(venv_python) if venv_python.exists() else sys.executable


# 2. Message path ------------------------------------------------------------------------------


def ours_message_path(corpus: Sequence[CorpusItem]) -> Mapping[str, Callable[[], bytes]] | None:
    """Return ``{item.name: fn}`` where ``fn()`` runs one complete message path for that item.

    Runs in the mixed venv's process, next to the official SDK. ``fn`` takes no
    arguments and must do all per-message work on every call, from
    ``item.wire`` (bytes) to the bytes ours would write: for a request, decode +
    validate into the dispatch-ready typed request, run the ``echo`` handler
    (result ``content = [{"type": "text", "text": arguments["text"]}]``) and
    encode the response; for a result, decode + validate it as the client would
    (typed result for ``item.method``) then encode it as the server would; for a
    notification, decode + validate then encode. Return one JSON-RPC message
    followed by ``b"\\n"`` (compared, as JSON, with the official output). Work
    that happens once per process (building validators, caches) belongs outside
    ``fn``. Missing keys are skipped. Return ``None`` to skip ours entirely.
    """
    if importlib.util.find_spec("mcp_bindings") is None:
        return None
    from benchmarks.ours_message_path import build

    return build(corpus)


# 3/4/6. Servers -------------------------------------------------------------------------------

OURS_HTTP_PATH = "/mcp"
"""Endpoint path of ours' Streamable HTTP server."""


def ours_stdio_server_command(protocol_version: str) -> list[str] | None:
    """argv that starts ours' stdio server exposing one tool ``echo`` (returns its ``text`` argument).

    The driver speaks ``protocol_version`` to it: ``2025-11-25`` opens with
    ``initialize`` + ``notifications/initialized``; ``2026-07-28`` sends no
    handshake (``server/discover`` first, every request carries the ``_meta``
    envelope). Return ``None`` for a version ours does not serve.
    Run with ``ours_python()``'s environment plus ``OURS_EXTRA_ENV``; the pid
    started is the one measured (RSS, CPU), so exec the server directly, no shell.
    Example: ``[ours_python(), "-m", "mcp_bindings.examples.echo_stdio"]``.
    """
    # The echo server written against the stub of the version the driver speaks (no conversion).
    return [ours_python(), str(REPO_ROOT / "examples" / "echo_server.py"), "--stub", protocol_version]


def ours_http_server_command(fd: int, protocol_version: str, *, pure_python_http: bool = False) -> list[str] | None:
    """argv that starts ours' Streamable HTTP server at ``OURS_HTTP_PATH`` on the socket it inherits as
    ``fd`` (``procs.listener()``, bound on 127.0.0.1 by the harness and passed with ``pass_fds``).

    Same ``echo`` tool. One server process serves one benchmark (1 client,
    then 16 concurrent clients). Return ``None`` to skip.
    ``pure_python_http``: run on uvicorn's h11 parser and asyncio loop (the official
    server's stack) instead of the default httptools + uvloop.
    """
    argv = [
        ours_python(),
        str(REPO_ROOT / "examples" / "echo_server.py"),
        "--transport",
        "http",
        "--fd",
        str(fd),
        "--stub",
        protocol_version,
    ]
    return [*argv, "--http-stack", "h11"] if pure_python_http else argv


# 5. Generator ---------------------------------------------------------------------------------


def ours_generator_commands() -> Mapping[str, list[str]] | None:
    """``{"generate": argv, "check": argv}``, each timed with cwd = repo root; ``None`` when the CLI is absent.

    Default: the ``mcp-bindgen`` console script from the project venv (or PATH):
    ``mcp-bindgen generate --out .cache/bench/generate-out`` (a scratch src root,
    so the benchmark never rewrites ``generated/``) and ``mcp-bindgen check``
    (regenerates in memory and compares with the committed files; a non-zero
    exit, i.e. a diff, is timed all the same and reported in the notes).
    """
    exe = REPO_ROOT / ".venv" / "bin" / "mcp-bindgen"
    found = str(exe) if exe.exists() else shutil.which("mcp-bindgen")
    if not found:
        return None
    scratch = REPO_ROOT / ".cache" / "bench" / "generate-out"
    return {"generate": [found, "generate", "--out", str(scratch)], "check": [found, "check"]}
