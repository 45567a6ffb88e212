from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
PINNED_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]


def shared_schema_dir() -> Path:
    """The folder of official schemas CI passes to `schema sync` (env override for other layouts)."""
    return Path(os.environ.get("MCP_SCHEMA_DIR", REPO_ROOT.parent / "shared" / "mcp-schema")).resolve()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    path = shared_schema_dir() / "2026-07-28" / "examples"
    if not path.is_dir():
        pytest.fail(f"official examples not found at {path}; set MCP_SCHEMA_DIR")
    return path
