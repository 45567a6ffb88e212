"""Helpers shared by the test modules (import them from here, never from another `test_*` module;
tests/test_layout.py checks that). Fixtures live in the conftest.py files; what is here is plain code:

- this package: `REPO_ROOT`, `free_port`, `shared_schema_dir`;
- `pipeline`: the pinned versions and the generator's results per version, computed once per session;
- `http`: a server on uvicorn in a thread (`serve_in_thread`) and raw Streamable HTTP wire helpers;
- `sdk`: the official SDK's venv (Python) and the TypeScript SDK peers;
- `scaleout`: several uvicorn workers sharing a private Redis (`Deployment`) and their wire helpers;
- `auth`: the authorization tests' tokens and stateless requests;
- `message_path`: a `ServerRuntime` driven without an event loop;
- `tasks`: a server whose tool runs as a task;
- `pyright_snippet`: pyright strict over a snippet;
- `child_env`: what a stdio server started by the runtime may inherit (the secrets it must not).

The peers run as processes (tests/peers/) stay there: their files are run as scripts by path.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent.parent


def free_port() -> int:
    """A port free on 127.0.0.1 now (for a server a test starts)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def shared_schema_dir() -> Path:
    """The folder of official schemas CI passes to `schema sync` (env override for other layouts)."""
    return Path(os.environ.get("MCP_SCHEMA_DIR", REPO_ROOT.parent / "shared" / "mcp-schema")).resolve()
