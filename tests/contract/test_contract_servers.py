"""`mcp-bindgen client` and `lock --check` against real servers nobody here wrote: PyPI
`mcp-server-time` and `mcp-server-git` (on a temporary repository), npm
`@modelcontextprotocol/server-everything` (stdio), and a FastMCP-style server on the official SDK's
`MCPServer` (`tests/peers/sdk_contract_server.py`: nested models, enums, optional and list
arguments, output schemas). Each generated module passes pyright strict and its calls return the
typed results. The servers are installed, pinned, by `tests/peers/contract_peers.py`; the tests skip
saying why when a registry is unreachable."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

from mcp_bindgen.cli import main
from tests.peers import contract_peers
from tests.peers.harness import PEERS
from tests.support import REPO_ROOT
from tests.support.sdk import sdk_python_path

pytestmark = [pytest.mark.slow, pytest.mark.interop]
SHOP = PEERS / "sdk_contract_server.py"


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    try:
        venv = contract_peers.python_peers()
        everything = contract_peers.everything_server()
    except contract_peers.Unavailable as exc:
        pytest.skip(f"a pinned peer server could not be installed: {exc}")
    repo = tmp_path_factory.mktemp("repo")
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("one\n")
    subprocess.run([*git, "-C", str(repo), "add", "a.txt"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-q", "-m", "first"], check=True)
    return {
        "time": [str(venv / "bin" / "mcp-server-time")],
        "git": [str(venv / "bin" / "mcp-server-git"), "--repository", str(repo)],
        "everything": everything,
        "shop": [sdk_python_path(), str(SHOP)],
    }


@pytest.fixture(scope="module")
def clients(servers: dict[str, list[str]], tmp_path_factory: pytest.TempPathFactory) -> dict[str, ModuleType]:
    out = tmp_path_factory.mktemp("clients")
    modules: dict[str, ModuleType] = {}
    for name, command in servers.items():
        path = out / f"{name}_client.py"
        assert main(["client", "-o", str(path), "--from", *command]) == 0
        spec = importlib.util.spec_from_file_location(f"contract_{name}_client", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # pydantic resolves the postponed annotations in it
        spec.loader.exec_module(module)
        modules[name] = module
    return modules


def test_generated_modules_pass_pyright_strict(clients: dict[str, ModuleType]) -> None:
    pyright = shutil.which("pyright", path=str(Path(sys.executable).parent))
    if pyright is None:
        pytest.skip("pyright is not installed in this environment")
    files = [str(m.__file__) for m in clients.values()]
    config = Path(files[0]).parent / "pyrightconfig.json"
    config.write_text(
        json.dumps(
            {
                "typeCheckingMode": "strict",
                "pythonVersion": "3.11",
                "extraPaths": [str(REPO_ROOT / "generated"), str(REPO_ROOT / "runtime")],
            }
        )
    )
    done = subprocess.run(
        [pyright, "-p", str(config), "--pythonpath", sys.executable, *files],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert "0 errors" in done.stdout


def _call(module: ModuleType, command: list[str], use: Callable[[Any], Any]) -> Any:
    async def run() -> Any:
        async with module.connect(command) as server:
            return await use(server)

    return anyio.run(run)


def test_time_server_typed_results(clients: dict[str, ModuleType], servers: dict[str, list[str]]) -> None:
    time = clients["time"]

    async def steps(s: Any) -> list[Any]:
        now = await s.get_current_time(timezone="Etc/UTC")
        converted = await s.convert_time(source_timezone="Etc/UTC", time="12:00", target_timezone="Asia/Tokyo")
        with pytest.raises(time.ToolError, match="get_current_time"):
            await s.get_current_time(timezone="Not/AZone")
        return [now, converted]

    now, converted = _call(time, servers["time"], steps)
    assert isinstance(now, time.GetCurrentTimeOutput) and now.timezone == "Etc/UTC"
    assert isinstance(converted, time.ConvertTimeOutput) and isinstance(converted.source, time.TimeResult)
    assert converted.target.timezone == "Asia/Tokyo" and converted.time_difference == "+9.0h"


def test_git_server_on_a_temporary_repository(clients: dict[str, ModuleType], servers: dict[str, list[str]]) -> None:
    git = clients["git"]
    repo = servers["git"][-1]
    Path(repo, "b.txt").write_text("two\n")

    async def steps(s: Any) -> list[str]:
        status = await s.git_status(repo_path=repo)
        await s.git_add(repo_path=repo, files=["b.txt"])
        staged = await s.git_diff_staged(repo_path=repo)
        log = await s.git_log(repo_path=repo, max_count=5)
        return [r.content[0].text for r in (status, staged, log)]

    status, staged, log = _call(git, servers["git"], steps)
    assert "b.txt" in status and "+two" in staged and "first" in log


def test_everything_server(clients: dict[str, ModuleType], servers: dict[str, list[str]]) -> None:
    everything = clients["everything"]

    async def steps(s: Any) -> list[Any]:
        return [
            await s.echo(message="hi"),
            await s.get_structured_content(location="Chicago"),
            await s.prompt_args_prompt(city="Oslo"),
        ]

    echoed, weather, prompt = _call(everything, servers["everything"], steps)
    assert echoed.content[0].text == "Echo: hi"
    assert isinstance(weather, everything.GetStructuredContentOutput)
    assert isinstance(weather.temperature, (int, float))
    assert "Oslo" in json.dumps(prompt.model_dump(mode="json"))


def test_fastmcp_style_server(clients: dict[str, ModuleType], servers: dict[str, list[str]]) -> None:
    shop = clients["shop"]
    customer = shop.Customer(name="Ada", address=shop.Address(street="1 Main", city="Oslo"), tags=["vip"])

    async def steps(s: Any) -> list[Any]:
        results = [
            await s.add(a=40),
            await s.place_order_v2(customer=customer, items=["x", "y"], colour="green", quantity=2),
            await s.prompt_greet(name="Bo"),
            await s.read_order_resource(order_id="12"),
        ]
        with pytest.raises(shop.ToolError, match="'explode' failed"):
            await s.explode()
        with pytest.raises(Exception, match="shade"):
            await s.paint(shade="purple")
        return results

    added, order, prompt, resource = _call(shop, servers["shop"], steps)
    assert isinstance(added, shop.AddOutput) and added.result == 42
    assert isinstance(order, shop.PlaceOrderV2Output) and isinstance(order.customer, shop.Customer)
    assert (order.total, order.colour, order.customer.address.city) == (10.0, "green", "Oslo")
    assert prompt.messages[0].content.text == "Hello Bo (plain)"
    assert resource.contents[0].uri == "shop://orders/12"
