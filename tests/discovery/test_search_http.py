"""`ToolSearch` over Streamable HTTP on 127.0.0.1 (uvicorn in a thread): an app of 1,000 generated
tools lists four to our client, to the official Python SDK client and to the Inspector CLI, the
search finds the right tool and the found tool is called by name; a tool added while serving sends
`notifications/tools/list_changed` and is found at once."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.app.testing import client_handlers
from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.runtime.discovery import ToolSearch
from mcp_bindings.runtime.protocol import versions
from mcp_bindings.v2025_11_25.client import Client as Client_2025_11_25
from tests.discovery.catalog import catalog_app, plain_tool
from tests.peers.harness import PEERS
from tests.support.http import serve_in_thread

pytestmark = pytest.mark.anyio

LISTED = ["add", "search_tools", "describe_tool", "call_tool"]


def served_app() -> App:
    app = catalog_app(1000, [ToolSearch(pinned=["add"])])

    @app.tool
    def install_plugin(name: str, description: str) -> str:
        """Install a plug-in: a new tool of the catalog, named and described as given."""
        app.tool(name=name, description=description)(plain_tool(name))
        return f"installed {name}"

    return app


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serve_in_thread(served_app().asgi()) as base:
        yield base + "/mcp"


def text(result: Any) -> str:
    return str(versions.dump(result)["content"][0]["text"])


async def search(client: Any, query: str) -> list[str]:
    result = await client.call_tool(name="search_tools", arguments={"query": query, "limit": 3})
    return [t["name"] for t in json.loads(text(result))["tools"]]


async def test_our_client_finds_and_calls_and_hears_of_a_new_tool(url: str) -> None:
    changed = anyio.Event()

    def on_notification(method: str, params: Any) -> None:
        if method == "notifications/tools/list_changed":
            changed.set()

    handlers = client_handlers("2025-11-25", on_notification=on_notification)
    with anyio.fail_after(60):
        async with connect_http(url, Client_2025_11_25, protocol_version="2025-11-25", handlers=handlers) as client:
            assert [t.name for t in (await client.list_tools()).tools] == LISTED
            assert (await search(client, "rotate signing keys"))[0] == "rotate_signing_keys"
            called = await client.call_tool(
                name="call_tool", arguments={"name": "rotate_signing_keys", "arguments": {"keyring": "ci"}}
            )
            assert text(called) == "rotated ci (7 days)"
            assert await search(client, "translate klingon poetry") == []
            await client.call_tool(
                name="call_tool",
                arguments={
                    "name": "install_plugin",
                    "arguments": {"name": "translate_poem", "description": "Translate a Klingon poem into English."},
                },
            )
            await changed.wait()  # the list changed: the catalog has one more tool
            listed = (await client.list_tools()).tools
            assert [t.name for t in listed] == LISTED and "1004 tools" in (listed[1].description or "")
            assert (await search(client, "translate klingon poetry"))[0] == "translate_poem"
            assert text(await client.call_tool(name="call_tool", arguments={"name": "translate_poem"})) == (
                "called translate_poem"
            )


@pytest.mark.interop
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_the_official_sdk_client_sees_four_tools_and_calls_a_found_one(sdk_python: str, url: str, version: str) -> None:
    argv = [sdk_python, str(PEERS / "sdk_search_client.py"), f"--version={version}", "--url", url]
    argv += ["--query", "rotate the signing keys", "--arguments", json.dumps({"keyring": "sdk"})]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"the SDK client failed:\n{done.stderr[-3000:]}"
    report = json.loads(done.stdout.strip().splitlines()[-1])[version]
    assert [t["name"] for t in report["tools"]["tools"]] == LISTED
    found = json.loads(report["search"]["content"][0]["text"])["tools"]
    assert found[0]["name"] == "rotate_signing_keys" and found[0]["inputSchema"]["required"] == ["keyring"]
    assert report["search"]["structuredContent"] == {"tools": found}
    assert report["by_name"]["content"][0]["text"] == "rotated sdk (7 days)"


@pytest.mark.interop
def test_the_inspector_cli_lists_four_tools_and_calls_a_found_one(url: str) -> None:
    """MCP Inspector 2.12's CLI (`--method tools/list`, `tools/call`) over Streamable HTTP."""
    from tests.support.browser import inspector_cli, node_path

    cli = [str(node_path()), str(inspector_cli()), "--cli", url, "--transport", "http", "--method"]

    def run(*args: str) -> Any:
        done = subprocess.run([*cli, *args], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
        return json.loads(done.stdout)

    assert [t["name"] for t in run("tools/list")["tools"]] == LISTED
    search = run("tools/call", "--tool-name", "search_tools", "--tool-arg", "query=rotate the signing keys")
    assert search["structuredContent"]["tools"][0]["name"] == "rotate_signing_keys"
    called = run(
        "tools/call", "--tool-name", "call_tool", "--tool-arg", "name=rotate_signing_keys",
        "--tool-arg", 'arguments={"keyring": "inspector"}',
    )  # fmt: skip
    assert called["content"][0]["text"] == "rotated inspector (7 days)"
