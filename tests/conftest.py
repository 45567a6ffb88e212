from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # the generator is imported lazily: runtime-only test runs need not have its extra
    from mcp_bindgen.ir import SchemaIR
    from mcp_bindgen.pipeline import VersionSource
    from tests.peers.redis_server import RedisServer

REPO_ROOT = Path(__file__).resolve().parent.parent
PINNED_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]


def shared_schema_dir() -> Path:
    """The folder of official schemas CI passes to `schema sync` (env override for other layouts)."""
    return Path(os.environ.get("MCP_SCHEMA_DIR", REPO_ROOT.parent / "shared" / "mcp-schema")).resolve()


# -- the pipeline's results per pinned version, computed once per test session ------------------
# Rendering one whole schema takes seconds; tests that only read the result share these. Treat what
# they return as read-only (the IR is a plain dataclass; the rendered files come as a read-only view).


@functools.cache
def cached_source(version: str) -> VersionSource:
    """`pipeline.pinned_source(version)`, read once (the checkout's pinned schema.json)."""
    from mcp_bindgen.pipeline import pinned_source

    return pinned_source(version)


@functools.cache
def pinned_ir(version: str) -> SchemaIR:
    """`pipeline.build_ir` of a pinned version, once per session."""
    from mcp_bindgen.pipeline import build_ir

    return build_ir(cached_source(version))


@functools.cache
def rendered(version: str) -> Mapping[str, str]:
    """`pipeline.render_version` of a pinned version (path -> file text), once per session."""
    from mcp_bindgen.pipeline import render_version

    return MappingProxyType(render_version(cached_source(version)))


def rendered_pinned(versions: list[str] | None = None) -> dict[str, str]:
    """`pipeline.render_pinned` built from `rendered`: a drop-in for tests that run `check`."""
    from mcp_bindgen.pins import load_pins

    out: dict[str, str] = {}
    for version in versions or list(load_pins()):
        out.update(rendered(version))
    return dict(sorted(out.items()))


def name_table(ir: SchemaIR) -> str:
    """One line per definition: name, object/alias, where it comes from, and its class name if renamed."""
    from mcp_bindgen.ir import ObjectDef

    lines = []
    for name, definition in ir.definitions.items():
        kind = "object" if isinstance(definition, ObjectDef) else "alias"
        origin = f"hoisted from {definition.origin}" if definition.hoisted else "schema"
        py = ir.py_name(name)
        lines.append(f"{name}\t{kind}\t{origin}" + (f"\tclass {py}" if py != name else ""))
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    path = shared_schema_dir() / "2026-07-28" / "examples"
    if not path.is_dir():
        pytest.fail(f"official examples not found at {path}; set MCP_SCHEMA_DIR")
    return path


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A private redis-server on 127.0.0.1 for one test module; skips where none is installed."""
    import shutil

    from tests.peers.redis_server import RedisServer

    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (apt-get install -y redis-server): the scale-out tests need it")
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server
    finally:
        server.stop()
