"""Progressive discovery for servers with large catalogs (docs/discovery.md): tool search for every
client (`ToolSearch`, `discovery.search`, over `discovery.index`), groups (`Group`, `Groups`,
`discovery.groups`); the client's side is `client.discovery` (and the typed client's methods
`search_tools`, `list_groups`, `tools_in_group`). The names load their modules on first use."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_bindings.runtime.discovery.groups import Group, Groups
    from mcp_bindings.runtime.discovery.search import ToolSearch

__all__ = ["Group", "Groups", "ToolSearch"]

_HOMES = {"Group": "groups", "Groups": "groups", "ToolSearch": "search"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
