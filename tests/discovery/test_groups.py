"""`Groups` (io.modelcontextprotocol/groups, the project's schema from the draft's Groups page):
groups/list, each listed primitive's groups in its `_meta` for a client that declared the
extension (by `group=`, tag, a mounted app's namespace, or named members), nothing changed in the
lists of a client that did not; the client's helpers (`list_groups`, `tools_in_group`,
`search_tools`); and the same over Streamable HTTP on 127.0.0.1."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_bindings.ext.io_modelcontextprotocol_groups.methods import EXTENSION
from mcp_bindings.ext.io_modelcontextprotocol_groups.models import ListGroupsRequestParams
from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.app.testing import client_handlers
from mcp_bindings.runtime.client.discovery import (
    SearchError,
    declare_groups,
    list_groups,
    search_tools,
    tools_in_group,
)
from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.runtime.discovery import Group, Groups, ToolSearch
from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.rpc.errors import McpError
from mcp_bindings.v2026_07_28.client import Client as Client_2026_07_28
from tests.support.http import serve_in_thread

pytestmark = pytest.mark.anyio

MEMBERSHIP = "io.modelcontextprotocol/groups"
VERSIONS = ["2025-06-18", "2025-11-25", "2026-07-28"]  # primitives carry `_meta` from 2025-06-18 on
GROUPS = [
    Group("finance", title="Finance", description="Money in and out."),
    Group("billing", title="Billing", parents=["finance"]),
    Group("github", namespace="gh"),
    Group("ops", tags={"ops"}),
    Group("docs", members={"docs://handbook", "docs://pages/{page}", "onboarding"}),
]


def make_app(extensions: bool = True) -> App:
    github = App("gh")

    @github.tool
    def list_issues(repo: str) -> str:
        """List the open issues of a repository."""
        return repo

    app = App("groups", version="1.0", extensions=[Groups(GROUPS)] if extensions else [])
    app.mount(github, "gh")

    @app.tool(group="billing")
    def refund(order: str) -> str:
        """Refund an order."""
        return f"refunded {order}"

    @app.tool(group=["finance", "ops"])
    def ledger() -> str:
        return "ledger"

    @app.tool(tags={"ops"})
    def restart() -> str:
        return "restarted"

    @app.tool
    def ungrouped() -> str:
        return "alone"

    @app.prompt
    def onboarding() -> str:
        return "welcome"

    @app.resource("docs://handbook")
    def handbook() -> str:
        return "handbook"

    @app.resource("docs://pages/{page}")
    def page(page: str) -> str:
        return page

    return app


def declared(version: str) -> Any:
    handlers = client_handlers(version)
    declare_groups(handlers)
    return handlers


def groups_of(items: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for item in items:
        data = versions.dump(item)
        key = data.get("name") if "name" in data and "uri" not in data and "uriTemplate" not in data else None
        key = key or data.get("uri") or data.get("uriTemplate")
        out[str(key)] = list((data.get("_meta") or {}).get(MEMBERSHIP, []))
    return out


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_client_that_asks_sees_each_primitives_groups(version: str) -> None:
    async with make_app().test_client(version, handlers=declared(version)) as client:
        assert groups_of((await client.list_tools()).tools) == {
            "gh_list_issues": ["github"],
            "refund": ["billing"],
            "ledger": ["finance", "ops"],
            "restart": ["ops"],
            "ungrouped": [],
        }
        assert groups_of((await client.list_prompts()).prompts) == {"onboarding": ["docs"]}
        assert groups_of((await client.list_resources()).resources) == {"docs://handbook": ["docs"]}
        templates = (await client.list_resource_templates()).resource_templates
        assert groups_of(templates) == {"docs://pages/{page}": ["docs"]}


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_client_that_does_not_ask_sees_the_lists_as_without_the_extension(version: str) -> None:
    lists: list[list[Any]] = []
    for extensions in (True, False):
        async with make_app(extensions).test_client(version) as client:
            lists.append(
                [
                    versions.dump(await client.list_tools()),
                    versions.dump(await client.list_prompts()),
                    versions.dump(await client.list_resources()),
                    versions.dump(await client.list_resource_templates()),
                ]
            )
    with_groups, without = lists
    assert with_groups == without
    assert MEMBERSHIP not in str(with_groups)


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_groups_list_and_the_capability(version: str) -> None:
    async with make_app().test_client(version, handlers=declared(version)) as client:
        capabilities = client.server_capabilities
        where = capabilities.get("extensions") or capabilities.get("experimental") or {}
        assert where[MEMBERSHIP] == {"listChanged": False}
        groups = await list_groups(client)
        assert [g.name for g in groups] == ["finance", "billing", "github", "ops", "docs"]
        billing = versions.dump(groups[1])
        assert billing == {"name": "billing", "title": "Billing", "_meta": {MEMBERSHIP: ["finance"]}}
        with pytest.raises(McpError) as refused:
            await client.session.call_extension(EXTENSION.methods["groups/list"], ListGroupsRequestParams(cursor="x"))
        assert refused.value.code == -32602 and "params.cursor" in refused.value.message


async def test_tools_in_a_group_nested_or_not_and_a_group_disabled_by_its_tag() -> None:
    app = make_app()
    async with app.test_client("2025-11-25", handlers=declared("2025-11-25")) as client:
        assert [t.name for t in await tools_in_group(client, "finance")] == ["refund", "ledger"]
        assert [t.name for t in await tools_in_group(client, "finance", nested=False)] == ["ledger"]
        assert [t.name for t in await tools_in_group(client, "github")] == ["gh_list_issues"]
        app.disable(tags={"group:billing"})  # `group="billing"` is that tag
        assert [t.name for t in await tools_in_group(client, "finance")] == ["ledger"]


async def test_search_tools_helper_and_groups_on_what_the_search_finds() -> None:
    app = make_app()
    app.add(ToolSearch())
    async with app.test_client("2026-07-28", handlers=declared("2026-07-28")) as client:
        [found] = await search_tools(client, "refund an order", limit=1)
        assert found.name == "refund" and found.input_schema.required == ["order"]
        assert groups_of([found]) == {"refund": ["billing"]}
        assert [t.name for t in await search_tools(client, "^gh_", mode="regex")] == ["gh_list_issues"]
        with pytest.raises(SearchError, match="not a regular expression"):
            await search_tools(client, "(", mode="regex")


def test_bad_groups_are_refused() -> None:
    with pytest.raises(ValueError, match="group 'a' is given twice"):
        Groups([Group("a"), Group("a")])
    with pytest.raises(ValueError, match="parent group 'nowhere' is not one of the groups"):
        Groups([Group("a", parents=["nowhere"])])
    with pytest.raises(ValueError, match="Group 'a': a group cannot belong to itself"):
        Group("a", parents=["a"])
    with pytest.raises(ValueError, match="Group 'a': members= is one string"):
        Group("a", members="tool")


async def test_groups_over_streamable_http() -> None:
    with serve_in_thread(make_app().asgi()) as base:
        handlers = declared("2026-07-28")
        async with connect_http(
            base + "/mcp", Client_2026_07_28, protocol_version="2026-07-28", handlers=handlers
        ) as client:
            assert [g.name for g in await list_groups(client)][:2] == ["finance", "billing"]
            assert [t.name for t in await tools_in_group(client, "ops")] == ["ledger", "restart"]
