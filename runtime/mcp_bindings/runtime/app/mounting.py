"""Composition: `app.mount(other, namespace="x")` serves another `App`'s tools, prompts, resources,
templates and completions as this app's own, under a namespace (tool and prompt `x_name`, resource
`scheme://x/rest`). Live: what the mounted app registers, removes, enables or disables later is
re-mounted and the clients told (list changed); its lifespan runs inside this app's, and its
functions keep their own lifespan value and dependencies. Resources too: a mounted app's
`resource_updated` reaches this app's clients subscribed to the URI under its namespace, and what this
app's clients subscribe to is told to the mounted app under its own URIs (`_watch_subscribed`: a
mounted `App.proxy` holds them at its remote). A mixin of `App` (`app.core`)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from mcp_bindings.runtime.app.changes import PROMPTS_CHANGED, RESOURCES_CHANGED, TOOLS_CHANGED
from mcp_bindings.runtime.app.entries import TOOL_NAME, Completer, PromptEntry, ResourceEntry, TemplateEntry, ToolEntry
from mcp_bindings.runtime.app.errors import AppDefinitionError
from mcp_bindings.runtime.app.lifespan import Lifetime
from mcp_bindings.runtime.app.uri_template import Template
from mcp_bindings.runtime.server.host import host_for

if TYPE_CHECKING:
    from mcp_bindings.runtime.app.core import App

__all__ = ["Mounting"]

Entry = ToolEntry | ResourceEntry | TemplateEntry | PromptEntry


@dataclass(eq=False)
class _Mount:
    app: App
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
    """`App.mount`."""

    _tools: dict[str, ToolEntry]
    _resources: dict[str, ResourceEntry]
    _templates: dict[str, TemplateEntry]
    _prompts: dict[str, PromptEntry]
    _completers: dict[tuple[str, str, str], Completer]
    _lifetime: Lifetime
    _mounts: list[_Mount]
    _serves: set[str]
    _parents: list[App]
    _origins: dict[int, tuple[Entry, App]]  # id(a mounted copy) -> the mounted app's own entry, and that app
    _server: Any  # the app's server object once built (`App.server`)
    protocol_version: str
    resource_updated: Callable[[str], Any]  # `ListChanges.resource_updated`
    _serves_own_clients: Callable[[], bool]  # `ListChanges._serves_own_clients`
    _changed: Callable[..., None]  # `ListChanges._changed`
    _require: Callable[[str, bool], None]  # `ListChanges._require`

    def mount(self, other: App, namespace: str | None = None) -> None:
        """Serve `other`'s tools, prompts, resources, templates and completions as this app's, their
        names prefixed `namespace_` (resource URIs `scheme://namespace/...`; None: as they are). The
        two apps must be written against the same protocol version; a name taken here is refused."""
        me: Any = self
        if any(m.app is other for m in self._mounts):
            raise AppDefinitionError(f"app.mount: {other.name!r} is already mounted here")
        if other is me or other in _ancestors(me):
            raise AppDefinitionError("app.mount: an app cannot be mounted in itself")
        if other.protocol_version != self.protocol_version:
            raise AppDefinitionError(
                f"app.mount: {other.name!r} is written against MCP {other.protocol_version}, this app against "
                f"{self.protocol_version}; mount apps of the same version (App(protocol=...))"
            )
        if namespace is not None and TOOL_NAME.fullmatch(f"{namespace}_x") is None:
            raise AppDefinitionError(f"app.mount: namespace {namespace!r} must be letters, digits, _ - . (SEP-986)")
        mount = _Mount(other, namespace)
        self._mounts.append(mount)
        self._serves |= other._serves  # pyright: ignore[reportPrivateUsage]  # a proxy's kinds, listed once it connects
        try:
            self._place(mount)
        except AppDefinitionError:
            self._mounts.remove(mount)
            raise
        other._parents.append(me)  # pyright: ignore[reportPrivateUsage]
        self._lifetime.children.append(other._lifetime)  # pyright: ignore[reportPrivateUsage]

    def _remount(self, other: App) -> None:
        """Place a mounted app's components again (it changed)."""
        for mount in self._mounts:
            if mount.app is other:
                self._place(mount)

    def _place(self, mount: _Mount) -> None:
        tables: dict[str, dict[str, Any]] = {
            "tools": self._tools,
            "resources": self._resources,
            "templates": self._templates,
            "prompts": self._prompts,
        }
        had = {kind: bool(table) for kind, table in tables.items()}
        had_completions = bool(self._completers)
        touched = {kind for kind, _key in mount.keys}
        for kind, key in mount.keys:
            self._origins.pop(id(tables[kind].pop(key, None)), None)
        for key in mount.completions:
            self._completers.pop(key, None)
        placed = _copies(mount)
        for (kind, key), _entry in placed.items():
            if key in tables[kind]:
                raise AppDefinitionError(
                    f"app.mount: {key!r} of {mount.app.name!r} is already registered here; mount it with a namespace"
                )
        for kind in ("tools", "prompts"):
            if any(k == kind for k, _ in placed):
                self._require(kind, had[kind])
        if any(k in ("resources", "templates") for k, _ in placed):
            self._require("resources", had["resources"] or had["templates"])
        mount.keys = list(placed)
        touched |= {kind for kind, _key in placed}
        for (kind, key), (entry, origin) in placed.items():
            tables[kind][key] = entry
            self._origins[id(entry)] = (origin, mount.app)
        mount.completions = []
        for (kind, target, argument), completer in mount.app._completers.items():  # pyright: ignore[reportPrivateUsage]
            renamed = (kind, _name(mount.namespace, target) if kind == "prompt" else _uri(mount.namespace, target))
            key = (*renamed, argument)
            self._require("completions", had_completions or bool(self._completers))
            self._completers[key] = completer
            mount.completions.append(key)
        if "tools" in touched:
            self._changed(TOOLS_CHANGED, "tools")
        if touched & {"resources", "templates"}:
            self._changed(RESOURCES_CHANGED, "resources", "templates")
        if "prompts" in touched:
            self._changed(PROMPTS_CHANGED, "prompts")

    # -- resources: updates up, subscriptions down ------------------------------------------------

    async def _updated_below(self, other: App, uri: str) -> int:
        """A mounted app's resource `uri` changed: tell this app's clients subscribed to it under its
        namespace; returns how many were told."""
        told = 0
        for mount in self._mounts:
            if mount.app is other:
                told += await self.resource_updated(_uri(mount.namespace, uri))
        return told

    def _watch_subscribed(self, watcher: Callable[[str, int], None]) -> Callable[[], None]:
        """Tell `watcher(uri, holders)` how many clients hold each of this app's resource URIs: those
        of its own server (where it serves, not only mounted) and those of every app it is mounted in,
        their URIs read back as this app's. Returns what stops it."""
        me: Any = self
        stops: list[Callable[[], None]] = []
        if self._serves_own_clients():
            stops.append(host_for(me.server).subscriptions.watch(watcher))
        for parent in self._parents:
            for mount in parent._mounts:  # pyright: ignore[reportPrivateUsage]
                if mount.app is me:
                    read_back = _ReadBack(parent, mount, watcher)
                    stops.append(parent._watch_subscribed(read_back))  # pyright: ignore[reportPrivateUsage]

        def stop() -> None:
            for each in stops:
                each()

        return stop

    def _own_uri(self, mount: _Mount, uri: str) -> str | None:
        """The mounted app's URI of this app's `uri`, if that is one of the mount's resources or an
        expansion of one of its templates, else None."""
        entry = self._resources.get(uri)
        if entry is not None:
            origin = self._origins.get(id(entry))
            return cast(ResourceEntry, origin[0]).uri if origin is not None and origin[1] is mount.app else None
        for kind, key in mount.keys:
            template = self._templates.get(key) if kind == "templates" else None
            values = template.template.match(uri) if template is not None else None
            origin = self._origins.get(id(template)) if values is not None else None
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
            own = self.parent._own_uri(self.mount, uri)  # pyright: ignore[reportPrivateUsage]
            if own is None:
                return  # not one of the mounted app's resources
        if holders > 0:
            self.held[uri] = own
        else:
            self.held.pop(uri, None)
        self.watcher(own, holders)


def _ancestors(app: App) -> list[App]:
    out: list[App] = []
    for parent in app._parents:  # pyright: ignore[reportPrivateUsage]
        out += [parent, *_ancestors(parent)]
    return out


def _copies(mount: _Mount) -> dict[tuple[str, str], tuple[Any, Entry]]:
    """The mounted app's entries as this app places them: (table, key) -> (copy, the original)."""
    app, ns = mount.app, mount.namespace
    lifetime = app._lifetime  # pyright: ignore[reportPrivateUsage]
    out: dict[tuple[str, str], tuple[Any, Entry]] = {}
    for tool in app._tools.values():  # pyright: ignore[reportPrivateUsage]
        name = _name(ns, tool.name)
        new = copy.copy(tool)
        new.name, new.lifetime = name, tool.lifetime or lifetime
        new.definition = tool.definition.model_copy(update={"name": name})
        out["tools", name] = (new, tool)
    for prompt in app._prompts.values():  # pyright: ignore[reportPrivateUsage]
        name = _name(ns, prompt.name)
        new = copy.copy(prompt)
        new.name, new.lifetime = name, prompt.lifetime or lifetime
        new.definition = prompt.definition.model_copy(update={"name": name})
        out["prompts", name] = (new, prompt)
    for resource in app._resources.values():  # pyright: ignore[reportPrivateUsage]
        uri = _uri(ns, resource.uri)
        new = copy.copy(resource)
        new.uri, new.lifetime = uri, resource.lifetime or lifetime
        new.definition = resource.definition.model_copy(update={"uri": uri})
        out["resources", uri] = (new, resource)
    for template in app._templates.values():  # pyright: ignore[reportPrivateUsage]
        uri = _uri(ns, template.template.template)
        new = copy.copy(template)
        new.template, new.lifetime = Template(uri), template.lifetime or lifetime
        new.definition = template.definition.model_copy(update={"uri_template": uri})
        out["templates", uri] = (new, template)
    return out
