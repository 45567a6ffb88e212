"""Extensions by registration (`mcp_bindings.runtime.server.plugins`, issue #47 items 2 and 3): a
third-party extension defined here, outside the runtime, adds a custom method, a capability and a
wrapper around `tools/call`, and keeps typed state on the server host; it is registered on a
hand-written server (`extend`), on an `App` (`App(extensions=[...])`, `app.add(...)`), and
discovered through the entry point group `mcp_bindings.extensions` in a fresh interpreter (a
distribution declaring it, on the path). The runtime's own tasks plug-in is found the same way:
nothing names it by a string in the runtime."""

from __future__ import annotations

import importlib
import importlib.metadata
import subprocess
import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.protocol.custom_methods import CustomMethod, Handler, request
from mcp_bindings.runtime.protocol.spec import ProtocolTables
from mcp_bindings.runtime.server import plugins
from mcp_bindings.runtime.server.calls import ServerCall
from mcp_bindings.runtime.server.host import ServerHost, host_for
from mcp_bindings.runtime.server.peer import PeerView
from mcp_bindings.runtime.server.runtime import ServerRuntime
from mcp_bindings.runtime.server.seam import Plan, ServerFeature, ServerNext
from mcp_bindings.runtime.server.stubs import ServerStub
from tests.support import REPO_ROOT

pytestmark = pytest.mark.anyio

EXT = "com.acme/greeter"
VERSIONS = ["2025-11-25", "2026-07-28"]


class GreetParams(BaseModel):
    name: str


class Greeting(BaseModel):
    text: str
    calls_seen: int


GREET = request("acme/greet", GreetParams, Greeting, extension=EXT)


class Seen:
    """The greeter's state on a server host (`host.state_of(Seen)`): the tool calls it wrapped."""

    def __init__(self) -> None:
        self.calls: list[str] = []


class Counting(ServerFeature):
    """The greeter's wrapper: records each tools/call on the host's `Seen`."""

    def __init__(self, seen: Seen) -> None:
        self.seen = seen

    def wrap(self, runtime: ServerRuntime, plan: Plan, view: PeerView) -> None:
        if plan.spec.method == "tools/call":
            plan.wrap(self.counted)

    async def counted(self, call: ServerCall, next: ServerNext) -> object:
        self.seen.calls.append(str(call.target))
        return await next(call)


class Greeter(plugins.Extension):
    """A third-party extension: a method (`acme/greet`), a capability (extension `com.acme/greeter`
    with its settings) and a wrapper (`Counting`), with typed state on the host."""

    def __init__(self) -> None:
        self.seen = Seen()

    def capabilities(self, protocol: ProtocolTables) -> Mapping[str, Any]:
        return {"extensions": {EXT: {"languages": ["en"]}}}

    def methods(self) -> Mapping[CustomMethod[Any, Any], Handler]:
        async def greet(params: GreetParams, ctx: Any) -> Greeting:
            return Greeting(text=f"hello {params.name}", calls_seen=len(self.seen.calls))

        return {GREET: greet}

    def features(self) -> Sequence[ServerFeature]:
        return (Counting(self.seen),)

    def attach(self, server: ServerStub, host: ServerHost) -> None:
        host.keep(Seen, self.seen)


def echo_server(version: str) -> ServerStub:
    package = importlib.import_module(f"mcp_bindings.{'v' + version.replace('-', '_')}")
    base: Any = importlib.import_module(f"{package.__name__}.server").Server

    class Echo(base):  # type: ignore[misc, valid-type]
        async def list_tools(self, params: Any, ctx: Any) -> Any:
            return package.ListToolsResult(tools=[package.Tool(name="echo", input_schema={"type": "object"})])

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            return package.CallToolResult(content=[package.TextContent(type="text", text="echoed")])

    server: ServerStub = Echo()
    return server


async def _exercise(client: Any, version: str) -> None:
    """The greeter seen from a client: its capability where the version puts extensions, its method
    served, its wrapper counting the tool call."""
    where = "extensions" if version == "2026-07-28" else "experimental"
    assert client.server_capabilities[where][EXT] == {"languages": ["en"]}
    await client.list_tools()
    await client.call_tool(name="echo", arguments={})
    greeting = await client.session.call_extension(GREET, GreetParams(name="ada"))
    assert greeting == Greeting(text="hello ada", calls_seen=1)


@pytest.mark.parametrize("version", VERSIONS)
async def test_an_extension_from_outside_the_runtime_on_a_server(version: str) -> None:
    server = echo_server(version)
    greeter = Greeter()
    plugins.extend(server, greeter)
    assert host_for(server).state_of(Seen) is greeter.seen  # its state, typed, on the host
    client_cls: Any = importlib.import_module(f"mcp_bindings.v{version.replace('-', '_')}.client").Client
    with anyio.fail_after(10):
        async with connect_in_memory(server, client_cls, protocol_version=version) as client:
            await _exercise(client, version)
    assert greeter.seen.calls == ["echo"]


def _app(version: str, **options: Any) -> App:
    app = App("greeted", protocol=version, **options)

    @app.tool
    def echo() -> str:
        return "echoed"

    return app


@pytest.mark.parametrize("version", VERSIONS)
async def test_the_same_extension_on_an_app_by_constructor_and_by_add(version: str) -> None:
    by_constructor = Greeter()
    added = Greeter()
    for app, greeter in [(_app(version, extensions=[by_constructor]), by_constructor), (_app(version), added)]:
        if greeter is added:
            assert app.add(greeter) is greeter
        with anyio.fail_after(10):
            async with app.test_client(version) as client:
                await _exercise(client, version)
        assert greeter.seen.calls == ["echo"]
        assert host_for(app.server).find(Seen) is greeter.seen


async def test_the_tasks_plugin_is_discovered_through_the_entry_point_group() -> None:
    """The runtime names no plug-in module: the tasks feature comes from the entry point."""
    assert "mcp_bindings.runtime.tasks.server.plugin:TasksExtension" in {
        point.value for point in importlib.metadata.entry_points(group=plugins.GROUP)
    }
    runtime = ServerRuntime(echo_server("2025-11-25"))
    assert [type(f).__name__ for f in runtime.features][3] == "Tasks"
    seam = (REPO_ROOT / "runtime/mcp_bindings/runtime/server/seam.py").read_text(encoding="utf-8")
    assert "PLUGINS" not in seam and "import_module" not in seam


DISTRIBUTION = """\
import importlib
import importlib.metadata
from collections.abc import Mapping
from typing import Any

from mcp_bindings.runtime.server.plugins import Extension


class Declares(Extension):
    def capabilities(self, protocol: Any) -> Mapping[str, Any]:
        return {"extensions": {"com.acme/discovered": {"by": "entry point"}}}
"""


def test_a_third_party_distribution_is_discovered_in_a_fresh_interpreter(tmp_path: Path) -> None:
    """A distribution on the path declaring the entry point: every server host of a fresh
    interpreter loads its extension, without any registration call."""
    (tmp_path / "acme_greeter.py").write_text(DISTRIBUTION, encoding="utf-8")
    info = tmp_path / "acme_greeter-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-greeter\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{plugins.GROUP}]\ndeclares = acme_greeter:Declares\n", encoding="utf-8")
    script = textwrap.dedent(
        """
        import sys, anyio
        from mcp_bindings.v2026_07_28.client import Client
        from mcp_bindings.v2026_07_28.server import Server
        from mcp_bindings.runtime.memory import connect_in_memory

        async def main():
            async with connect_in_memory(Server(), Client, protocol_version="2026-07-28") as client:
                print(client.server_capabilities["extensions"])

        anyio.run(main)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "{'com.acme/discovered': {'by': 'entry point'}}" in done.stdout


def test_the_docs_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    text = (REPO_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text[text.index("## Extensions by registration") :]
    block = section[section.index("```python\n") + len("```python\n") : section.index("\n```\n")]
    assert 'app = App("demo", version="1.0", extensions=[CallStats()])' in block
    exec(compile(block, "docs/architecture.md", "exec"), {"__name__": "docs_example"})  # noqa: S102 - our own docs
    assert capsys.readouterr().out.strip() == "{'com.acme/stats': {}} calls=1"
