"""What changes while an `App` serves: tools, resources and prompts removed or added (the
`notifications/*/list_changed` broadcasts, one per list however many changes are made together),
resources updated, tools / prompts / resources hidden and shown again (`disable`, `enable`, by name
or tag), and what cannot change once the capabilities are advertised. A mixin of `App`
(`app.core`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Mapping
from typing import Any

from mcp_bindings.runtime.app.entries import PromptEntry, ResourceEntry, TemplateEntry, ToolEntry
from mcp_bindings.runtime.app.errors import AppDefinitionError
from mcp_bindings.runtime.rpc.errors import McpError
from mcp_bindings.runtime.server.notifications import RESOURCE_UPDATED
from mcp_bindings.runtime.server.stubs import ServerStub
from mcp_bindings.v2026_07_28 import names as v2026

__all__ = ["PROMPTS_CHANGED", "RESOURCES_CHANGED", "TOOLS_CHANGED", "ListChanges"]

log = logging.getLogger("mcp_bindings.runtime.app")

TOOLS_CHANGED = v2026.NOTIFICATIONS_TOOLS_LIST_CHANGED
RESOURCES_CHANGED = v2026.NOTIFICATIONS_RESOURCES_LIST_CHANGED
PROMPTS_CHANGED = v2026.NOTIFICATIONS_PROMPTS_LIST_CHANGED


class ListChanges:
    """`remove_*`, `resource_updated` and the list-changed broadcasts of an `App`."""

    _tools: dict[str, ToolEntry]
    _resources: dict[str, ResourceEntry]
    _templates: dict[str, TemplateEntry]
    _prompts: dict[str, PromptEntry]
    _lists: dict[str, list[Any]]
    _server: ServerStub | None
    _pending: set[str]
    _flush: asyncio.Task[None] | None
    _parents: list[Any]  # the apps this one is mounted in (`app.mount`)
    _origins: dict[int, tuple[Any, Any]]  # id(a mounted copy) -> (the mounted app's entry, that app)
    _remount: Callable[[Any], None]  # `Mounting._remount`
    _updated_below: Callable[[Any, str], Any]  # `Mounting._updated_below`
    _serves: set[str]  # kinds served while their table may be empty (`App.proxy`)

    @property
    def server(self) -> ServerStub:  # the app's server object (`App.server`)
        raise NotImplementedError

    def _declare_tools(self) -> None:
        raise NotImplementedError

    def remove_tool(self, name: str) -> None:
        del self._tools[name]
        self._changed(TOOLS_CHANGED, "tools")

    def remove_resource(self, uri: str) -> None:
        if uri in self._templates:
            del self._templates[uri]
        else:
            del self._resources[uri]
        self._changed(RESOURCES_CHANGED, "resources", "templates")

    def remove_prompt(self, name: str) -> None:
        del self._prompts[name]
        self._changed(PROMPTS_CHANGED, "prompts")

    def disable(self, *names: str, tags: Collection[str] = ()) -> int:
        """Hide tools, prompts (by name), resources and templates (by URI or URI template), and those
        with any of `tags`: left out of their lists and answered as unknown, until `enable`d. The
        clients are told (`notifications/*/list_changed`). Returns how many changed; a name that
        names nothing is a `KeyError`."""
        return self._switch(False, names, tags)

    def enable(self, *names: str, tags: Collection[str] = ()) -> int:
        """Show again what `disable` hid (same selection); returns how many changed."""
        return self._switch(True, names, tags)

    def _switch(self, enabled: bool, names: tuple[str, ...], tags: Collection[str]) -> int:
        if isinstance(tags, str):
            raise TypeError(f"tags={tags!r} is one string; give a collection: tags={{{tags!r}}}")
        wanted, tagged = set(names), frozenset(tags)
        tables: dict[str, Mapping[str, Any]] = {
            "tools": self._tools,
            "resources": self._resources,
            "templates": self._templates,
            "prompts": self._prompts,
        }
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
            mounted = self._origins.get(id(entry))
            if mounted is not None:  # a mounted app's: its own entry too (what a re-mount copies)
                mounted[0].enabled = enabled
                mounted[1]._lists.clear()
        kinds = {kind for kind, _entry in changed}
        if "tools" in kinds:
            self._changed(TOOLS_CHANGED, "tools")
        if kinds & {"resources", "templates"}:
            self._changed(RESOURCES_CHANGED, "resources", "templates")
        if "prompts" in kinds:
            self._changed(PROMPTS_CHANGED, "prompts")
        return len(changed)

    def _require(self, kind: str, had: bool) -> None:
        """Capabilities are fixed once the server is built: the first tool (prompt, ...) cannot come later."""
        if self._server is not None and not had and kind not in self._serves:
            raise AppDefinitionError(
                f"the app's server is already built without {kind} (by the first read of app.server, or by "
                f"serving): register at least one of its {kind} before that, as the server's capabilities are "
                "fixed when it is built (they are advertised at the handshake)"
            )

    def _changed(self, method: str, *lists: str) -> None:
        for name in lists:
            self._lists.pop(name, None)
        for parent in self._parents:  # mounted: the apps serving this one place it again
            parent._remount(self)
        if self._server is None:
            return
        if method == TOOLS_CHANGED:
            self._declare_tools()
        self._pending.add(method)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # changed outside the event loop: clients see it when they list again
            return
        flush = self._flush
        if flush is None or flush.done() or flush.get_loop() is not loop:
            self._flush = loop.create_task(self._broadcast())

    async def _broadcast(self) -> None:
        await asyncio.sleep(0)  # changes made together go out as one notification each
        while self._pending:
            method = self._pending.pop()
            try:
                await self.server.broadcast(method)
            except McpError as error:  # e.g. the shared bus is down: nobody awaits this task
                log.warning("could not send %s: %s", method, error.message)

    def _serves_own_clients(self) -> bool:
        """Whether the app has clients of its own: it serves (or will), not only mounted in others."""
        return self._server is not None or not self._parents

    async def resource_updated(self, uri: str) -> int:
        """Tell the clients subscribed to `uri` that it changed; returns how many were told. A mounted
        app tells those of the apps it is mounted in (under its namespace there), and its own where it
        serves too."""
        told = 0
        if self._serves_own_clients():
            told += await self.server.broadcast(RESOURCE_UPDATED, {"uri": uri})
        for parent in self._parents:
            told += await parent._updated_below(self, uri)
        return told
