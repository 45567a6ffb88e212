"""Per-client shares of the HTTP server's shared bounds: what one client holds of a resource every
client draws on (sessions, `subscriptions/listen` streams, requests being answered), counted by
client and refused past the client's share, so that one client reaching its bound leaves the rest
for the others.

A client is its authenticated principal where there is one, else its IP (`client_key`): one
client's many connections count together. Its IP is the socket's peer, or, for a request from a
proxy named in `forwarded_allow_ips` (none by default), the address that proxy's `X-Forwarded-For`
names (`ClientAddress`); behind a proxy not named there the clients it forwards share its address.
A refusal is HTTP 429 with JSON-RPC `LIMIT_REACHED` (-32050), a message naming the bound, and
`data: {"bound": <option>, "limit": N}`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from starlette.responses import Response
from starlette.types import Scope

from mcp_bindings.runtime.http.resume import error_response
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.errors import LIMIT_REACHED

__all__ = ["UNVERIFIED", "ClientAddress", "PerClient", "client_key"]

log = logs.logger("http")

# The address of every request whose client address the HTTP server itself took from
# `X-Forwarded-For` (uvicorn's `proxy_headers`, on by default under `uvicorn.run`): the peer that
# sent it is unknown, so such requests count as one client.
UNVERIFIED = "forwarded-unverified"
_FORWARDED_FOR = b"x-forwarded-for"


def client_key(principal: str | None, address: str | None) -> str | None:
    """Who counts as one client: its principal, else its IP (None when neither is known)."""
    return f"principal:{principal}" if principal is not None else address


def _hop(value: str) -> str:
    """The host of one `X-Forwarded-For` entry (`1.2.3.4`, `1.2.3.4:5678`, `[::1]:80`, `::1`)."""
    value = value.strip()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class ClientAddress:
    """The client's IP for per-client bounds: the socket's peer (the ASGI scope's `client`, as the
    HTTP server reports it; not the port), or, where that peer is a proxy named in `trusted`
    (`HttpOptions.forwarded_allow_ips`: IPs, networks, or "*"), the right-most `X-Forwarded-For`
    entry that is not such a proxy. `X-Forwarded-For` from anyone else is ignored. A request whose
    address the HTTP server already rewrote from the header (the scope's client is one of its
    entries: uvicorn's `proxy_headers`) counts as `UNVERIFIED`, one client for all such requests."""

    __slots__ = ("_any", "_networks", "_warned")

    def __init__(self, trusted: Iterable[str] | str = ()) -> None:
        names = [n.strip() for n in trusted.split(",")] if isinstance(trusted, str) else [n.strip() for n in trusted]
        self._any = "*" in names
        self._networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for name in names:
            if name and name != "*":
                try:
                    self._networks.append(ipaddress.ip_network(name, strict=False))
                except ValueError:
                    raise ValueError(
                        f"forwarded_allow_ips: {name!r} is not an IP address or network (10.0.0.5, 10.0.0.0/8, *)"
                    ) from None
        self._warned = False

    def trusts(self, host: str | None) -> bool:
        """Whether `host` is a proxy whose `X-Forwarded-For` counts."""
        if self._any:
            return True
        if host is None or not self._networks:
            return False
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(ip in network for network in self._networks)

    def __call__(self, scope: Scope) -> str | None:
        client = scope.get("client")
        peer: str | None = client[0] if client else None
        forwarded = [v for k, v in scope.get("headers", ()) if k == _FORWARDED_FOR]
        if not forwarded:
            return peer
        hops = [_hop(h) for value in forwarded for h in value.decode("latin-1").split(",") if h.strip()]
        if peer in hops:  # the server in front of the app took the address from the header
            if not self._warned:
                self._warned = True
                log.warning(
                    "the HTTP server took a client address from X-Forwarded-For (uvicorn's proxy_headers): "
                    "such requests count as one client; run uvicorn with proxy_headers=False and name the "
                    "proxies in forwarded_allow_ips"
                )
            return UNVERIFIED
        if not hops or not self.trusts(peer):
            return peer
        for hop in reversed(hops):
            if not self.trusts(hop):
                return hop
        return hops[0]


@dataclass(slots=True, eq=False)
class PerClient:
    """What each client holds of one resource, against `limit` per client (`bound`: the option)."""

    bound: str
    limit: int
    what: str  # e.g. "sessions open"
    advice: str  # what the client can do, e.g. "close one first"
    _held: dict[str | None, int] = field(init=False, default_factory=dict[str | None, int])

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
