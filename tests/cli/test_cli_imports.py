"""The CLI's start-up stays light: `mcp-bindgen --help`, `--version`, `call` and `install` load no
generator code (the pipeline and its libraries), and `--help` / `install` not even the runtime:
each command imports only what it needs (the live-server tools' `cli_server` dispatches by module
name). Measured in benchmarks/bench_cli.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO_ROOT
from tests.support.cli import APP_SERVER

# Modules of the CLI that every command may load; every other `mcp_bindgen` module is the generator's
# (pipeline, IR, rendering, pins, policies, scaffolding, diff).
CLI_MODULES = {
    "mcp_bindgen",
    "mcp_bindgen.cli",
    "mcp_bindgen.cli_registry",
    "mcp_bindgen.cli_openapi",  # `openapi`'s parser; the generator is imported when it runs
    "mcp_bindgen.errors",
    "mcp_bindgen.installed",
    "mcp_bindgen.origin",  # where mcp-bindgen was installed from (`installed`): json and importlib.metadata only
}
# The live-server tools' parsers (the entry point `mcp_bindgen.commands`) and `install`'s modules,
# which load neither the runtime nor the generator; the rest of `mcp_bindings` is the runtime's side.
LIVE_CLI_MODULES = {
    "mcp_bindings",
    "mcp_bindings.live",
    "mcp_bindings.live.cli",
    "mcp_bindings.live.cli_server",
    "mcp_bindings.live.cli_contract",
    "mcp_bindings.live.cli_sessions",
    "mcp_bindings.live.files",
    "mcp_bindings.live.hosts",
    "mcp_bindings.live.host_config",
    "mcp_bindings.live.server_spec",
}
GENERATOR_LIBRARIES = ("jinja2", "black", "libcst", "datamodel_code_generator")

_PROBE = """
import json, sys
from mcp_bindgen.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _modules(*args: str | Path) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *map(str, args)], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def _generator_code(modules: set[str]) -> list[str]:
    ours = {m for m in modules if m.startswith("mcp_bindgen") and m not in CLI_MODULES}
    return sorted(ours | {m for m in modules if m.split(".")[0] in GENERATOR_LIBRARIES})


@pytest.mark.parametrize(
    "args",
    [["--help"], ["--version"], ["call", "--help"], ["install", "--print", str(APP_SERVER)]],
    ids=["help", "version", "call-help", "install-print"],
)
def test_help_version_and_install_load_neither_generator_nor_runtime(args: list[str]) -> None:
    modules = _modules(*args)
    assert "mcp_bindgen.cli" in modules  # the probe did run the CLI
    assert _generator_code(modules) == []
    assert "mcp_bindings.live.cli" in modules  # the live-server tools' parsers, found by their entry point
    assert sorted(m for m in modules if m.startswith("mcp_bindings") and m not in LIVE_CLI_MODULES) == []


def test_call_loads_the_runtime_but_no_generator_code() -> None:
    modules = _modules("call", APP_SERVER, "weather", "city=Paris")
    assert "mcp_bindings.runtime.client.runtime" in modules  # the call did go through the typed client
    assert _generator_code(modules) == []


def test_registry_check_loads_no_generator_library_nor_runtime(tmp_path: Path) -> None:
    """`registry check` reads the pin manifest and the schema (`pins`, `registry`), nothing that renders."""
    modules = _modules("registry", "check", tmp_path / "missing.json")
    assert "mcp_bindgen.registry" in modules
    libraries = {m for m in modules if m.split(".")[0] in GENERATOR_LIBRARIES}
    assert sorted(libraries | {m for m in modules if m.startswith("mcp_bindings") and m not in LIVE_CLI_MODULES}) == []


def test_a_generator_command_is_seen_by_the_check() -> None:
    """The check above can fail: `diff` loads the generator's modules."""
    modules = _modules("diff", "2025-06-18", "2025-11-25", "-o", "/dev/null")
    assert "mcp_bindgen.diff" in _generator_code(modules)
