"""Per-client shares of the HTTP server's shared bounds: what one client holds of a resource every
client draws on (sessions, `subscriptions/listen` streams, requests being answered), counted by
client and refused past the client's share, so that one client reaching its bound leaves the rest
for the others.

A client is its authenticated principal where there is one, else its IP as the HTTP server reports
it (`client_key`): one client's many connections count together; behind a reverse proxy the
clients it forwards share its address (authenticate them). A refusal is HTTP 429 with JSON-RPC
`LIMIT_REACHED` (-32050), a message naming the bound, and `data: {"bound": <option>, "limit": N}`.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from mcp_bindings.runtime.http.resume import error_response
from mcp_bindings.runtime.rpc.errors import LIMIT_REACHED

__all__ = ["PerClient", "client_key"]


def client_key(principal: str | None, address: str | None) -> str | None:
    """Who counts as one client: its principal, else its IP (None when neither is known)."""
    return f"principal:{principal}" if principal is not None else address


class PerClient:
    """What each client holds of one resource, against `limit` per client (`bound`: the option)."""

    __slots__ = ("_held", "advice", "bound", "limit", "what")

    def __init__(self, bound: str, limit: int, what: str, advice: str) -> None:
        self.bound = bound
        self.limit = limit
        self.what = what  # e.g. "sessions open"
        self.advice = advice  # what the client can do, e.g. "close one first"
        self._held: dict[str | None, int] = {}

    def held(self, client: str | None) -> int:
        return self._held.get(client, 0)

    def refusal(self, request_id: Any, client: str | None) -> Response | None:
        """The 429 answer when `client` holds its share already; None when it may take one more."""
        if self._held.get(client, 0) < self.limit:
            return None
        message = f"Refused: too many {self.what} for this client (at most {self.limit}, {self.bound}); {self.advice}"
        return error_response(request_id, LIMIT_REACHED, message, 429, {"bound": self.bound, "limit": self.limit})

    def take(self, client: str | None) -> None:
        self._held[client] = self._held.get(client, 0) + 1

    def give_back(self, client: str | None) -> None:
        left = self._held.pop(client, 0) - 1
        if left > 0:
            self._held[client] = left
        elif not self._held:  # an emptied dict keeps its table (allocated at the load's peak)
            self._held.clear()
