"""The start-up contract of the runtime (`docs/performance.md`, "Start-up"): what importing it and
serving a stub's handshake load, and what is built after the first answers (#51 item 3).

Each check runs in a fresh interpreter: modules and models, once loaded or built, stay so for the
life of a process. Nothing here is timed.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# `import mcp_bindings.runtime` checks that its extras are installed, and loads nothing else.
NOT_ON_IMPORT = ("pydantic", "pydantic_core", "anyio", "asyncio", "orjson", "importlib.metadata", "mcp_bindings.v")
# A stub's stdio server answering its handshake, `tools/list` and `tools/call`: no HTTP server or
# client, no OAuth, no several workers, no recording, no authoring layer or its plug-ins, no
# generator, and no other version's models (the registry reads every version's `about`, a few
# constants, and the handshake era's method `names`).
NOT_ON_THE_STUB_PATH = (
    "mcp_bindings.runtime.http",
    "mcp_bindings.runtime.client.http",
    "mcp_bindings.runtime.auth",
    "mcp_bindings.runtime.scaleout",
    "mcp_bindings.runtime.recording",
    "mcp_bindings.runtime.app",
    "mcp_bindings.runtime.discovery",
    "mcp_bindings.runtime.middleware",
    "mcp_bindgen",
    "uvicorn",
    "starlette",
    "httpx",
    "redis",
    "cryptography",
    "jinja2",
)


AT_EXIT = "import atexit, json, sys\natexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))\n"
RUN_ECHO = "import runpy\nrunpy.run_path('examples/echo_server.py', run_name='__main__')"


def loaded_after(code: str, stdin: str = "") -> list[str]:
    """`sys.modules` of a fresh interpreter once `code` has run (the last line it writes to stderr)."""
    probe = AT_EXIT + code
    result = subprocess.run(
        [sys.executable, "-c", probe], input=stdin, capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stderr.strip().splitlines()[-1])


def under(loaded: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(
        m for m in loaded if any(m == p or m.startswith(p if p.endswith(".v") else f"{p}.") for p in prefixes)
    )


def test_importing_the_runtime_loads_nothing_but_its_extras_check() -> None:
    loaded = loaded_after("import mcp_bindings.runtime")
    assert under(loaded, NOT_ON_IMPORT) == []
    assert sorted(m for m in loaded if m.startswith("mcp_bindings.")) == [
        "mcp_bindings.runtime",
        "mcp_bindings.runtime.rpc",
        "mcp_bindings.runtime.rpc.extras",
    ]


def _frames(version: str) -> str:
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
    }
    if version == "2026-07-28":
        first = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}
        extra: dict[str, object] = {"_meta": meta}
    else:
        init = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
        first = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}
        extra = {}
    frames = [
        first,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {**extra}},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}, **extra},
        },
    ]
    return "".join(json.dumps(frame) + "\n" for frame in frames)


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_a_stub_served_over_stdio_loads_only_its_own_path(version: str) -> None:
    code = f"import runpy\nsys.argv = ['echo_server.py', '--stub', {version!r}]\n" + RUN_ECHO
    loaded = loaded_after(code, _frames(version))
    assert under(loaded, NOT_ON_THE_STUB_PATH) == []
    own = f"mcp_bindings.v{version.replace('-', '_')}.models"
    models = sorted(m for m in loaded if m.endswith(".models"))
    # The tasks extension (a plug-in every server host loads) serves its methods from 2026-07-28 on.
    tasks = ["mcp_bindings.ext.io_modelcontextprotocol_tasks.models"] if version == "2026-07-28" else []
    assert models == sorted([own, *tasks])


# Which result models of the echo server's methods are built, after the handshake's answer and each
# answer after it, with the deferred work run as a session runs it.
PREPARE_STEPS = """
import importlib
from mcp_bindings.runtime.protocol import registry
from tests.support.message_path import LEGACY, call, connect, serve
runtime, session = connect()  # 2025-11-25: initialize answered
m = importlib.import_module(f"mcp_bindings.{registry.info(LEGACY).package}.models")
results = (m.ListResourceTemplatesResult, m.ListToolsResult, m.CallToolResult)
steps = []
for _ in range(4):
    session._run_deferred()
    steps.append([bool(r.__pydantic_complete__) for r in results])
    serve(runtime, session, call(None, method="ping"))
print(json.dumps([steps, runtime.lifecycle.prepared(runtime.view.protocol)]), file=sys.stderr)
"""


def test_after_the_handshake_one_method_is_prepared_after_each_answer() -> None:
    result = subprocess.run(
        [sys.executable, "-c", "import json, sys\n" + PREPARE_STEPS],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    steps, prepared = json.loads(result.stderr.strip().splitlines()[-1])
    # Not every method at once after `initialize` (a `tools/list` sent right after it would wait for
    # `tools/call`'s validators): one more after each answer, until all are built.
    assert [sum(step) for step in steps] == [1, 2, 3, 3]
    assert prepared


# A one-tool app (`examples/app_echo.py`) answering over stdio: none of the authoring layer's feature
# modules it does not use (a proxy, MCP Apps UI, Agent Skills, OpenAPI), nor what the stub path leaves
# out (`App.ui_tool`, `App.skills`, `App.proxy`, `App.openapi` import theirs on first use).
NOT_ON_THE_APP_PATH = (
    "mcp_bindings.runtime.app.proxy",
    "mcp_bindings.runtime.app.proxy_entries",
    "mcp_bindings.runtime.app.proxy_subscriptions",
    "mcp_bindings.runtime.app.ui",
    "mcp_bindings.runtime.app.skills",
    "mcp_bindings.runtime.app.skills_watch",
    "mcp_bindings.runtime.app.openapi",
    "mcp_bindings.runtime.app.openapi_app",
    "mcp_bindings.runtime.app.openapi_oauth",
    *(p for p in NOT_ON_THE_STUB_PATH if p != "mcp_bindings.runtime.app" and "middleware" not in p),
)
RUN_APP = "import runpy\nrunpy.run_path('benchmarks/peers/ours_app_echo.py', run_name='__main__')"


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_a_one_tool_app_served_over_stdio_loads_no_feature_it_does_not_use(version: str) -> None:
    code = f"sys.argv = ['ours_app_echo.py', '--stub', {version!r}]\n" + RUN_APP
    loaded = loaded_after(code, _frames(version))
    assert "mcp_bindings.runtime.app.core" in loaded  # (the app layer did serve)
    assert under(loaded, NOT_ON_THE_APP_PATH) == []


# Modules that the runtime's own modules import only inside the function needing them: pydantic
# imports `secrets` (`pydantic.types`) and `importlib.metadata` (its plug-in loader) today, but a
# handshake answered before pydantic loads must not find them on the runtime's side.
NOT_AT_MODULE_LEVEL = frozenset({"secrets", "hmac", "importlib.metadata"})


def _module_level_imports(module: str) -> set[str]:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    names: set[str] = set()
    for node in ast.parse(Path(spec.origin).read_text()).body:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_the_runtime_on_the_start_up_path_imports_no_secrets_or_entry_points_at_module_level(version: str) -> None:
    stub = f"import runpy\nsys.argv = ['echo_server.py', '--stub', {version!r}]\n" + RUN_ECHO
    app = f"sys.argv = ['ours_app_echo.py', '--stub', {version!r}]\n" + RUN_APP
    ours = {
        m for code in (stub, app) for m in loaded_after(code, _frames(version)) if m.startswith("mcp_bindings.runtime")
    }
    found = {m: sorted(_module_level_imports(m) & NOT_AT_MODULE_LEVEL) for m in sorted(ours)}
    assert {m: names for m, names in found.items() if names} == {}
