"""The resource subscriptions of one server's clients, kept by its host (`ServerHost.subscriptions`),
whichever era they came in: the URIs each holder subscribed to, a handshake connection
(`resources/subscribe`, recorded once the request succeeded; let go by `resources/unsubscribe` or when
the connection ends) or a `subscriptions/listen` stream (its `resourceSubscriptions`; let go when the
stream closes). Resource updates go where these records say (`notifications.wants`, the listen
streams' filters).

The hook: `watch(watcher)` registers `watcher(uri, holders)`, called whenever a holder subscribes to
`uri` or lets go of it, with how many holders it has now (1 after the first came, 0 after the last
went); told of every URI held at the time it registers. The proxy app subscribes at its remote
server through it (`app.proxy`)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Set
from dataclasses import dataclass, field
from typing import Any

from mcp_bindings.runtime.rpc import logs
from mcp_bindings.v2026_07_28 import names as v2026

__all__ = ["RESOURCE_UPDATED", "Subscriptions", "Watcher"]

log = logs.logger("notifications")

RESOURCE_UPDATED = v2026.NOTIFICATIONS_RESOURCES_UPDATED
Watcher = Callable[[str, int], None]  # (uri, how many holders it has now)
_NONE: frozenset[str] = frozenset()


@dataclass(eq=False)
class Subscriptions:
    """Who holds which URI (a holder: a connection's `ServerRuntime`, or a listen stream's `Listener`)."""

    _held: dict[Any, set[str]] = field(init=False, default_factory=dict[Any, set[str]])
    _holders: dict[str, int] = field(init=False, default_factory=dict[str, int])  # uri -> how many holders
    _watchers: list[Watcher] = field(init=False, default_factory=list[Watcher])

    def of(self, holder: Any) -> Set[str]:
        """The URIs `holder` subscribed to."""
        return self._held.get(holder, _NONE)

    def holders(self, uri: str) -> int:
        return self._holders.get(uri, 0)

    def add(self, holder: Any, uri: str) -> None:
        held = self._held.setdefault(holder, set())
        if uri not in held:
            held.add(uri)
            self._count(uri, 1)

    def remove(self, holder: Any, uri: str) -> None:
        held = self._held.get(holder)
        if held is not None and uri in held:
            held.discard(uri)
            if not held:
                del self._held[holder]
            self._count(uri, -1)

    def replace(self, holder: Any, uris: Collection[str]) -> None:
        """`holder` holds exactly `uris` from now on (a listen stream opened, a shared session's record)."""
        wanted = set(uris)
        for uri in sorted(self.of(holder) - wanted):
            self.remove(holder, uri)
        for uri in sorted(wanted - self.of(holder)):
            self.add(holder, uri)

    def drop(self, holder: Any) -> None:
        """Everything `holder` held is let go (its connection ended, its stream closed)."""
        self.replace(holder, ())

    def watch(self, watcher: Watcher) -> Callable[[], None]:
        """Call `watcher(uri, holders)` on every change from now on (and now, for each URI held);
        returns what stops it."""
        self._watchers.append(watcher)
        for uri, holders in list(self._holders.items()):
            self._tell(watcher, uri, holders)

        def unwatch() -> None:
            if watcher in self._watchers:
                self._watchers.remove(watcher)

        return unwatch

    def _count(self, uri: str, delta: int) -> None:
        holders = self._holders.get(uri, 0) + delta
        if holders:
            self._holders[uri] = holders
        else:
            self._holders.pop(uri, None)
        for watcher in list(self._watchers):
            self._tell(watcher, uri, holders)

    @staticmethod
    def _tell(watcher: Watcher, uri: str, holders: int) -> None:
        try:
            watcher(uri, holders)
        except Exception:  # a watcher's bug must not fail the client's request
            log.exception("a resource subscription watcher failed on %s", uri)
