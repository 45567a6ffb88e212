"""What changes while an `App` serves: tools, resources and prompts removed or added (the
`notifications/*/list_changed` broadcasts, one per list however many changes are made together),
resources updated, tools / prompts / resources hidden and shown again (`disable`, `enable`, by name
or tag), and what cannot change once the capabilities are advertised. A collaborator `App` holds
(`app.core`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from mcp_bindings.runtime.app.errors import AppDefinitionError
from mcp_bindings.runtime.app.registries import KINDS
from mcp_bindings.runtime.rpc.errors import McpError
from mcp_bindings.runtime.server.notifications import RESOURCE_UPDATED
from mcp_bindings.runtime.server.stubs import ServerStub
from mcp_bindings.v2026_07_28 import names as v2026

if TYPE_CHECKING:
    from mcp_bindings.runtime.app.core import App
    from mcp_bindings.runtime.app.mounting import Mounting

__all__ = ["PROMPTS_CHANGED", "RESOURCES_CHANGED", "TOOLS_CHANGED", "ListChanges"]

log = logging.getLogger("mcp_bindings.runtime.app")

TOOLS_CHANGED = v2026.NOTIFICATIONS_TOOLS_LIST_CHANGED
RESOURCES_CHANGED = v2026.NOTIFICATIONS_RESOURCES_LIST_CHANGED
PROMPTS_CHANGED = v2026.NOTIFICATIONS_PROMPTS_LIST_CHANGED
# What tells clients that a table changed (resources and templates: one notification).
_NOTIFICATION = {
    "tools": TOOLS_CHANGED,
    "resources": RESOURCES_CHANGED,
    "templates": RESOURCES_CHANGED,
    "prompts": PROMPTS_CHANGED,
}


class ListChanges:
    """`remove_*`, `disable` / `enable`, `resource_updated` and the list-changed broadcasts of an
    `App`: a collaborator the app holds (`app._changes`), next to its `Mounting` (the apps it is
    mounted in hear of its changes)."""

    def __init__(self, app: App, mounting: Mounting) -> None:
        self.app, self.registries, self.mounting = app, app.registries, mounting
        self.pending: set[str] = set()  # list changes not broadcast yet
        self.flush: asyncio.Task[None] | None = None

    def _built(self) -> ServerStub | None:
        return self.app._server  # pyright: ignore[reportPrivateUsage]  # (None: not built yet)

    def remove(self, kind: str, key: str) -> None:
        """`App.remove_tool`, `remove_resource` (its URI may be a template's), `remove_prompt`."""
        if kind == "resources" and key in self.registries.templates:
            kind = "templates"
        del self.registries.table(kind)[key]
        self.changed(kind)

    def switch(self, enabled: bool, names: tuple[str, ...], tags: Collection[str]) -> int:
        """`App.disable` / `App.enable`: how many changed."""
        if isinstance(tags, str):
            raise TypeError(f"tags={tags!r} is one string; give a collection: tags={{{tags!r}}}")
        wanted, tagged = set(names), frozenset(tags)
        tables: dict[str, Mapping[str, Any]] = {kind: self.registries.table(kind) for kind in KINDS}
        chosen = [
            (kind, entry)
            for kind, table in tables.items()
            for key, entry in table.items()
            if key in wanted or entry.tags & tagged
        ]
        unknown = wanted - {key for table in tables.values() for key in table}
        if unknown:
            raise KeyError(f"no tool, prompt, resource or template named {', '.join(sorted(unknown))}")
        changed = [(kind, entry) for kind, entry in chosen if entry.enabled != enabled]
        for _kind, entry in changed:
            entry.enabled = enabled
            mounted = self.mounting.origins.get(id(entry))
            if mounted is not None:  # a mounted app's: its own entry too (what a re-mount copies)
                mounted[0].enabled = enabled
                mounted[1].registries.lists.clear()
        self.changed(*{kind for kind, _entry in changed})
        return len(changed)

    def require(self, kind: str, had: bool) -> None:
        """Capabilities are fixed once the server is built: the first tool (prompt, ...) cannot come later."""
        if self._built() is not None and not had and kind not in self.registries.serves:
            raise AppDefinitionError(
                f"the app's server is already built without {kind} (by the first read of app.server, or by "
                f"serving): register at least one of its {kind} before that, as the server's capabilities are "
                "fixed when it is built (they are advertised at the handshake)"
            )

    def changed(self, *kinds: str) -> None:
        """Tables changed ("tools", "resources", "templates", "prompts"): their cached definitions
        dropped, the apps this one is mounted in told, and (once built) its clients told, one
        notification per list however many changes are made together."""
        if not kinds:
            return
        for kind in kinds:
            self.registries.lists.pop(kind, None)
        for parent in self.mounting.parents:  # mounted: the apps serving this one place it again
            parent.remount(self.app)
        if self._built() is None:
            return
        if "tools" in kinds:
            self.declare_tools()
        self.pending |= {_NOTIFICATION[kind] for kind in kinds}
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # changed outside the event loop: clients see it when they list again
            return
        flush = self.flush
        if flush is None or flush.done() or flush.get_loop() is not loop:
            self.flush = loop.create_task(self._broadcast())

    def declare_tools(self) -> None:
        """Calls are checked against the inputSchema (`tool_schemas`) even before a client lists."""
        from mcp_bindings.runtime.server.tool_schemas import declare_tools

        server = self._built()
        if server is not None:
            declare_tools(server, [t.definition for t in self.registries.tools.values() if t.enabled])

    async def _broadcast(self) -> None:
        await asyncio.sleep(0)  # changes made together go out as one notification each
        while self.pending:
            method = self.pending.pop()
            try:
                await self.app.server.broadcast(method)
            except McpError as error:  # e.g. the shared bus is down: nobody awaits this task
                log.warning("could not send %s: %s", method, error.message)

    def serves_own_clients(self) -> bool:
        """Whether the app has clients of its own: it serves (or will), not only mounted in others."""
        return self._built() is not None or not self.mounting.parents

    async def resource_updated(self, uri: str) -> int:
        """Tell the clients subscribed to `uri` that it changed; returns how many were told. A mounted
        app tells those of the apps it is mounted in (under its namespace there), and its own where it
        serves too."""
        told = 0
        if self.serves_own_clients():
            told += await self.app.server.broadcast(RESOURCE_UPDATED, {"uri": uri})
        for parent in self.mounting.parents:
            told += await parent.updated_below(self.app, uri)
        return told
