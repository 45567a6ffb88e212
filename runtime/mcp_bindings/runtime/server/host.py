"""The server host: the state all connections of one server object share, kept by the runtime in a
registry of its own (`host_for`; nothing is written into the user's server object) and dropped with
the object: the dispatch seam's features, the custom methods, the tool catalog, the task service,
the `requestState` sealer, the open `subscriptions/listen` streams, the resource subscriptions of
both eras (`server.subscriptions`, with the hook that tells watchers how many hold a URI whenever
that changes) and the broadcast bus. A low module: what delivers notifications through it is
`server.notifications`."""

from __future__ import annotations

import weakref
from collections.abc import Set
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

from mcp_bindings.ext.io_modelcontextprotocol_tasks import names as task_names
from mcp_bindings.runtime.protocol.custom_methods import EXTENSIONS, TASKS_EXTENSION, Methods, placed
from mcp_bindings.runtime.protocol.request_state import RequestStateSealer, SecretError, secrets_from_env
from mcp_bindings.runtime.protocol.result_checks import ResultChecks
from mcp_bindings.runtime.protocol.spec import ProtocolTables
from mcp_bindings.runtime.protocol.tool_catalog import TOOLS_LIST_CHANGED, ToolCatalog
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.jsonrpc import json_object
from mcp_bindings.runtime.server.subscriptions import RESOURCE_UPDATED, Subscriptions

if TYPE_CHECKING:
    from mcp_bindings.runtime.rpc.session import Session
    from mcp_bindings.runtime.server.bus import NotificationBus
    from mcp_bindings.runtime.server.plugins import Extension
    from mcp_bindings.runtime.server.runtime import ServerRuntime
    from mcp_bindings.runtime.server.seam import ServerFeature
    from mcp_bindings.runtime.server.stubs import ServerStub

__all__ = ["LIST_FILTER_FIELDS", "Listener", "ServerHost", "host_for", "server_capabilities", "server_methods"]

log = logs.logger("notifications")

T = TypeVar("T")

LIST_FILTER_FIELDS = {task_names.NOTIFICATIONS_TASKS: "taskId"}  # the tasks extension (`tasks.server.extension`)


@dataclass(eq=False)
class Listener:
    """One open `subscriptions/listen` stream."""

    session: Session
    subscription_id: Any  # the listen request's id
    methods: dict[str, Any]  # notification method -> filter value (True, or the URIs / ids it takes)
    meta_key: str | None  # where the subscription id goes in each notification's `_meta`

    def wants(self, method: str, params: Any) -> bool:
        wanted = self.methods.get(method)
        if wanted is None:
            return False
        if isinstance(wanted, list | Set):
            field = LIST_FILTER_FIELDS.get(method, "uri")
            return (params.get(field) if isinstance(params, dict) else None) in wanted
        return True


@dataclass(eq=False)
class ServerHost:
    """The state one server object's connections share."""

    secret: bytes | None = None
    connections: weakref.WeakSet[ServerRuntime] = field(default_factory=weakref.WeakSet)
    listeners: set[Listener] = field(default_factory=set)
    # The resource subscriptions of every connection and listen stream (`subscriptions.watch`: the hook).
    subscriptions: Subscriptions = field(default_factory=Subscriptions)
    previous_secret: bytes | None = None  # still opens states for a grace period (rotation)
    bus: NotificationBus | None = None  # other workers' share of broadcasts (None: this process only)
    secret_problem: str | None = None  # why the configured secret was not used (too short)
    # The features on the dispatch seam (`seam`): made on the first connection (`ServerRuntime`);
    # `use` adds one of the user's.
    features: list[ServerFeature] | None = None
    added: list[ServerFeature] = field(default_factory=list["ServerFeature"])
    # The extensions registered on this server (`server.plugins.extend`): explicitly, or discovered
    # through the entry point group on the first connection.
    extensions: list[Extension] = field(default_factory=list["Extension"])
    # The server's custom and extension methods (`register_method`, `use_extension`).
    methods: Methods | None = None
    # The server's one tool catalog: the latest definitions listed to any connection, or declared
    # (`server.tool_schemas`); read by the tool checks and the stateless wire's header checks.
    tool_catalog: ToolCatalog = field(default_factory=ToolCatalog)
    # The output check of results and what it remembers of large ones (`protocol.result_checks`).
    results: ResultChecks = field(default_factory=ResultChecks)
    # What each feature keeps on the host, by its type (`state_of`): the task service of the tasks
    # plug-in, the scale-out plug-in's forwarder and replay logs, a third-party extension's state.
    _state: dict[type[Any], Any] = field(default_factory=dict[type[Any], Any])
    _sealer: RequestStateSealer | None = None

    def state_of(self, kind: type[T]) -> T:
        """The state of type `kind` this host keeps for a feature, made by `kind()` on first use."""
        found = self._state.get(kind)
        if found is None:
            found = self._state[kind] = kind()
        return cast("T", found)

    def find(self, kind: type[T]) -> T | None:
        """The state of type `kind` kept here, if any (nothing is made)."""
        return cast("T | None", self._state.get(kind))

    def keep(self, kind: type[T], value: T | None) -> None:
        """Keep `value` as this host's state of type `kind` (None: drop it)."""
        if value is None:
            self._state.pop(kind, None)
        else:
            self._state[kind] = value

    def methods_for(self, server: ServerStub) -> Methods:
        """The server's custom methods, made on first use."""
        if self.methods is None:
            self.methods = Methods("server", server.protocol)
        return self.methods

    def list_changed(self, method: str) -> None:
        """A list of the server changed (a `notifications/*/list_changed` broadcast, from this worker
        or another): the one place the tool catalog is invalidated."""
        if method == TOOLS_LIST_CHANGED:
            self.tool_catalog.changed()

    def disconnect(self, runtime: ServerRuntime) -> None:
        """A connection ended (session closed or expired, transport gone): off the broadcast list,
        its resource subscriptions let go."""
        self.connections.discard(runtime)
        self.subscriptions.drop(runtime)

    def open_listener(self, listener: Listener) -> None:
        """A `subscriptions/listen` stream opened: it gets what it opted in to, and holds the URIs
        of its `resourceSubscriptions`."""
        self.listeners.add(listener)
        uris = listener.methods.get(RESOURCE_UPDATED)
        if isinstance(uris, list):
            self.subscriptions.replace(listener, [uri for uri in uris if isinstance(uri, str)])
            # delivered as the subscriptions answer for it: what their gate (an app's `Access`) shows it now
            listener.methods[RESOURCE_UPDATED] = self.subscriptions.of(listener)

    def close_listener(self, listener: Listener) -> None:
        """A listen stream closed (or can no longer be written to): its URIs let go."""
        self.listeners.discard(listener)
        self.subscriptions.drop(listener)

    def use(self, feature: ServerFeature) -> None:
        """Add a feature to the dispatch seam of this server's connections. Register it before the
        server serves: the plans already built (per connection, per version) keep what they had."""
        self.added.append(feature)
        if self.features is not None:
            self.features.append(feature)

    @property
    def sealer(self) -> RequestStateSealer:
        """Seals `requestState`; one key per server object, so every connection can open it. The
        secret: the server's `request_state_secret`, else one configured (`configure_secrets`),
        else `MCP_REQUEST_STATE_SECRET`; the previous one likewise."""
        if self._sealer is None:
            try:
                current, previous = secrets_from_env()
            except SecretError as exc:  # the HTTP app refuses to start on it; elsewhere: logged, a random key
                log.error("requestState secret not used: %s", exc)
                self.secret_problem = str(exc)
                current = previous = None
            self._sealer = RequestStateSealer(self.secret or current, previous=self.previous_secret or previous)
        return self._sealer

    def configure_secrets(self, secret: bytes | None, previous: bytes | None = None) -> None:
        """Set the sealing secret (and the previous one) where the server object names none."""
        if secret and not self.secret:
            self.secret = secret
            self._sealer = None
        if previous:
            self.previous_secret = previous
            self._sealer = None


_HOSTS: dict[int, ServerHost] = {}


def host_for(server: ServerStub) -> ServerHost:
    """The host of a server object, made on first use and dropped with the object."""
    host = _HOSTS.get(id(server))
    if host is None:
        host = _HOSTS[id(server)] = ServerHost(server.request_state_secret)
        weakref.finalize(server, _HOSTS.pop, id(server), None)
    return host


def server_methods(server: Any) -> Methods | None:
    """The custom methods a server registered (kept by its host; None: none yet)."""
    return host_for(server).methods


def server_capabilities(server: Any, protocol: ProtocolTables, capabilities: dict[str, Any]) -> dict[str, Any]:
    """What a server advertises to a client of `protocol` (`peer.Lifecycle.capabilities_for`): its
    declared and registered extensions under `extensions` (2026-07-28) or `experimental` (before)."""
    methods = server_methods(server)
    declared = json_object(server.capabilities).get(EXTENSIONS)
    if methods is None and not declared:
        return capabilities
    ids = {**json_object(declared), **(methods.extensions if methods is not None else {})}
    if not protocol.info.stateless:  # the tasks extension is of the stateless era; before it, tasks are core
        ids.pop(TASKS_EXTENSION, None)
    return placed(protocol, "server", capabilities, ids)
