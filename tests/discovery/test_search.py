"""`ToolSearch` in memory, at every protocol version: the fixed set listed in place of the catalog,
BM25 and regex searches carrying the found tools' full input schemas, describe and call by name,
bad arguments answered as tool errors naming the field, and what a caller may not use never found
(disabled tools, MCP Apps' app-only tools, tools needing OAuth scopes of their own)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.app.testing import client_handlers
from mcp_bindings.runtime.client.apps import declare_apps
from mcp_bindings.runtime.discovery import ToolSearch
from mcp_bindings.runtime.discovery.search import Catalogs
from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.rpc.errors import McpError
from tests.discovery.catalog import RESOURCES, catalog_app

pytestmark = pytest.mark.anyio

VERSIONS = ["2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28"]
FIXED = ["search_tools", "describe_tool", "call_tool"]


def found(result: Any) -> list[dict[str, Any]]:
    data = versions.dump(result)
    assert not data.get("isError"), data
    tools = json.loads(data["content"][0]["text"])["tools"]
    if "structuredContent" in data:
        assert data["structuredContent"] == {"tools": tools}
    return tools


def error_text(result: Any) -> str:
    data = versions.dump(result)
    assert data.get("isError") is True, data
    return str(data["content"][0]["text"])


@pytest.fixture(scope="module")
def app() -> App:
    return catalog_app(1000, [ToolSearch(pinned=["add"])])


@pytest.mark.parametrize("version", VERSIONS)
async def test_the_fixed_set_replaces_the_catalog(app: App, version: str) -> None:
    async with app.test_client(version) as client:
        listed = (await client.list_tools()).tools
        assert [t.name for t in listed] == ["add", *FIXED]
        assert listed[0].input_schema.required == ["a", "b"]  # a pinned tool, as it is
        assert "1002 tools" in (listed[1].description or "")
        has_output = version >= "2025-06-18"
        assert (getattr(listed[1], "output_schema", None) is not None) == has_output
        with pytest.raises(McpError) as refused:
            await client.list_tools(cursor="anything")  # the fixed set is one page
        assert refused.value.code == -32602 and "params.cursor" in refused.value.message


@pytest.mark.parametrize("version", VERSIONS)
async def test_bm25_finds_the_tool_with_its_schema_and_call_tool_calls_it(app: App, version: str) -> None:
    async with app.test_client(version) as client:
        search = await client.call_tool(name="search_tools", arguments={"query": "rotate the signing keys"})
        tools = found(search)
        assert tools[0]["name"] == "rotate_signing_keys"
        assert tools[0]["inputSchema"]["required"] == ["keyring"]
        assert set(tools[0]["inputSchema"]["properties"]) == {"keyring", "grace_period_days"}
        called = await client.call_tool(
            name="call_tool", arguments={"name": "rotate_signing_keys", "arguments": {"keyring": "prod"}}
        )
        assert versions.dump(called)["content"][0]["text"] == "rotated prod (7 days)"


async def test_parameter_names_and_limits_count(app: App) -> None:
    async with app.test_client("2025-11-25") as client:
        # "grace period": words only of a parameter's name
        tools = found(await client.call_tool(name="search_tools", arguments={"query": "grace period", "limit": 3}))
        assert [t["name"] for t in tools] == ["rotate_signing_keys"]
        tools = found(await client.call_tool(name="search_tools", arguments={"query": "delete refund", "limit": 20}))
        assert len(tools) == 20 and all(t["name"].startswith(("delete_refund_", "delete_")) for t in tools[:8])
        assert tools[0]["name"].startswith("delete_refund_")


async def test_regex_mode(app: App) -> None:
    async with app.test_client("2026-07-28") as client:
        tools = found(
            await client.call_tool(
                name="search_tools", arguments={"query": r"^create_webhook_\d+$", "mode": "regex", "limit": 20}
            )
        )
        webhooks = [f"create_webhook_{i}" for i in range(1000) if i % 5 == 2 and RESOURCES[(i // 5) % 25] == "webhook"]
        assert [t["name"] for t in tools] == webhooks and len(webhooks) == 8
        text = error_text(await client.call_tool(name="search_tools", arguments={"query": "(", "mode": "regex"}))
        assert text.startswith("search_tools: `query`: not a regular expression")
        text = error_text(await client.call_tool(name="search_tools", arguments={"query": "a" * 201, "mode": "regex"}))
        assert "201 characters" in text


async def test_a_pattern_that_backtracks_without_end_is_stopped() -> None:
    """A client's pattern used to hold the server's event loop (more than a minute for a 40-character
    description); now matching stops at the budget and the search is a tool error."""
    app = App("backtracking", extensions=[ToolSearch()])

    @app.tool(description="a" * 40)
    def letters() -> str:
        return "a"

    async with app.test_client("2025-11-25") as client:
        text = error_text(
            await client.call_tool(name="search_tools", arguments={"query": "(a|aa)+$b", "mode": "regex"})
        )
        assert text == "search_tools: `query`: matching the pattern took longer than 100 ms: write a simpler one"
        tools = found(await client.call_tool(name="search_tools", arguments={"query": "^a{40}$", "mode": "regex"}))
        assert [t["name"] for t in tools] == ["letters"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "search_tools: `query` is required"),
        ({"query": "  "}, "search_tools: `query` is required"),
        ({"query": "x" * 1001}, "search_tools: `query` is 1001 characters long; at most 1000 are taken"),
        ({"query": "x", "mode": "fuzzy"}, "search_tools: `mode` must be one of bm25, regex (got 'fuzzy')"),
        ({"query": "x", "limit": 0}, "search_tools: `limit` must be an integer from 1 to 20 (got 0)"),
        ({"query": "x", "limit": True}, "search_tools: `limit` must be an integer from 1 to 20 (got True)"),
    ],
)
async def test_bad_search_arguments_are_tool_errors_naming_the_field(app: App, arguments: Any, message: str) -> None:
    async with app.test_client("2025-11-25") as client:
        assert error_text(await client.call_tool(name="search_tools", arguments=arguments)).startswith(message)


async def test_describe_and_unknown_names(app: App) -> None:
    async with app.test_client("2025-11-25") as client:
        [tool] = found(await client.call_tool(name="describe_tool", arguments={"name": "add"}))
        assert tool["name"] == "add" and tool["inputSchema"]["required"] == ["a", "b"]
        for meta in ("describe_tool", "call_tool"):
            text = error_text(await client.call_tool(name=meta, arguments={"name": "no_such_tool"}))
            assert text == "no tool named 'no_such_tool': find one with search_tools"
        text = error_text(await client.call_tool(name="call_tool", arguments={"name": "add", "arguments": [1, 2]}))
        assert text == "call_tool: `arguments` must be an object (got list)"
        # the found tool's own argument check answers a bad call, as a direct call would be
        bad = versions.dump(await client.call_tool(name="call_tool", arguments={"name": "add", "arguments": {"a": 1}}))
        assert bad["isError"] is True and "b" in bad["content"][0]["text"]
        # a direct call of a catalog tool still works, and answers as the call by name did
        direct = versions.dump(await client.call_tool(name="add", arguments={"a": 1, "b": 2}))
        by_name = await client.call_tool(name="call_tool", arguments={"name": "add", "arguments": {"a": 1, "b": 2}})
        assert direct == versions.dump(by_name) and direct["structuredContent"] == {"result": 3}


def hidden_app() -> App:
    app = catalog_app(20, [ToolSearch()])

    @app.tool(tags={"internal"})
    def purge_audit_log(before: str) -> str:
        """Purge the audit log before a date."""
        return "purged"

    @app.ui_tool("ui://dashboard/view.html", visibility=["app"])
    def refresh_dashboard_panel(panel: str) -> str:
        """Refresh a dashboard panel (called by the dashboard view only)."""
        return "refreshed"

    @app.ui_resource("ui://dashboard/view.html")
    def view() -> str:
        return "<html></html>"

    @app.tool(scopes=["keys:admin"])
    def revoke_api_key(key_id: str) -> str:
        """Revoke an API key."""
        return "revoked"

    app.disable(tags={"internal"})
    return app


async def test_what_a_caller_may_not_use_is_never_found() -> None:
    app = hidden_app()
    async with app.test_client("2025-11-25") as client:
        for query in ("purge audit log", "refresh dashboard panel"):
            assert found(await client.call_tool(name="search_tools", arguments={"query": query})) == []
            tools = found(
                await client.call_tool(name="search_tools", arguments={"query": query.split()[0], "mode": "regex"})
            )
            assert tools == []
        for name in ("purge_audit_log", "refresh_dashboard_panel"):
            text = error_text(await client.call_tool(name="call_tool", arguments={"name": name, "arguments": {}}))
            assert text == f"no tool named {name!r}: find one with search_tools"
            text = error_text(await client.call_tool(name="describe_tool", arguments={"name": name}))
            assert text.startswith("no tool named")
        # needs scopes of its own: listed, hence found, only by a caller granted them (`app.access`; here nobody)
        assert found(await client.call_tool(name="search_tools", arguments={"query": "revoke api key"})) == []
        text = error_text(
            await client.call_tool(name="call_tool", arguments={"name": "revoke_api_key", "arguments": {"key_id": "k"}})
        )
        assert text == "no tool named 'revoke_api_key': find one with search_tools"


async def test_the_view_of_the_mcp_apps_client_finds_its_app_only_tool() -> None:
    app = hidden_app()
    handlers = client_handlers("2026-07-28")
    declare_apps(handlers)
    async with app.test_client("2026-07-28", handlers=handlers) as client:
        tools = found(
            await client.call_tool(name="search_tools", arguments={"query": "refresh dashboard panel", "limit": 1})
        )
        assert [t["name"] for t in tools] == ["refresh_dashboard_panel"]


async def test_a_listing_is_read_again_when_the_catalog_changes_or_for_another_kind_of_caller() -> None:
    app = hidden_app()
    handlers = client_handlers("2025-11-25")
    declare_apps(handlers)
    query = {"query": "refresh dashboard panel", "limit": 1}
    async with app.test_client("2025-11-25") as plain, app.test_client("2025-11-25", handlers=handlers) as host:
        for _ in range(2):  # the same server, callers of two kinds, each its own listing
            assert found(await plain.call_tool(name="search_tools", arguments=query)) == []
            assert [t["name"] for t in found(await host.call_tool(name="search_tools", arguments=query))] == [
                "refresh_dashboard_panel"
            ]
        rotate = {"query": "rotate signing keys", "limit": 1}
        assert [t["name"] for t in found(await plain.call_tool(name="search_tools", arguments=rotate))] == [
            "rotate_signing_keys"
        ]
        app.disable("rotate_signing_keys")
        assert found(await plain.call_tool(name="search_tools", arguments=rotate)) == []
        text = error_text(await plain.call_tool(name="call_tool", arguments={"name": "rotate_signing_keys"}))
        assert text.startswith("no tool named")
        app.enable("rotate_signing_keys")
        assert found(await plain.call_tool(name="search_tools", arguments=rotate))[0]["name"] == "rotate_signing_keys"


async def test_a_server_without_the_extension_lists_its_catalog() -> None:
    app = catalog_app(30)
    async with app.test_client("2025-11-25") as client:
        assert len((await client.list_tools()).tools) == 32


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match=r"pinned='add'\) is one string"):
        ToolSearch(pinned="add")
    with pytest.raises(ValueError, match=r"default_limit \(30\) must be from 1 to limit \(20\)"):
        ToolSearch(default_limit=30)


async def test_a_listing_keeps_its_index_across_searches(monkeypatch: pytest.MonkeyPatch) -> None:
    """The index is looked up (keyed by every tool of the catalog) once per listing, not on every
    search: at 5,000 tools that lookup was about a fifth of a search's server CPU."""
    looked: list[int] = []
    index = Catalogs.index

    def counted(self: Catalogs, tools: list[Any]) -> Any:
        looked.append(len(tools))
        return index(self, tools)

    monkeypatch.setattr(Catalogs, "index", counted)
    async with catalog_app(50, [ToolSearch()]).test_client("2025-11-25") as client:
        for query in ("rotate the signing keys", "add two numbers", "list invoices"):
            assert await client.search_tools(query)
    assert looked == [52]


def test_a_listing_is_kept_per_granted_scopes_not_only_per_principal() -> None:
    """Two tokens of one user and client carry the same principal key; a search listing kept by that
    key alone let the token without `keys:admin` find what a stepped-up token could (and a step-up
    miss what it now may use): the listing's key holds the granted scopes too."""
    from types import SimpleNamespace

    from mcp_bindings.runtime.discovery.search import _caller  # pyright: ignore[reportPrivateUsage]
    from mcp_bindings.runtime.protocol.principal import Principal, PrincipalKey

    def caller(*scopes: str) -> tuple[object, ...]:
        principal = PrincipalKey(Principal("https://as", "alice", "cli", frozenset(scopes)))
        context = SimpleNamespace(protocol_version="2025-11-25", principal=principal, peer_capabilities={})
        return _caller(context)  # pyright: ignore[reportArgumentType]

    assert caller("keys:read") == caller("keys:read")
    assert caller("keys:read") != caller("keys:read", "keys:admin")
