"""The comparison server (examples/app_server.py) over real transports, with our typed client at every
protocol version: stdio (`app.run()`) and Streamable HTTP (`app.asgi()` under uvicorn). The
elicitation inside `delete` is answered on every version that has elicitation, with no
version-specific code in the server."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.app.testing import client_handlers
from mcp_bindings.runtime.protocol import registry
from tests.support import REPO_ROOT
from tests.support.http import serve_in_thread

pytestmark = pytest.mark.anyio

SERVER = REPO_ROOT / "examples" / "app_server.py"
VERSIONS = [v for v in registry.versions() if "elicitation/create" in registry.protocol(v).server_requests] + list(
    registry.stateless_versions()
)


def _client(version: str) -> Any:
    return importlib.import_module(f"{registry.load_version(version).__name__}.client").Client


def _example_app() -> App:
    spec = importlib.util.spec_from_file_location("_app_server_example", SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    app = module.app
    assert isinstance(app, App)
    return app


async def _scenario(client: Any, version: str, logs: list[Any]) -> None:
    models = registry.load_version(version)
    assert [t.name for t in (await client.list_tools()).tools] == ["weather", "delete"]
    weather = await client.call_tool(name="weather", arguments={"city": "Paris"})
    assert weather.structured_content == {"city": "Paris", "celsius": 21.5}
    assert (await client.call_tool(name="delete", arguments={"path": "/tmp/x"})).content[0].text == "deleted /tmp/x"
    assert (await client.read_resource(uri="config://app")).contents[0].text == "debug=false"
    assert (await client.read_resource(uri="users://ada/profile")).contents[0].text == "profile of ada"
    prompt = await client.get_prompt(name="review", arguments={"code": "x", "language": "rust"})
    assert prompt.messages[0].content.text == "Review this rust code:\nx"
    completion = await client.complete(
        ref=models.PromptReference(type="ref/prompt", name="review"),
        argument=models.CompleteRequestParamsArgument(name="language", value="r"),
    )
    assert completion.completion.values == ["rust"]
    if version not in registry.stateless_versions():  # stateless: logs only for a request that asks
        assert [entry["data"] for entry in logs] == ["looking up Paris"]


def _handlers(version: str, logs: list[Any]) -> Any:
    return client_handlers(version, elicit=lambda message, schema: True, on_log=logs.append)


@pytest.mark.parametrize("version", VERSIONS)
async def test_stdio(version: str) -> None:
    from mcp_bindings.runtime.stdio.connect import connect_stdio

    logs: list[Any] = []
    argv = [sys.executable, str(SERVER)]
    async with connect_stdio(argv, _client(version), handlers=_handlers(version, logs), protocol_version=version) as c:
        await _scenario(c, version, logs)


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with serve_in_thread(_example_app().asgi()) as base:
        yield base + "/mcp"


@pytest.mark.parametrize("version", VERSIONS)
async def test_http(version: str, http_url: str) -> None:
    from mcp_bindings.runtime.client.http import connect_http

    logs: list[Any] = []
    handlers = _handlers(version, logs)
    async with connect_http(http_url, _client(version), handlers=handlers, protocol_version=version) as c:
        await _scenario(c, version, logs)
