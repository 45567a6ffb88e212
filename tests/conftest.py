"""Fixtures shared by the whole suite. Plain helpers (paths, servers in threads, wire helpers, the
SDK venvs) are in tests/support/; import them from there."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support import REPO_ROOT, shared_schema_dir

if TYPE_CHECKING:
    from tests.peers.redis_server import RedisServer


# Every outgoing result is re-validated in the tests, whatever the server class says
# (`ServerStub.check_results`; tests/app/test_result_checks.py covers the unchecked path). Servers the
# tests start as processes inherit it.
os.environ.setdefault("MCP_BINDINGS_CHECK_RESULTS", "1")

LONG_TIMEOUT = 900  # seconds; the ceiling of `slow` and `interop` tests (pyproject.toml sets the others')


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Markers by what a test needs, wherever it lives (modules made of such tests set `pytestmark`
    themselves): a test taking the `sdk_python` fixture drives the official SDK (`interop`); one taking
    `redis_server`, directly or through another fixture, needs Redis (`scaleout`).

    Then the longer ceiling: a `slow` or `interop` test builds virtual environments or starts real
    peers (its subprocess steps may take up to 600 s each on a cold cache), unless it sets its own."""
    timeouts = config.pluginmanager.hasplugin("timeout")
    for item in items:
        needs = getattr(item, "fixturenames", ())
        if "sdk_python" in needs:
            item.add_marker(pytest.mark.interop)
        if "redis_server" in needs:
            item.add_marker(pytest.mark.scaleout)
        long = item.get_closest_marker("slow") or item.get_closest_marker("interop")
        if timeouts and long and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(LONG_TIMEOUT))


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


@pytest.fixture(scope="module")
def sdk_python() -> str:
    """The official MCP Python SDK's venv (tests/support/sdk.py), built on first use; its python.
    Skips, saying why, when the venv cannot be created (no access to PyPI)."""
    from tests.support.sdk import sdk_python_path

    return sdk_python_path()


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """The one event loop the suite runs on (`@pytest.mark.anyio` tests and async fixtures): asyncio,
    which the runtime's servers and uvicorn use. Module scope, as the anyio plugin's own default, so
    module-scoped async fixtures may use it. A module that means to run on several backends would
    override this, saying why; none does today."""
    return "asyncio"
