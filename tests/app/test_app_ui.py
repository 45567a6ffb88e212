"""MCP Apps (`io.modelcontextprotocol/ui`) on the authoring layer and for Python hosts: a tool that
opens a UI, `ui://` resources served as `text/html;profile=mcp-app` (string, file, function) with
typed CSP and permissions, app-only tools, the extension declared only when used; at every version."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from examples.app_ui_server import make_app
from mcp_bindings.runtime.app import App, AppDefinitionError
from mcp_bindings.runtime.app.testing import client_handlers
from mcp_bindings.runtime.app.ui import MIME_TYPE, UI, Csp, Permissions
from mcp_bindings.runtime.client.apps import call_app_tool, declare_apps, list_apps, model_tools, read_ui
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc.errors import McpError

VERSIONS = list(registry.versions())


def ui_client(app: App, version: str) -> Any:
    handlers = client_handlers(version)
    declare_apps(handlers)
    return app.test_client(version, handlers=handlers)


def value(result: Any) -> Any:
    """A tool's result as JSON: its structuredContent, or (before 2025-06-18) its text."""
    structured = getattr(result, "structured_content", None)
    return structured if structured is not None else json.loads(result.content[0].text)


def declared(capabilities: Any) -> dict[str, Any]:
    caps = dict(capabilities or {})
    return {**(caps.get("extensions") or {}), **(caps.get("experimental") or {})}


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS)
async def test_a_host_lists_the_app_reads_its_view_and_calls_the_app_only_tool(version: str) -> None:
    app = make_app()
    async with ui_client(app, version) as client:
        assert UI in declared(client.server_capabilities)
        apps = {a.name: a for a in await list_apps(client)}
        assert apps["counter"].resource_uri == "ui://counter/view"
        assert apps["counter"].visibility == ("model", "app")
        assert apps["increment"].visibility == ("app",)
        listed = (await client.list_tools()).tools
        assert [t.name for t in model_tools(listed)] == ["counter"]
        view = await read_ui(client, "ui://counter/view")
        assert "<h1>Counter</h1>" in view.html
        assert view.meta is not None and view.meta.prefers_border is True
        assert view.meta.csp is not None and view.meta.csp.connect_domains == []
        result = await call_app_tool(client, "increment", {"value": 41})
        assert value(result) == {"value": 42}


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS)
async def test_a_client_without_the_extension_never_sees_an_app_only_tool(version: str) -> None:
    app = make_app()
    async with app.test_client(version) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["counter"]
        with pytest.raises(McpError) as refused:
            await client.call_tool(name="increment", arguments={"value": 1})
        assert refused.value.code == -32602
        assert "'increment' is callable only by an MCP Apps view" in refused.value.message
        assert UI in refused.value.message
        counted = await client.call_tool(name="counter", arguments={"start": 3})
        assert value(counted) == {"value": 3}


@pytest.mark.anyio
async def test_the_extension_is_declared_only_by_an_app_with_a_ui() -> None:
    plain = App("plain")

    @plain.tool
    def echo(text: str) -> str:
        return text

    for version in ("2025-11-25", "2026-07-28"):
        async with plain.test_client(version) as client:
            assert UI not in declared(client.server_capabilities)
    async with ui_client(make_app(), "2026-07-28") as client:
        assert client.server_capabilities["extensions"][UI] == {}
    async with ui_client(make_app(), "2025-11-25") as client:  # no `extensions` capability before 2026-07-28
        assert client.server_capabilities["experimental"][UI] == {}


@pytest.mark.anyio
async def test_views_from_a_string_a_file_and_a_function(tmp_path: Path) -> None:
    page = tmp_path / "view.html"
    page.write_text("<p>first</p>", encoding="utf-8")
    app = App("views")
    app.ui_resource("ui://views/text", "<p>text</p>", permissions=Permissions.model_validate({"clipboardWrite": {}}))
    app.ui_resource("ui://views/file", page, csp=Csp(resource_domains=["https://cdn.example.com"]))

    @app.ui_resource("ui://views/function", domain="views.example.com")
    async def made() -> str:
        return "<p>made</p>"

    async with ui_client(app, "2025-11-25") as client:
        listed = {r.uri: r for r in (await client.list_resources()).resources}
        assert {r.mime_type for r in listed.values()} == {MIME_TYPE}
        text = await read_ui(client, "ui://views/text")
        assert text.html == "<p>text</p>" and text.meta is not None
        assert text.meta.permissions is not None and text.meta.permissions.clipboard_write is not None
        assert (await read_ui(client, "ui://views/file")).html == "<p>first</p>"
        page.write_text("<p>edited</p>", encoding="utf-8")  # read at each read
        filed = await read_ui(client, "ui://views/file")
        assert filed.html == "<p>edited</p>"
        assert filed.meta is not None and filed.meta.csp is not None
        assert filed.meta.csp.resource_domains == ["https://cdn.example.com"]
        made_view = await read_ui(client, "ui://views/function")
        assert made_view.html == "<p>made</p>" and made_view.meta is not None
        assert made_view.meta.domain == "views.example.com"


def test_bad_ui_definitions_are_refused_with_what_to_fix(tmp_path: Path) -> None:
    app = App("bad")
    with pytest.raises(AppDefinitionError, match=r"'https://x/view': its URI must start with 'ui://'"):
        app.ui_resource("https://x/view", "<p></p>")
    with pytest.raises(AppDefinitionError, match=r"_meta\.ui\.csp\.scriptDomains: Extra inputs are not permitted"):
        app.ui_resource("ui://bad/view", "<p></p>", csp={"scriptDomains": ["https://x"]})
    with pytest.raises(AppDefinitionError, match=r"is not a file"):
        app.ui_resource("ui://bad/missing", tmp_path / "absent.html")
    with pytest.raises(AppDefinitionError, match=r"visibility must be a list of 'model' and 'app'"):
        app.ui_tool("ui://bad/view", visibility=["everyone"])  # type: ignore[list-item]
    with pytest.raises(AppDefinitionError, match=r"name the UI resource it opens, or a visibility"):
        app.ui_tool()
    with pytest.raises(AppDefinitionError, match=r"'config://x' is not a UI resource URI"):
        app.ui_tool("config://x")

    @app.ui_tool("ui://bad/nowhere")
    def opens_nothing() -> str:
        return ""

    with pytest.raises(
        AppDefinitionError, match=r"tool 'opens_nothing' opens 'ui://bad/nowhere', which is no resource"
    ):
        _ = app.server


@pytest.mark.anyio
async def test_a_host_refuses_to_let_a_view_call_a_model_only_tool() -> None:
    app = App("host-rules")
    app.ui_resource("ui://rules/view", "<p></p>")

    @app.ui_tool("ui://rules/view", visibility=["model"])
    def model_only() -> str:
        return "called"

    @app.resource("ui://rules/plain", mime_type="text/plain")
    def plain() -> str:
        return "not a view"

    async with ui_client(app, "2026-07-28") as client:
        with pytest.raises(McpError, match=r"'model_only' is not callable by an app"):
            await call_app_tool(client, "model_only")
        with pytest.raises(McpError, match=r"lists no tool 'absent'"):
            await call_app_tool(client, "absent")
        with pytest.raises(McpError, match=r"ui://rules/plain has no text/html;profile=mcp-app text content"):
            await read_ui(client, "ui://rules/plain")
