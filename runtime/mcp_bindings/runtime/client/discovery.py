"""The client's side of discovery (docs/discovery.md), for any typed client (`connect_*`,
`app.test_client`): search a server behind `ToolSearch` (`search_tools`), declare the groups
extension (`declare_groups`), list a server's groups (`list_groups`) and the tools of one group
(`tools_in_group`, nested groups followed). Functions of the client, as `client.apps` and
`client.skills` are; every typed client also has the three as methods (`client.search_tools(...)`,
`ClientStub`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

from mcp_bindings.ext.io_modelcontextprotocol_groups.names import GROUPS_LIST, IDENTIFIER
from mcp_bindings.runtime.protocol import registry, versions
from mcp_bindings.runtime.protocol.pagination import every_page
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError

__all__ = ["declare_groups", "list_groups", "search_tools", "tools_in_group"]


class SearchError(McpError):
    """A search the server answered as a tool error (a bad pattern, a bad limit): its text."""


def declare_groups(handlers: Any) -> None:
    """Declare the groups extension in the client's capabilities: the server then says, in each
    listed primitive's `_meta`, which groups it belongs to."""
    handlers.use_extension(IDENTIFIER, {})


async def search_tools(
    client: Any, query: str, *, mode: Literal["bm25", "regex"] = "bm25", limit: int | None = None, prefix: str = ""
) -> list[Any]:
    """The tools a server behind `ToolSearch` finds for `query` (best first), as the `Tool` models
    of the client's version, input schemas and all; `prefix` as the server's `ToolSearch(prefix=)`.
    A search the server refuses raises `SearchError` with its text."""
    arguments: dict[str, Any] = {"query": query, "mode": mode}
    if limit is not None:
        arguments["limit"] = limit
    result = versions.dump(await client.call_tool(name=f"{prefix}search_tools", arguments=arguments))
    text = str(result["content"][0]["text"]) if result.get("content") else ""
    if result.get("isError"):
        raise SearchError(INVALID_PARAMS, text)
    found = result.get("structuredContent")
    if found is None:  # a version without structured output: the same JSON as text
        import orjson

        found = orjson.loads(text)
    tool = _package(client).Tool
    return [tool.model_validate(t) for t in cast("Mapping[str, Any]", found)["tools"]]


async def list_groups(client: Any) -> list[Any]:
    """The server's groups (`groups/list`, every page), as the extension's `Group` models."""
    from mcp_bindings.ext.io_modelcontextprotocol_groups import models
    from mcp_bindings.ext.io_modelcontextprotocol_groups.methods import EXTENSION

    method = EXTENSION.methods[GROUPS_LIST]

    def page(cursor: str | None) -> Any:
        params = models.ListGroupsRequestParams(cursor=cursor) if cursor is not None else None
        return client.session.call_extension(method, params)

    return await every_page(page, "groups")


async def tools_in_group(client: Any, group: str, *, nested: bool = True) -> list[Any]:
    """The tools listed as members of `group` (their `_meta`; the client must have declared the
    extension), every page; `nested`: of the groups inside it too, at any depth."""
    wanted = {group}
    if nested:
        parents = {g.name: set(g.meta.groups or ()) if g.meta is not None else set() for g in await list_groups(client)}
        grew = True
        while grew:  # the groups whose parents are wanted, until none is added (cycles end too)
            more = {name for name, of in parents.items() if of & wanted} - wanted
            wanted |= more
            grew = bool(more)
    tools = await every_page(lambda cursor: client.list_tools(cursor=cursor), "tools")
    return [t for t in tools if wanted & set(_membership(t))]


def _membership(item: Any) -> list[str]:
    meta = versions.dump(getattr(item, "meta", None)) or {}
    names = cast("Mapping[str, Any]", meta).get(IDENTIFIER) if isinstance(meta, Mapping) else None
    return [str(n) for n in cast("list[Any]", names)] if isinstance(names, list) else []


def _package(client: Any) -> Any:
    return registry.load_version(client.protocol.info.name)
