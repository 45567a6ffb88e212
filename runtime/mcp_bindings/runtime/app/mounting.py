"""Composition: `app.mount(other, namespace="x")` serves another `App`'s tools, prompts, resources,
templates and completions as this app's own, under a namespace (tool and prompt `x_name`, resource
`scheme://x/rest`). Live: what the mounted app registers, removes, enables or disables later is
re-mounted and the clients told (list changed); its lifespan runs inside this app's, and its
functions keep their own lifespan value and dependencies. Resources too: a mounted app's
`resource_updated` reaches this app's clients subscribed to the URI under its namespace, and what this
app's clients subscribe to is told to the mounted app under its own URIs (`watch_subscribed`: a
mounted `App.proxy` holds them at its remote). A collaborator `App` holds (`app.core`)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from mcp_bindings.runtime.app.entries import TOOL_NAME, PromptEntry, ResourceEntry, TemplateEntry, ToolEntry
from mcp_bindings.runtime.app.errors import AppDefinitionError
from mcp_bindings.runtime.app.lifespan import Lifetime
from mcp_bindings.runtime.app.registries import KINDS
from mcp_bindings.runtime.app.uri_template import Template
from mcp_bindings.runtime.server.host import host_for

if TYPE_CHECKING:
    from mcp_bindings.runtime.app.changes import ListChanges
    from mcp_bindings.runtime.app.core import App

__all__ = ["Mounting"]

Entry = ToolEntry | ResourceEntry | TemplateEntry | PromptEntry


@dataclass(eq=False)
class _Mount:
    app: App
    mounting: Mounting  # the mounted app's
    namespace: str | None
    keys: list[tuple[str, str]] = field(default_factory=list["tuple[str, str]"])  # (table, key) placed here
    completions: list[tuple[str, str, str]] = field(default_factory=list["tuple[str, str, str]"])


def _name(namespace: str | None, name: str) -> str:
    return name if namespace is None else f"{namespace}_{name}"


def _uri(namespace: str | None, uri: str) -> str:
    """`config://app` -> `config://x/app` (`file:///a` -> `file://x/a`; `urn:a` -> `urn:x/a`)."""
    if namespace is None:
        return uri
    scheme, sep, rest = uri.partition("://")
    if sep:
        return f"{scheme}://{namespace}/{rest.lstrip('/')}"
    scheme, _, rest = uri.partition(":")
    return f"{scheme}:{namespace}/{rest}"


class Mounting:
    """`App.mount`: a collaborator the app holds (`app._mounting`), with what this app mounted and
    the apps it is mounted in; its `ListChanges` (`changes`) is set by the app once both are made."""

    changes: ListChanges

    def __init__(self, app: App, lifetime: Lifetime) -> None:
        self.app, self.registries, self.lifetime = app, app.registries, lifetime
        self.mounts: list[_Mount] = []  # the apps mounted here
        self.parents: list[Mounting] = []  # those of the apps this one is mounted in
        self.origins: dict[int, tuple[Entry, App]] = {}  # id(a mounted copy) -> the mounted app's entry, that app

    def mount(self, other: App, namespace: str | None = None) -> None:
        """Serve `other`'s tools, prompts, resources, templates and completions as this app's, their
        names prefixed `namespace_` (resource URIs `scheme://namespace/...`; None: as they are). The
        two apps must be written against the same protocol version; a name taken here is refused."""
        theirs: Mounting = other._mounting  # pyright: ignore[reportPrivateUsage]
        if any(m.app is other for m in self.mounts):
            raise AppDefinitionError(f"app.mount: {other.name!r} is already mounted here")
        if other is self.app or other in _ancestors(self):
            raise AppDefinitionError("app.mount: an app cannot be mounted in itself")
        if other.protocol_version != self.app.protocol_version:
            raise AppDefinitionError(
                f"app.mount: {other.name!r} is written against MCP {other.protocol_version}, this app against "
                f"{self.app.protocol_version}; mount apps of the same version (App(protocol=...))"
            )
        if namespace is not None and TOOL_NAME.fullmatch(f"{namespace}_x") is None:
            raise AppDefinitionError(f"app.mount: namespace {namespace!r} must be letters, digits, _ - . (SEP-986)")
        mount = _Mount(other, theirs, namespace)
        self.mounts.append(mount)
        self.registries.serves |= other.registries.serves  # a proxy's kinds, listed once it connects
        try:
            self._place(mount)
        except AppDefinitionError:
            self.mounts.remove(mount)
            raise
        theirs.parents.append(self)
        self.lifetime.children.append(theirs.lifetime)

    def remount(self, other: App) -> None:
        """Place a mounted app's components again (it changed)."""
        for mount in self.mounts:
            if mount.app is other:
                self._place(mount)

    def _place(self, mount: _Mount) -> None:
        tables: dict[str, dict[str, Any]] = {kind: self.registries.table(kind) for kind in KINDS}
        had = {kind: bool(table) for kind, table in tables.items()}
        had_completions = bool(self.registries.completers)
        touched = {kind for kind, _key in mount.keys}
        for kind, key in mount.keys:
            self.origins.pop(id(tables[kind].pop(key, None)), None)
        for key in mount.completions:
            self.registries.completers.pop(key, None)
        placed = _copies(mount)
        for (kind, key), _entry in placed.items():
            if key in tables[kind]:
                raise AppDefinitionError(
                    f"app.mount: {key!r} of {mount.app.name!r} is already registered here; mount it with a namespace"
                )
        for kind in ("tools", "prompts"):
            if any(k == kind for k, _ in placed):
                self.changes.require(kind, had[kind])
        if any(k in ("resources", "templates") for k, _ in placed):
            self.changes.require("resources", had["resources"] or had["templates"])
        mount.keys = list(placed)
        touched |= {kind for kind, _key in placed}
        for (kind, key), (entry, origin) in placed.items():
            tables[kind][key] = entry
            self.origins[id(entry)] = (origin, mount.app)
        mount.completions = []
        for (kind, target, argument), completer in mount.app.registries.completers.items():
            renamed = (kind, _name(mount.namespace, target) if kind == "prompt" else _uri(mount.namespace, target))
            key = (*renamed, argument)
            self.changes.require("completions", had_completions or bool(self.registries.completers))
            self.registries.completers[key] = completer
            mount.completions.append(key)
        self.changes.changed(*touched)

    # -- resources: updates up, subscriptions down ------------------------------------------------

    async def updated_below(self, other: App, uri: str) -> int:
        """A mounted app's resource `uri` changed: tell this app's clients subscribed to it under its
        namespace; returns how many were told."""
        told = 0
        for mount in self.mounts:
            if mount.app is other:
                told += await self.changes.resource_updated(_uri(mount.namespace, uri))
        return told

    def watch_subscribed(self, watcher: Callable[[str, int], None]) -> Callable[[], None]:
        """Tell `watcher(uri, holders)` how many clients hold each of this app's resource URIs: those
        of its own server (where it serves, not only mounted) and those of every app it is mounted in,
        their URIs read back as this app's. Returns what stops it."""
        stops: list[Callable[[], None]] = []
        if self.changes.serves_own_clients():
            stops.append(host_for(self.app.server).subscriptions.watch(watcher))
        for parent in self.parents:
            for mount in parent.mounts:
                if mount.app is self.app:
                    read_back = _ReadBack(parent, mount, watcher)
                    stops.append(parent.watch_subscribed(read_back))

        def stop() -> None:
            for each in stops:
                each()

        return stop

    def own_uri(self, mount: _Mount, uri: str) -> str | None:
        """The mounted app's URI of this app's `uri`, if that is one of the mount's resources or an
        expansion of one of its templates, else None."""
        entry = self.registries.resources.get(uri)
        if entry is not None:
            origin = self.origins.get(id(entry))
            return cast(ResourceEntry, origin[0]).uri if origin is not None and origin[1] is mount.app else None
        for kind, key in mount.keys:
            template = self.registries.templates.get(key) if kind == "templates" else None
            values = template.template.match(uri) if template is not None else None
            origin = self.origins.get(id(template)) if values is not None else None
            if values is not None and origin is not None:
                return cast(TemplateEntry, origin[0]).template.expand(values)
        return None


class _ReadBack:
    """A parent app's subscription counts passed to a mounted app's watcher under the mounted app's
    URIs (each URI read back once, while held: a resource removed meanwhile is still let go)."""

    def __init__(self, parent: Mounting, mount: _Mount, watcher: Callable[[str, int], None]) -> None:
        self.parent, self.mount, self.watcher = parent, mount, watcher
        self.held: dict[str, str] = {}  # the parent's URI -> the mounted app's

    def __call__(self, uri: str, holders: int) -> None:
        own = self.held.get(uri)
        if own is None:
            own = self.parent.own_uri(self.mount, uri)
            if own is None:
                return  # not one of the mounted app's resources
        if holders > 0:
            self.held[uri] = own
        else:
            self.held.pop(uri, None)
        self.watcher(own, holders)


def _ancestors(mounting: Mounting) -> list[App]:
    out: list[App] = []
    for parent in mounting.parents:
        out += [parent.app, *_ancestors(parent)]
    return out


def _copies(mount: _Mount) -> dict[tuple[str, str], tuple[Any, Entry]]:
    """The mounted app's entries as this app places them: (table, key) -> (copy, the original)."""
    out: dict[tuple[str, str], tuple[Any, Entry]] = {}
    for kind in ("tools", "prompts", "resources", "templates"):
        for entry in mount.app.registries.table(kind).values():
            new = copy.copy(entry)
            new.lifetime = entry.lifetime or mount.mounting.lifetime
            if isinstance(entry, TemplateEntry):
                key = _uri(mount.namespace, entry.template.template)
                new.template, field = Template(key), "uri_template"
            elif isinstance(entry, ResourceEntry):
                key = new.uri = _uri(mount.namespace, entry.uri)
                field = "uri"
            else:
                key = new.name = _name(mount.namespace, entry.name)
                field = "name"
            new.definition = entry.definition.model_copy(update={field: key})
            out[kind, key] = (new, entry)
    return out
