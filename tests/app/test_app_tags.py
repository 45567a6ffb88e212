"""Tags and visibility (issue 32, item 4): `tags=` on tools, resources, templates and prompts;
`app.disable` / `app.enable` by name or tag at run time hide a component from its list and answer it
as unknown, and tell the clients (`notifications/*/list_changed`: on the session at 2025-11-25, on a
`subscriptions/listen` stream at 2026-07-28); bad selections are clear errors."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.app import App, AppDefinitionError
from mcp_bindings.runtime.rpc.errors import McpError
from tests.support.content import text_of

pytestmark = pytest.mark.anyio


def make_app() -> App:
    app = App("tagged")

    @app.tool(tags={"admin"})
    def reset() -> str:
        return "reset"

    @app.tool
    def status() -> str:
        return "ok"

    @app.resource("config://admin", tags={"admin"})
    def admin_config() -> str:
        return "secret"

    @app.resource("users://{name}", tags={"admin"})
    def user(name: str) -> str:
        return name

    @app.prompt(tags={"admin", "beta"})
    def audit() -> str:
        return "audit everything"

    return app


async def _names(client: Any) -> tuple[list[str], list[str], list[str], list[str]]:
    return (
        [t.name for t in (await client.list_tools()).tools],
        [r.uri for r in (await client.list_resources()).resources],
        [t.uri_template for t in (await client.list_resource_templates()).resource_templates],
        [p.name for p in (await client.list_prompts()).prompts],
    )


async def test_disable_and_enable_by_tag_at_2025_11_25() -> None:
    app = make_app()
    seen: list[str] = []
    async with app.test_client("2025-11-25", on_notification=lambda method, params: seen.append(method)) as client:
        assert await _names(client) == (["reset", "status"], ["config://admin"], ["users://{name}"], ["audit"])
        assert app.disable(tags={"admin"}) == 4
        assert await _names(client) == (["status"], [], [], [])
        with pytest.raises(McpError, match="Unknown tool: reset"):
            await client.call_tool(name="reset")
        with pytest.raises(McpError, match="Resource not found: config://admin"):
            await client.read_resource(uri="config://admin")
        with pytest.raises(McpError, match="Resource not found: users://ada"):
            await client.read_resource(uri="users://ada")
        with pytest.raises(McpError, match="Unknown prompt: audit"):
            await client.get_prompt(name="audit")
        with anyio.fail_after(5):
            while len(set(seen)) < 3:
                await anyio.sleep(0.01)
        assert set(seen) == {
            "notifications/tools/list_changed",
            "notifications/resources/list_changed",
            "notifications/prompts/list_changed",
        }
        assert app.disable(tags={"admin"}) == 0  # already hidden: nothing changes
        assert app.enable("reset", tags={"beta"}) == 2
        assert await _names(client) == (["reset", "status"], [], [], ["audit"])
        assert text_of((await client.call_tool(name="reset")).content[0]) == "reset"


async def test_disable_by_name_reaches_a_listen_stream_at_2026_07_28() -> None:
    app = make_app()
    async with app.test_client("2026-07-28") as client:
        async with client.listen({"toolsListChanged": True}) as stream:
            assert app.disable("status") == 1
            with anyio.fail_after(5):
                notification = await anext(aiter(stream))
        assert notification.method == "notifications/tools/list_changed"
        assert [t.name for t in (await client.list_tools()).tools] == ["reset"]
        with pytest.raises(McpError, match="Unknown tool: status"):
            await client.call_tool(name="status")


def test_bad_selections_are_clear_errors() -> None:
    app = make_app()
    with pytest.raises(KeyError, match="no tool, prompt, resource or template named nothing"):
        app.disable("status", "nothing")
    assert app.enable("status") == 0  # the failed call changed nothing
    with pytest.raises(TypeError, match=r"tags='admin' is one string; give a collection: tags=\{'admin'\}"):
        app.disable(tags="admin")
    with pytest.raises(AppDefinitionError, match=r"tool 'x': tags='admin' is one string"):

        @app.tool(name="x", tags="admin")
        def x() -> str:
            return ""
