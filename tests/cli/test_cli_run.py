"""`mcp-bindgen run TARGET` as a subprocess: a file (its one server object, or the one named, or a
factory), a module path, a server stub instance; over stdio and Streamable HTTP (the URL printed);
and the one-line errors of a target it cannot serve."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

from tests.support import REPO_ROOT
from tests.support.cli import APP_SERVER, bindgen, served

ECHO = REPO_ROOT / "examples" / "app_echo.py"


def _structured(done: object) -> object:
    assert getattr(done, "returncode", None) == 0, getattr(done, "stderr", "")
    return json.loads(getattr(done, "stdout", ""))["structuredContent"]


def test_run_over_http_prints_the_url_it_serves() -> None:
    with served(["run", APP_SERVER]) as (url, _process):
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        assert _structured(bindgen("call", url, "weather", "city=Oslo", "--format", "json")) == {
            "city": "Oslo",
            "celsius": 21.5,
        }


def test_run_over_http_on_another_path() -> None:
    with served(["run", APP_SERVER, "--path", "/api/mcp"]) as (url, _process):
        assert url.endswith("/api/mcp")
        assert bindgen("read", url, "config://app").stdout.strip() == "debug=false"


def test_run_a_factory_and_a_named_object_over_stdio() -> None:
    """examples/app_echo.py has no module-level app, only `make_app()`: `file.py:make_app` calls it."""
    served_echo = f"{sys.executable} -m mcp_bindgen.cli run {ECHO}:make_app"
    assert bindgen("call", served_echo, "echo", "text=hi").stdout == "hi\n"
    assert bindgen("call", f"{APP_SERVER}:app", "weather", "city=Rome").returncode == 0


def test_run_a_module_path_and_a_server_stub_instance(tmp_path: Path) -> None:
    package = tmp_path / "shop"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "server.py").write_text(
        "from mcp_bindings.v2025_11_25 import models as m\n"
        "from mcp_bindings.v2025_11_25.server import Server\n\n\n"
        "class Shop(Server):\n"
        "    name = 'shop'\n"
        "    version = '1'\n\n"
        "    async def list_tools(self, params, ctx):\n"
        "        schema = m.ToolInputSchema(type='object', properties={'n': {'type': 'integer'}})\n"
        "        return m.ListToolsResult(tools=[m.Tool(name='double', input_schema=schema)])\n\n"
        "    async def call_tool(self, params, ctx):\n"
        "        n = (params.arguments or {})['n']\n"
        "        return m.CallToolResult(content=[m.TextContent(type='text', text=str(n * 2))])\n\n\n"
        "server = Shop()\n",
        encoding="utf-8",
    )
    for target in ("shop.server", "shop.server:server"):
        done = bindgen("call", f"mcp-bindgen run {target}", "double", "n=21", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "42\n"  # n typed as an integer from the schema: 21 * 2, not "2121"


@pytest.mark.parametrize(
    ("source", "target", "message"),
    [
        ("x = 1\n", "{file}", "defines no App or server object at module level: create one (app = App(...))"),
        (
            "from mcp_bindings.runtime.app import App\na = App('a')\nb = App('b')\n",
            "{file}",
            "defines 2 server objects (a, b): name one, e.g. {file}:a",
        ),
        (
            "import not_installed_pkg_xyz\n",
            "{file}",
            "imports 'not_installed_pkg_xyz', which is not installed: pip install",
        ),
        ("raise RuntimeError('boom')\n", "{file}", "importing {file} failed: RuntimeError: boom"),
        ("x = 1\n", "{file}:app", "{file}:app: 'app' is not defined there"),
        ("x = 1\n", "{file}:x", "{file}:x is a int, not an App or a server stub instance"),
        ("", "missing_file.py", "no such file: missing_file.py"),
        ("", "no_such_pkg_xyz.mod:app", "no module named 'no_such_pkg_xyz.mod': check the name or install it"),
    ],
)
def test_targets_it_cannot_serve_are_one_line_errors(tmp_path: Path, source: str, target: str, message: str) -> None:
    file = tmp_path / "server.py"
    file.write_text(source, encoding="utf-8")
    shown = target.replace("{file}", str(file))
    done = bindgen("run", shown, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("mcp-bindgen: error: ")
    assert message.replace("{file}", str(file)) in done.stderr


def test_a_missing_runtime_extra_is_named(tmp_path: Path) -> None:
    """An import of a module of one of our extras names the extra to install."""
    file = tmp_path / "server.py"
    file.write_text("import sys\nsys.modules['uvicorn'] = None\nimport uvicorn\n", encoding="utf-8")
    done = bindgen("run", file)
    assert done.returncode == 2
    assert "pip install 'mcp-bindgen[http]'" in done.stderr


def test_a_taken_port_and_a_bad_port() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        done = bindgen("run", APP_SERVER, "--transport", "http", "--port", str(port))
    assert done.returncode == 4
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "pick another --port" in done.stderr
    bad = bindgen("run", APP_SERVER, "--transport", "http", "--port", "70000")
    assert bad.returncode == 2 and "'70000' is not a port number" in bad.stderr


def test_run_an_installed_command(tmp_path: Path) -> None:
    """TARGET naming an installed command (a `console_scripts` entry point) serves the server object
    of the entry point's module, as a project made by `mcp-bindgen new` installs one."""
    (tmp_path / "forecast").mkdir()
    (tmp_path / "forecast" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "forecast" / "server.py").write_text(
        "from mcp_bindings.runtime.app import App\n"
        "app = App('forecast', version='1')\n\n\n"
        "@app.tool\n"
        "def sky() -> str:\n"
        "    return 'clear'\n\n\n"
        "def main() -> None:\n"
        "    app.run()\n",
        encoding="utf-8",
    )
    dist = tmp_path / "forecast-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: forecast\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        "[console_scripts]\nforecast-server = forecast.server:main\n", encoding="utf-8"
    )
    # The server gets only the safe variables of ours and --env (docs/security.md), PYTHONPATH among them.
    done = bindgen(
        "call",
        "mcp-bindgen run forecast-server",
        "sky",
        cwd=tmp_path,
        environ={"PYTHONPATH": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "clear\n"


@pytest.mark.parametrize(
    ("example", "hint"),
    [
        ("app_echo.py", "name its factory, {file}:make_app"),
        ("skills_server.py", "name its factory, {file}:make_app"),
        (
            "echo_server.py",
            "its factory make_server() needs arguments (stub_version), so it cannot be named here: create an App "
            "at module level (app = App(...)), or run the file as a stdio command (-- python {file})",
        ),
        ("everything_server.py", "create one (app = App(...)), or run the file as a stdio command (-- python {file})"),
    ],
)
def test_an_example_without_a_module_level_app_gets_a_hint_that_works(example: str, hint: str) -> None:
    """Half of examples/ builds its server in a function: the hint names that function when it can be
    a target (and the named target then serves), or says why it cannot; never a `make_app` that
    does not exist (issue 45, item 6)."""
    file = REPO_ROOT / "examples" / example
    done = bindgen("run", file)
    assert done.returncode == 2
    assert done.stderr == (
        f"mcp-bindgen: error: {file} defines no App or server object at module level: {hint.format(file=file)}\n"
    )
    if ":make_app" in hint:
        listed = bindgen("list", "tools", f"{file}:make_app", "--format", "json")
        assert listed.returncode == 0, listed.stderr
