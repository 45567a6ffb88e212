"""A recording cut into exchanges: each message the client sent (request or notification) with what
the server sent because of it, in order (the notifications and server-to-client requests sent while
that request was open: its `episode`, then the response), and what the server sent while none of
the client's requests was open (the session's, not a call's: `after` the exchange it followed, the
`prologue` before any); and why an incoming request got no recorded answer (`Unmatched`). What the
replays (`replay_server`, `crossed_replay`) share.

Over HTTP the recording says which request a server message belongs to (`http.related`: the request
whose response stream carried it; null for the GET stream, the session's): it is filed under that
request while it is open, else it is the session's. Elsewhere (stdio) only when it was sent is
known: one sent while a request was open is filed under the newest open request; one sent once the
calls were answered is the session's, never the last call's, however soon it followed its answer
(a server request there is not something that call asked of the client)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcp_bindings.runtime.recording.compare import Difference
from mcp_bindings.runtime.recording.session_file import Entry, Recording


@dataclass
class Exchange:
    """One message the client sent and what the server sent because of it."""

    entry: Entry
    episode: list[Entry] = field(default_factory=lambda: [])  # sent while the request was open
    response: Entry | None = None
    # Sent after it while none of the client's requests was open: the session's, not this exchange's
    # (after a notification: what the server did on hearing it, e.g. ask for the roots that changed).
    after: list[Entry] = field(default_factory=lambda: [])
    played: int = 0

    @property
    def message(self) -> dict[str, Any]:
        return self.entry.message or {}

    @property
    def is_request(self) -> bool:
        return self.entry.is_request


@dataclass(frozen=True)
class Unmatched:
    """Why an incoming request got no recorded answer."""

    code: int
    message: str
    nearest: Exchange | None = None
    differences: tuple[Difference, ...] = ()


def exchanges_of(recording: Recording) -> tuple[list[Entry], list[Exchange]]:
    """The server messages sent before the client said anything, and the exchanges in order."""
    prologue: list[Entry] = []
    exchanges: list[Exchange] = []
    open_requests: dict[Any, Exchange] = {}
    last: Exchange | None = None
    for entry in recording.entries:
        if entry.message is None:
            continue
        if entry.dir == "client":
            if entry.is_request or entry.is_notification:
                last = Exchange(entry)
                exchanges.append(last)
                if entry.is_request:
                    open_requests[entry.id] = last
            continue
        if entry.is_response:
            owner = open_requests.pop(entry.id, None)
            if owner is not None:
                owner.response = entry
            continue
        # A notification or a request of the server's: it belongs to the request the recording says,
        # else to the newest open request; else to the session, after what the client said last.
        owner = _owner(entry, open_requests)
        if owner is not None:
            owner.episode.append(entry)
        else:
            (last.after if last is not None else prologue).append(entry)
    return prologue, exchanges


def _owner(entry: Entry, open_requests: dict[Any, Exchange]) -> Exchange | None:
    """The open request a server message belongs to (None: the session's)."""
    http = entry.http
    if http is not None and "related" in http:  # the response stream that carried it says
        related = http["related"]
        return open_requests.get(related) if isinstance(related, (str, int)) else None
    return next(reversed(open_requests.values()), None)
