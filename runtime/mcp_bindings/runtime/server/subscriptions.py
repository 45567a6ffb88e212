"""The resource subscriptions of one server's clients, kept by its host (`ServerHost.subscriptions`),
whichever era they came in: the URIs each holder subscribed to, a handshake connection
(`resources/subscribe`, recorded once the request succeeded; let go by `resources/unsubscribe` or when
the connection ends) or a `subscriptions/listen` stream (its `resourceSubscriptions`; let go when the
stream closes). Resource updates go where these records say (`notifications.wants`, the listen
streams' filters).

The hook: `watch(watcher)` registers `watcher(uri, holders)`, called whenever a holder subscribes to
`uri` or lets go of it, with how many holders it has now (1 after the first came, 0 after the last
went); told of every URI held at the time it registers. The proxy app subscribes at its remote
server through it (`app.proxy`).

The gate: `gate`, where set (an app's `Access`), may refuse a holder's subscription request (`add`,
`remove`: the error is that request's answer, whoever serves it), and screens what `of` answers:
the URIs the holder may be told of now."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Set
from dataclasses import dataclass, field
from typing import Any, Protocol

from mcp_bindings.runtime.rpc import logs
from mcp_bindings.v2026_07_28 import names as v2026

__all__ = ["RESOURCE_UPDATED", "Gate", "Subscriptions", "Watcher"]

log = logs.logger("notifications")

RESOURCE_UPDATED = v2026.NOTIFICATIONS_RESOURCES_UPDATED
Watcher = Callable[[str, int], None]  # (uri, how many holders it has now)
_NONE: frozenset[str] = frozenset()


class Gate(Protocol):
    """Who may hold which URI (see the module)."""

    def admit(self, holder: Any, uri: str, subscribing: bool) -> None:
        """Raise the error a holder's (un)subscription request answers where it may not make it."""
        ...

    def shows(self, holder: Any, uri: str) -> bool:
        """Whether `holder` may be told now that `uri` changed."""
        ...


@dataclass(eq=False)
class Subscriptions:
    """Who holds which URI (a holder: a connection's `ServerRuntime`, or a listen stream's `Listener`)."""

    _held: dict[Any, set[str]] = field(init=False, default_factory=dict[Any, set[str]])
    _holders: dict[str, int] = field(init=False, default_factory=dict[str, int])  # uri -> how many holders
    _watchers: list[Watcher] = field(init=False, default_factory=list[Watcher])
    gate: Gate | None = None

    def of(self, holder: Any) -> Set[str]:
        """The URIs `holder` subscribed to (that it may be told of now, where a gate is set)."""
        held = self._held.get(holder, _NONE)
        return held if self.gate is None or not held else _Shown(held, holder, self.gate)

    def holders(self, uri: str) -> int:
        return self._holders.get(uri, 0)

    def add(self, holder: Any, uri: str) -> None:
        """`holder` subscribed to `uri` (a request: the gate may refuse it)."""
        if self.gate is not None:
            self.gate.admit(holder, uri, True)
        self._add(holder, uri)

    def remove(self, holder: Any, uri: str) -> None:
        """`holder` unsubscribed from `uri` (a request: the gate may refuse it)."""
        if self.gate is not None:
            self.gate.admit(holder, uri, False)
        self._remove(holder, uri)

    def _add(self, holder: Any, uri: str) -> None:
        held = self._held.setdefault(holder, set())
        if uri not in held:
            held.add(uri)
            self._count(uri, 1)

    def _remove(self, holder: Any, uri: str) -> None:
        held = self._held.get(holder)
        if held is not None and uri in held:
            held.discard(uri)
            if not held:
                del self._held[holder]
            self._count(uri, -1)

    def replace(self, holder: Any, uris: Collection[str]) -> None:
        """`holder` holds exactly `uris` from now on (a listen stream opened, a shared session's record:
        not requests, so not the gate's to refuse)."""
        wanted = set(uris)
        held = self._held.get(holder, _NONE)
        for uri in sorted(held - wanted):
            self._remove(holder, uri)
        for uri in sorted(wanted - held):
            self._add(holder, uri)

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


class _Shown(Set[str]):
    """The URIs a holder subscribed to that the gate shows it now (`Subscriptions.of`)."""

    __slots__ = ("gate", "held", "holder")

    def __init__(self, held: Set[str], holder: Any, gate: Gate) -> None:
        self.held, self.holder, self.gate = held, holder, gate

    def __contains__(self, uri: object) -> bool:
        return uri in self.held and isinstance(uri, str) and self.gate.shows(self.holder, uri)

    def __iter__(self) -> Iterator[str]:
        return (uri for uri in list(self.held) if self.gate.shows(self.holder, uri))

    def __len__(self) -> int:
        return sum(1 for _ in self)
