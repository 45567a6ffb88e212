"""A recording cut into exchanges: each message the client sent (request or notification) with what
the server sent because of it, in order (the notifications and server-to-client requests sent while
that request was open, or after that notification, then the response); and why an incoming request
got no recorded answer (`Unmatched`). What the replays (`replay_server`, `crossed_replay`) share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcp_bindings.runtime.recording.compare import Difference
from mcp_bindings.runtime.recording.session_file import Entry, Recording


@dataclass
class Exchange:
    """One message the client sent and what the server sent because of it."""

    entry: Entry
    episode: list[Entry] = field(default_factory=lambda: [])
    response: Entry | None = None
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
        # A notification or a request of the server's: it belongs to the newest open request, else
        # to what the client said last.
        target = next(reversed(open_requests.values()), None) or last
        (target.episode if target is not None else prologue).append(entry)
    return prologue, exchanges
