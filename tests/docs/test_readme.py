"""The Python snippets of the README and of the site's pages its sections moved to run as written
(from the repository root, with the project's
environment first on PATH, as a user who followed the set-up has it).

Each test claims its block by a line only that block has; `test_every_snippet_has_a_test` fails when
a block is added that no test claims (or a claimed block disappears)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO_ROOT, announced_url
from tests.support.docs import block as find_block
from tests.support.docs import pages

# The README and the pages of the site its sections moved to: the snippets this module runs.
OWN_PAGES = (
    "README.md",
    "docs/getting-started.md",
    "docs/servers.md",
    "docs/clients.md",
    "docs/extensions.md",
    "docs/auth.md",
    "docs/scaleout.md",
    "docs/contract.md",
    "docs/performance.md",
    "docs/generator.md",
    "docs/versions.md",
)
ALL_TEXT = "\n".join(text for path, text in pages().items() if path.relative_to(REPO_ROOT).as_posix() in OWN_PAGES)


def block(marker: str) -> str:
    return find_block(marker, OWN_PAGES)


# marker -> the test that runs the block holding it
CLAIMS = {
    "async def add(a: int, b: int, ctx: Context) -> int:": "test_readme_server_serves_a_typed_client",
    'server = [sys.executable, "examples/app_server.py"]  # this environment': "test_readme_client_snippet",
    "result = CallToolResult.model_validate_json": "test_models_snippet",
    "class Weather(BaseModel):": "test_app_server_snippet_is_the_example",
    'command = [sys.executable, "examples/app_server.py"]': "test_app_client_snippet",
    'app = App("demo", version="1.0")  # or import yours': "test_app_in_memory_snippet",
    "class Echo(Server):": "test_server_snippet_serves_the_client_snippet",
    "await client.ping(timeout=5)": "test_client_snippet_against_the_example_server",
    "class Answers(ClientHandlers):": "test_input_handlers_snippet",
    "lenient=True) as client:": "test_lenient_client_snippet_against_the_example_server",
    "except NotExpressible as exc:": "test_eras_snippet_against_the_example_server",
    "handlers.use_extension(EXTENSION)": "test_task_client_snippet",
    "ClientCredentialsGrant(ClientSecretBasic(": "tests/docs/test_auth_readme.py",
    "from demo_client import connect": "test_contract_client_snippet",
    'app = App("counter", version="1.0")': "tests/docs/test_extension_docs.py",
    'app = App("skills-demo", version="1.0")': "tests/docs/test_extension_docs.py",
    'proxy=OAuthProxy(oidc(os.environ["OIDC_ISSUER"]))': "tests/auth/proxy/test_proxy_docs.py",
}


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", **extra}


def _run(code: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=_env(**env), capture_output=True, text=True, timeout=timeout
    )


def test_every_claimed_snippet_is_there() -> None:
    for marker in CLAIMS:
        block(marker)  # exactly one block of the README or the site holds it


def test_models_snippet() -> None:
    code = block("result = CallToolResult.model_validate_json")
    result = _run(code + "\nprint(result.is_error, result.model_dump_json(exclude_none=True))\n")
    assert result.returncode == 0, result.stderr
    printed = result.stdout.split()
    assert printed == ["False", '{"content":[{"text":"hi","type":"text"}],"isError":false}']
    assert printed[1] in code  # what the snippet's comment says it writes


def test_app_server_snippet_is_the_example() -> None:
    """The README's authoring example is `examples/app_server.py` (below its docstring), which the
    other snippets run."""
    example = (REPO_ROOT / "examples" / "app_server.py").read_text(encoding="utf-8")
    assert block("class Weather(BaseModel):") in example


def test_readme_client_snippet() -> None:
    result = _run(block('server = [sys.executable, "examples/app_server.py"]  # this environment'))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["{'city': 'Oslo', 'celsius': 21.5}"]


def test_readme_server_serves_a_typed_client(tmp_path: Path) -> None:
    """The README's server, saved as server.py and run as it says, answers a typed client."""
    server = tmp_path / "server.py"
    server.write_text(block("async def add(a: int, b: int, ctx: Context) -> int:"), encoding="utf-8")
    client = (
        "import sys, anyio\n"
        "from mcp_bindings.runtime.stdio import connect_stdio\n"
        "from mcp_bindings.v2025_11_25.client import Client\n"
        "async def main() -> None:\n"
        f"    async with connect_stdio([sys.executable, {str(server)!r}], Client) as client:\n"
        "        print([t.name for t in (await client.list_tools()).tools])\n"
        "        result = await client.call_tool(name='add', arguments={'a': 2, 'b': 3})\n"
        "        print(result.structured_content)\n"
        "        print((await client.read_resource(uri='config://app')).contents[0].text)\n"
        "anyio.run(main)\n"
    )
    result = _run(client)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["['add']", "{'result': 5}", "debug=false"]


def test_app_client_snippet() -> None:
    result = _run(block('command = [sys.executable, "examples/app_server.py"]'))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["['weather', 'delete']", "{'city': 'Oslo', 'celsius': 21.5}"]


def test_app_in_memory_snippet() -> None:
    result = _run(block('app = App("demo", version="1.0")  # or import yours'))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "deleted notes.txt"


def test_client_snippet_against_the_example_server() -> None:
    result = _run(block("await client.ping(timeout=5)"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "hi"


def test_server_snippet_serves_the_client_snippet(tmp_path: Path) -> None:
    server = tmp_path / "echo.py"
    server.write_text(block("class Echo(Server):"), encoding="utf-8")
    original = block("await client.ping(timeout=5)")
    client = original.replace('"examples/echo_server.py"', repr(str(server)))
    assert client != original
    result = _run(client)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "hi"


def test_input_handlers_snippet() -> None:
    result = _run(block("class Answers(ClientHandlers):"))
    assert result.returncode == 0, result.stderr
    expected = 'User response: action=accept, content={"username": "ada", "email": "ada@example.com"}'
    assert result.stdout.strip() == expected


def test_lenient_client_snippet_against_the_example_server() -> None:
    code = block("lenient=True) as client:")
    result = _run(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "mcp_bindings.v2024_11_05.models hi"  # what its comment says
    assert "# mcp_bindings.v2024_11_05.models hi" in code


def test_eras_snippet_against_the_example_server() -> None:
    code = block("except NotExpressible as exc:")
    result = _run(code)
    assert result.returncode == 0, result.stderr
    printed = result.stdout.split()
    assert printed == ["2026-07-28", "mcp_bindings.v2025_11_25.models", "2026-07-28"]
    assert all(f"# {line}" in code for line in printed)  # what its comments say


@pytest.mark.slow
def test_task_client_snippet(tmp_path: Path) -> None:
    """Against the everything-server over HTTP, as the README says to start it (on port 0: it binds and
    says where)."""
    code = block("handlers.use_extension(EXTENSION)")
    said = re.search(r"\(The server: `\.venv/bin/python (examples/everything_server\.py[^`]*)`", ALL_TEXT)
    assert said is not None and "--port 8000" in said.group(1)
    command = [sys.executable, *shlex.split(said.group(1).replace("8000", "0"))]
    log = tmp_path / "server.log"
    with log.open("wb") as stderr:
        server = subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        served = announced_url(log, server)
        url = "http://127.0.0.1:8000/mcp"
        assert url in code
        result = _run(code.replace(url, served), timeout=90)
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].endswith(" working"), lines  # the task handle: its id and status
    assert lines[-1].startswith("Computed"), lines


@pytest.mark.slow
def test_contract_client_snippet(tmp_path: Path) -> None:
    """The `mcp-bindgen client` command as the README writes it (output into a scratch folder), then
    the snippet that imports what it wrote."""
    line = re.search(r"^mcp-bindgen client -o demo_client\.py --from (.+)$", ALL_TEXT, re.M)
    assert line is not None
    generate = subprocess.run(
        [
            str(Path(sys.executable).parent / "mcp-bindgen"),
            "client",
            "-o",
            str(tmp_path / "demo_client.py"),
            "--from",
            *shlex.split(line.group(1)),
        ],
        cwd=REPO_ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert generate.returncode == 0, generate.stderr
    result = _run(block("from demo_client import connect"), PYTHONPATH=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "WeatherOutput Oslo 21.5"
