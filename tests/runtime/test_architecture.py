"""The runtime's layers and the generator's independence are enforced, not only described
(architecture issue #29): `scripts/lint` runs the import contracts of pyproject.toml's
[tool.importlinter] and `scripts/import_cycles.py`. Each test adds one forbidden import to a scratch
copy of the hand-written packages and sees the check fail; the real tree passes."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from tests.support import REPO_ROOT

REPO = REPO_ROOT
sys.path.insert(0, str(REPO / "scripts"))
import import_cycles  # noqa: E402 - scripts/ is not a package

RUNTIME = REPO / "runtime" / "mcp_bindings" / "runtime"
ALLOW = REPO / "scripts" / "import_cycles.allow"


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of runtime/, generator/ and generated/ (Python files only) and of pyproject.toml."""
    root = tmp_path_factory.mktemp("layers")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "runtime", root / "runtime", ignore=ignore)
    shutil.copytree(REPO / "generator", root / "generator", ignore=ignore)
    shutil.copytree(REPO / "generated", root / "generated", ignore=ignore)
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """import-linter over `root`'s copies, with no editable
    install's paths: `-S` skips the .pth files, site-packages is named on PYTHONPATH instead."""
    path = [str(root / "runtime"), str(root / "generated"), str(root / "generator"), sysconfig.get_paths()["purelib"]]
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    return subprocess.run(
        [sys.executable, "-S", "-c", code, "--no-cache"],
        cwd=root,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(path)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _with_line(path: Path, line: str) -> str:
    original = path.read_text()
    path.write_text(original + "\n" + line + "\n")
    return original


def test_the_tree_keeps_every_contract(scratch: Path) -> None:
    result = _lint_imports(scratch)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        (
            "runtime/mcp_bindings/runtime/server/bridge.py",
            "from mcp_bindings.runtime.client import handling as _handling",
            "runtime layers",
        ),
        (
            "runtime/mcp_bindings/runtime/rpc/logs.py",
            "from mcp_bindings.runtime.server import runtime as _runtime",
            "runtime layers",
        ),
        (
            "runtime/mcp_bindings/runtime/server/peer.py",
            "from mcp_bindings.runtime.scaleout import relay as _relay",
            "scaleout is a plug-in",
        ),
        (
            "runtime/mcp_bindings/runtime/protocol/versions.py",
            "from mcp_bindings.runtime.tasks.core import store as _store",
            "tasks sits above protocol",
        ),
        (
            "runtime/mcp_bindings/runtime/client/tasks.py",
            "from mcp_bindings.runtime.tasks.server import service as _service",
            "tasks is a plug-in",
        ),
        (
            "runtime/mcp_bindings/runtime/tasks/core/store.py",
            "from mcp_bindings.runtime.client import seam as _seam",
            "tasks.core is what both sides share",
        ),
        (
            "runtime/mcp_bindings/runtime/tasks/core/handshake.py",
            "from mcp_bindings.runtime.tasks.server import service as _service",
            "tasks: api > server > core",
        ),
        (
            "generator/mcp_bindgen/lower.py",
            "from mcp_bindings.runtime.protocol import registry as _registry",
            "the generator imports nothing from the runtime",
        ),
        (
            "generator/mcp_bindgen/cli.py",
            "from mcp_bindings.live import cli as _live",
            "the generator imports nothing from the runtime or the live-server tools",
        ),
        (
            "runtime/mcp_bindings/runtime/recording/pytest_plugin.py",
            "from mcp_bindgen import cli as _cli",
            "the runtime imports neither the generator nor the live-server tools",
        ),
        (
            "runtime/mcp_bindings/runtime/app/core.py",
            "from mcp_bindings.live import hosts as _hosts",
            "the runtime imports neither the generator nor the live-server tools",
        ),
        (
            "generated/mcp_bindings/v2026_07_28/server.py",
            "from mcp_bindings.runtime.server import stubs as _stubs",
            "generated code imports only the runtime's façade",
        ),
        (
            "generated/mcp_bindings/ext/io_modelcontextprotocol_tasks/client.py",
            "from mcp_bindings.runtime.client import runtime as _runtime",
            "generated code imports only the runtime's façade",
        ),
    ],
)
def test_a_forbidden_import_breaks_a_contract(scratch: Path, module: str, line: str, contract: str) -> None:
    target = scratch / module
    original = _with_line(target, "def _late() -> None:\n    " + line)  # inside a function: counted too
    try:
        result = _lint_imports(scratch)
    finally:
        target.write_text(original)
    assert result.returncode != 0, result.stdout
    summary = " ".join(result.stdout.split())  # the report wraps long contract names
    start = summary.find(contract)
    # The contract's name and its verdict (a contract that ignores no import has no "(n ignored imports)").
    rest = summary[start:] if start >= 0 else ""
    ends = [i + len(word) for word in (" KEPT", " BROKEN") if (i := rest.find(word)) >= 0]
    verdict = rest[: min(ends)] if ends else ""
    assert "BROKEN" in verdict and "KEPT" not in verdict, result.stdout


def test_the_runtime_has_no_import_cycle() -> None:
    assert import_cycles.check(RUNTIME, ALLOW) == []


def _spec_importing_registry(scratch: Path, late: str) -> list[str]:
    """The check's problems once protocol/spec.py of the scratch tree imports the registry in a
    function (`late`: the function's body); registry imports spec, so that closes a loop."""
    root = scratch / "runtime" / "mcp_bindings" / "runtime"
    target = root / "protocol" / "spec.py"
    original = _with_line(target, f"def _late() -> None:\n{late}")
    try:
        return import_cycles.check(root, ALLOW)
    finally:
        target.write_text(original)


def test_a_new_cycle_through_a_function_level_import_fails(scratch: Path) -> None:
    problems = _spec_importing_registry(scratch, "    from mcp_bindings.runtime.protocol import registry  # noqa")
    assert len(problems) == 1
    assert "protocol.registry" in problems[0] and "protocol.spec" in problems[0]


def test_a_new_cycle_through_a_module_named_by_a_string_fails(scratch: Path) -> None:
    """`importlib.import_module("...")` is an import too: the check reads the name it is given."""
    late = '    import importlib\n\n    importlib.import_module("mcp_bindings.runtime.protocol.registry")'
    problems = _spec_importing_registry(scratch, late)
    assert len(problems) == 1
    assert "protocol.registry" in problems[0] and "protocol.spec" in problems[0]


def test_an_allowed_edge_that_is_gone_must_be_deleted(scratch: Path, tmp_path: Path) -> None:
    allow = tmp_path / "allow"
    allow.write_text(ALLOW.read_text() + "\nrpc.logs -> rpc.errors  # no such import\n")
    problems = import_cycles.check(scratch / "runtime" / "mcp_bindings" / "runtime", allow)
    assert problems == ["allowed edge rpc.logs -> rpc.errors no longer exists: delete it from allow"]


def test_a_single_process_server_imports_no_scaleout_module() -> None:
    """A stdio server and the HTTP app, in a fresh interpreter: no `scaleout` module is loaded."""
    code = (
        "import sys\n"
        "from mcp_bindings.runtime.stdio.serve import serve_stdio\n"
        "import mcp_bindings.runtime.app\n"
        "print(sorted(m for m in sys.modules if m.startswith('mcp_bindings.runtime.scaleout')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


SERVE_ONE_REQUEST = """
import os, sys
import anyio, httpx
os.environ.pop("MCP_REDIS_URL", None)
from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.http_server import create_app

app = App("probe", protocol="2025-11-25")

@app.tool
def echo(text: str) -> str:
    return text

async def main() -> None:
    asgi = create_app(app.server)
    head = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    async with anyio.create_task_group() as group:
        await asgi.start(group)
        transport = httpx.ASGITransport(app=asgi)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}
            opened = await client.post("/mcp", json=initialize, headers=head)
            assert opened.status_code == 200, opened.text
            head = {**head, "Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
            params = {"name": "echo", "arguments": {"text": "hi"}}
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
            called = await client.post("/mcp", json=call, headers=head)
            assert called.json()["result"]["content"][0]["text"] == "hi", called.text
            assert (await client.delete("/mcp", headers=head)).status_code == 200
        asgi.drain()
        asgi.streamable.close_all()
        group.cancel_scope.cancel()
        await asgi.stop()

anyio.run(main)
print(sorted(m for m in sys.modules if m.startswith("mcp_bindings.runtime.scaleout")))
"""


def test_an_http_server_serving_a_request_imports_no_scaleout_module() -> None:
    """`http_server.create_app` without a backend (no MCP_REDIS_URL), started and serving a handshake
    session's requests in-process, in a fresh interpreter: no `scaleout` module is loaded."""
    env = {k: v for k, v in os.environ.items() if k != "MCP_REDIS_URL"}
    result = subprocess.run(
        [sys.executable, "-c", SERVE_ONE_REQUEST], capture_output=True, text=True, timeout=60, cwd=REPO, env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout


# Where the runtime may keep a module-level registry of objects: the one of server hosts, and the
# custom methods of a client's handlers objects (a client has no host).
OBJECT_REGISTRIES = {"server/host.py": "_HOSTS", "protocol/custom_methods.py": "_METHODS"}


def test_state_of_servers_is_kept_by_their_host_not_in_module_tables() -> None:
    """No module-level table keyed by a server object or its host outside the host registry: a
    `WeakKeyDictionary`, or a dict whose entries `weakref.finalize` drops with their object."""
    found: list[str] = []
    for path in sorted(RUNTIME.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        relative = path.relative_to(RUNTIME).as_posix()
        for line in source.splitlines():
            if line.startswith("_") and ("WeakKeyDictionary" in line or "dict[int," in line):
                name = line.split(":", 1)[0].split("=", 1)[0].strip()
                if OBJECT_REGISTRIES.get(relative) != name:
                    found.append(f"{relative}: {line.strip()}")
    assert found == []


STDIO_SERVE = """
import atexit, json, sys
from mcp_bindings.runtime.app import App

app = App("probe", protocol="2025-11-25")

@app.tool
def echo(text: str) -> str:
    return text

atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))
app.run()
"""

# What a stdio server of a handshake-era version never loads (issue 36): the HTTP server and client,
# OAuth, several workers, the generator, the tasks extension and the other era's models.
NOT_ON_THE_STDIO_PATH = (
    "mcp_bindings.runtime.http",
    "mcp_bindings.runtime.client.http",
    "mcp_bindings.runtime.auth",
    "mcp_bindings.runtime.scaleout",
    "mcp_bindings.runtime.tasks.server.extension",
    "mcp_bindings.runtime.tasks.core.wire",
    "mcp_bindings.ext",
    "mcp_bindings.v2026_07_28",
    "mcp_bindgen",
    "starlette",
    "uvicorn",
    "httpx",
)


def test_a_stdio_server_loads_only_what_its_traffic_needs() -> None:
    """A 2025-11-25 app served over stdio answers a handshake and a tool call; then, at exit, none of
    the modules it has no use for is loaded."""
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}},
    ]
    stdin = "".join(json.dumps(frame) + "\n" for frame in frames)
    result = subprocess.run(
        [sys.executable, "-c", STDIO_SERVE], input=stdin, capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert result.returncode == 0, result.stderr
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert answers[-1]["result"]["content"][0]["text"] == "hi"
    loaded = json.loads(result.stderr.strip().splitlines()[-1])
    assert "mcp_bindings.v2025_11_25.models" in loaded
    # Every version's `about` (a few constants) is read by the version registry, and the generated
    # `names` of the tasks extension (constants, no import) by the runtime: not their models.
    light = {m for m in loaded if m.endswith((".about", ".names"))}
    parents = {m.rsplit(".", depth)[0] for m in light for depth in (1, 2)}
    unwanted = sorted(
        m
        for m in loaded
        if any(m == p or m.startswith(p + ".") for p in NOT_ON_THE_STDIO_PATH) and m not in light | parents
    )
    assert not unwanted, f"loaded on a stdio server's path: {unwanted}"
    # The models it creates are the ones its traffic names and what they refer to, each in its own
    # submodule: not the models of methods never called, nor the unions of every message.
    prefix = "mcp_bindings.v2025_11_25.models."
    created = {m.removeprefix(prefix) for m in loaded if m.startswith(prefix)}
    assert {"_initialize_request_params", "_call_tool_request_params", "_call_tool_result", "_text_content"} <= created
    never = {"_get_prompt_result", "_read_resource_result", "_elicit_request", "_create_message_request"}
    never |= {"_client_request", "_server_result", "_jsonrpc_message", "_list_prompts_result"}
    assert not created & never, sorted(created & never)
    total = len(list((REPO / "generated" / "mcp_bindings" / "v2025_11_25" / "models").glob("_*.py")))
    assert len(created) < total / 3, f"{len(created)} of {total} model modules loaded"
    assert "mcp_bindings.v2025_11_25._messages" not in loaded


def test_the_facade_loads_a_name_s_home_only_when_it_is_used() -> None:
    """Generated modules import the runtime through `mcp_bindings.runtime.abi`; a version's `about`
    (read by the registry to discover it) loads no more of the runtime than the descriptors, and a
    name taken from the façade is the runtime's own object."""
    code = (
        "import json, sys\n"
        "import mcp_bindings.v2026_07_28.about\n"
        "before = sorted(m for m in sys.modules if m.startswith('mcp_bindings.runtime'))\n"
        "from mcp_bindings.runtime.abi.client import ClientStub\n"
        "from mcp_bindings.runtime.client.stub import ClientStub as Home\n"
        "print(json.dumps([before, ClientStub is Home]))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 0, result.stderr
    before, same = json.loads(result.stdout)
    assert same
    runtime = {m.removeprefix("mcp_bindings.runtime.") for m in before} - {"mcp_bindings.runtime"}
    assert runtime == {"abi", "abi.protocol", "protocol", "protocol.spec", "rpc", "rpc.extras"}


# -- class sizes: scripts/class_sizes.py ----------------------------------------------------------


def _class_sizes() -> Any:
    spec = importlib.util.spec_from_file_location("class_sizes", REPO_ROOT / "scripts" / "class_sizes.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["class_sizes"] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def test_no_class_is_over_400_lines_with_its_mixins_but_the_allowed() -> None:
    sizes = _class_sizes()
    assert sizes.problems(sizes.read_allow(REPO_ROOT / "scripts" / "class_sizes.allow")) == []


def test_a_class_split_over_mixins_is_counted_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sizes = _class_sizes()
    package = tmp_path / "pkg" / "app"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    body = "\n".join(f"    x{i} = {i}" for i in range(250))
    (package / "mixin.py").write_text(f"class Half:\n{body}\n")
    (package / "core.py").write_text(f"from pkg.app.mixin import Half\n\n\nclass Whole(Half):\n{body}\n")
    monkeypatch.setattr(sizes, "ROOTS", {"pkg": tmp_path / "pkg"})
    assert sizes.problems({}) == [
        "pkg.app.core.Whole: 502 lines with its same-package bases, over 400: split it (scripts/class_sizes.py)"
    ]
    assert sizes.problems({"pkg.app.core.Whole": 502}) == []
    assert "more than the 450" in sizes.problems({"pkg.app.core.Whole": 450})[0]  # it grew: fails
    assert "lower it to 502" in sizes.problems({"pkg.app.core.Whole": 600})[0]  # it shrank: the ceiling follows
    assert "pkg.app.core.Gone: allowed in class_sizes.allow but gone" in sizes.problems({"pkg.app.core.Gone": 500})[-1]
