"""What the live commands learn of a server with a large catalog (docs/discovery.md), through the
typed client's discovery methods (`client.search_tools`, `list_groups`, `tools_in_group`): `list
groups`, `list tools --group NAME` / `--search QUERY`, the groups `inspect` shows, and the schema
`call` types a tool's arguments by when the tool is found behind a tool search, not listed."""

from __future__ import annotations

import argparse
import json
from typing import Any

from mcp_bindings.ext.io_modelcontextprotocol_groups.names import IDENTIFIER as GROUPS

from .connection import ExitCode, LiveError
from .surface import list_all, wire

__all__ = ["GROUPS", "described", "groups", "narrowed", "offers_groups"]

SEARCH = "search_tools"  # the tools a server behind a tool search lists (`ToolSearch`, FastMCP's transforms)
DESCRIBE = "describe_tool"


def offers_groups(client: Any) -> bool:
    """Whether the server's capabilities name the groups extension."""
    from mcp_bindings.runtime.protocol.custom_methods import peer_declares

    return peer_declares(client.server_capabilities, GROUPS)


async def groups(client: Any) -> list[dict[str, Any]]:
    """The server's groups (`groups/list`, every page), as wire JSON."""
    if not offers_groups(client):
        raise LiveError(
            f"the server offers no groups (its capabilities name no {GROUPS} extension)", ExitCode.NOT_FOUND
        )
    return [wire(group) for group in await client.list_groups()]


async def narrowed(client: Any, args: argparse.Namespace) -> list[dict[str, Any]]:
    """`list tools --group NAME`: the members of that group and of the groups inside it; `--search
    QUERY`: the tools the server's search finds, best first, with their full definitions."""
    if args.group is not None:
        known = [str(group["name"]) for group in await groups(client)]
        if args.group not in known:
            offered = ", ".join(known) or "none"
            raise LiveError(f"the server has no group {args.group!r} (it has: {offered})", ExitCode.NOT_FOUND)
        return [wire(tool) for tool in await client.tools_in_group(args.group)]
    from mcp_bindings.runtime.client.discovery import SearchError

    listed = {str(tool.get("name")) for tool in await list_all(client, "tools")}
    if SEARCH not in listed:
        raise LiveError(
            f"the server lists no {SEARCH} tool, so it has no tool search: list its tools without --search",
            ExitCode.NOT_FOUND,
        )
    try:
        found = await client.search_tools(args.search, mode="regex" if args.regex else "bm25", limit=args.limit)
    except SearchError as exc:
        raise LiveError(f"the server refused the search: {exc.message}", ExitCode.TOOL_ERROR) from exc
    return [wire(tool) for tool in found]


async def described(client: Any, listed: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """Tool `name`'s definition from the server's `describe_tool` when it is not listed but the
    server lists that tool (a catalog behind a tool search): [definition], or [] where it has none."""
    if not any(tool.get("name") == DESCRIBE for tool in listed):
        return []
    result = wire(await client.call_tool(name=DESCRIBE, arguments={"name": name}))
    data = result.get("structuredContent")
    if data is None and result.get("content"):  # a version without structured output: the same JSON as text
        try:
            data = json.loads(str(result["content"][0].get("text", "")))
        except ValueError:
            data = None
    found = data.get("tools") if isinstance(data, dict) and not result.get("isError") else None
    return [found[0]] if isinstance(found, list) and found and isinstance(found[0], dict) else []


def check_options(args: argparse.Namespace) -> None:
    """`--group` and `--search` narrow a list of tools, one at a time; `--regex` and `--limit` go with `--search`."""
    if (args.group is not None or args.search is not None) and args.kind != "tools":
        raise LiveError(f"--group and --search narrow a list of tools, not of {args.kind}", ExitCode.USAGE)
    if args.group is not None and args.search is not None:
        raise LiveError("give --group or --search, not both", ExitCode.USAGE)
    if args.search is None and (args.regex or args.limit is not None):
        raise LiveError("--regex and --limit go with --search QUERY", ExitCode.USAGE)
