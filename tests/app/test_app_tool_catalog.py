"""The authoring layer's tool catalog follows every change (issue #36): the app declares its whole
tool list to the server's catalog (`tool_schemas.declare_tools`) when it is built and on each change,
and a tools/list answer the catalog already holds is not read again (`ToolListing`). These tests
change the app after a client listed (disable, enable, a tool added, an app mounted, a proxy's
remote listed again) and check, on that same open connection, that calls are checked against the
schemas as they are now: the catalog is one dict for its life, so a connection never reads a stale
copy. At 2025-11-25 and 2026-07-28."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.server.host import host_for
from tests.peers.harness import PEERS

pytestmark = pytest.mark.anyio

VERSIONS = ["2025-11-25", "2026-07-28"]
LIMIT = 30


def refused(result: Any) -> bool:
    """A tool execution error from the inputSchema check (not the tool's own failure)."""
    return result.is_error is True and "Input validation error" in result.content[0].text


def catalog_names(app: App) -> set[str]:
    return set(host_for(app.server).tool_catalog.tools)


def make_app() -> App:
    app = App("catalog")

    @app.tool
    def double(n: int) -> int:
        return 2 * n

    @app.tool
    def shout(text: str) -> str:
        return text.upper()

    return app


@pytest.mark.parametrize("version", VERSIONS)
async def test_disable_and_enable_after_a_listing(version: str) -> None:
    app = make_app()
    with anyio.fail_after(LIMIT):
        async with app.test_client(version) as client:
            assert {t.name for t in (await client.list_tools()).tools} == {"double", "shout"}
            app.disable("double")
            assert catalog_names(app) == {"shout"}
            assert {t.name for t in (await client.list_tools()).tools} == {"shout"}
            app.enable("double")
            assert catalog_names(app) == {"double", "shout"}
            assert refused(await client.call_tool(name="double", arguments={"n": "two"}))
            assert not refused(await client.call_tool(name="double", arguments={"n": 2}))


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_tool_added_after_a_listing_is_checked_on_the_open_connection(version: str) -> None:
    app = make_app()
    with anyio.fail_after(LIMIT):
        async with app.test_client(version) as client:
            await client.list_tools()

            @app.tool
            def negate(flag: bool) -> bool:
                return not flag

            assert "negate" in catalog_names(app)
            # Not listed to this client yet: checked against the server's catalog, as declared now.
            assert refused(await client.call_tool(name="negate", arguments={"flag": "yes"}))
            assert {t.name for t in (await client.list_tools()).tools} == {"double", "shout", "negate"}


@pytest.mark.parametrize("version", VERSIONS)
async def test_an_app_mounted_after_a_listing(version: str) -> None:
    app, other = make_app(), App("other")

    @other.tool
    def half(n: int) -> float:
        return n / 2

    with anyio.fail_after(LIMIT):
        async with app.test_client(version) as client:
            await client.list_tools()
            app.mount(other, namespace="other")
            assert "other_half" in catalog_names(app)
            assert refused(await client.call_tool(name="other_half", arguments={"n": [1]}))

            @other.tool
            def third(n: int) -> float:
                return n / 3

            assert "other_third" in catalog_names(app)  # what the mounted app registers later, too
            assert refused(await client.call_tool(name="other_third", arguments={"n": "x"}))
            other.disable("half")
            assert "other_half" not in catalog_names(app)


async def test_a_proxy_listing_its_remote_again_declares_what_it_got() -> None:
    proxy = App.proxy([sys.executable, str(PEERS / "stdio_server.py")], name="proxied")
    with anyio.fail_after(LIMIT):
        async with proxy.test_client("2025-11-25") as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            assert listed and catalog_names(proxy) == listed
            catalog = host_for(proxy.server).tool_catalog
            held = catalog.tools
            proxy.disable("echo")
            assert "echo" not in catalog_names(proxy)
            assert proxy.remote is not None
            await proxy.remote.refresh("tools")  # the remote's list again (its list_changed)
            assert catalog.tools is held  # one dict: what open connections read
            assert catalog_names(proxy) == listed
            assert held["echo"].input_source is not None  # the remote's schema, declared again
