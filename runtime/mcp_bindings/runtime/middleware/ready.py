"""Ready-made middleware (`middleware.chain`): `Timing` (each request logged with its duration and
outcome, totals per method), `RateLimit` (a token bucket per client, `Call.client_key`: principal,
else IP, else connection)
and `Cache` (results of read-only requests kept for a while: resources, and tools the server
lists with `readOnlyHint`; at 2026-07-28 the result's own `ttlMs` / `cacheScope` hints decide)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

import orjson

from mcp_bindings.runtime.middleware.chain import Call, Next
from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.rpc.errors import LIMIT_REACHED, McpError
from mcp_bindings.v2026_07_28 import names as v2026

__all__ = ["Cache", "MethodTimes", "RateLimit", "Timing"]

log = logging.getLogger("mcp_bindings.runtime.middleware")


@dataclass
class MethodTimes:
    calls: int = 0
    errors: int = 0
    seconds: float = 0.0


class Timing:
    """Logs each request (`method target: 1.2 ms, ok` at `level`, with the session and protocol
    version; a resource URI without its query, fragment and userinfo) and keeps totals per method
    in `times`."""

    def __init__(self, logger: logging.Logger | None = None, level: int = logging.INFO) -> None:
        self.logger = logger or log
        self.level = level
        self.times: dict[str, MethodTimes] = {}

    async def __call__(self, call: Call, call_next: Next) -> Any:
        started = time.perf_counter()
        outcome = "ok"
        try:
            result = await call_next(call)
            if getattr(result, "is_error", None) is True:
                outcome = "tool error"
            return result
        except BaseException as exc:
            outcome = f"{type(exc).__name__}"
            raise
        finally:
            elapsed = time.perf_counter() - started
            times = self.times.setdefault(call.method, MethodTimes())
            times.calls += 1
            times.seconds += elapsed
            if outcome != "ok":
                times.errors += 1
            if self.logger.isEnabledFor(self.level):
                target = f" {call.recorded_target}" if call.target else ""  # a URI: without its query
                self.logger.log(
                    self.level,
                    "%s%s: %.1f ms, %s (session %s, %s)",
                    call.method,
                    target,
                    elapsed * 1e3,
                    outcome,
                    call.session.id,
                    call.protocol_version,
                )


class RateLimit:
    """At most `rate` requests per second per client (`Call.client_key`, or `key(call)`), with bursts
    up to `burst`; one more is refused with -32050 naming the limit and when to retry. `methods`:
    the methods it counts (default: tools/call)."""

    def __init__(
        self,
        rate: float,
        burst: int | None = None,
        *,
        methods: Collection[str] | None = (v2026.TOOLS_CALL,),
        key: Callable[[Call], str] | None = None,
        max_clients: int = 10_000,
    ) -> None:
        if rate <= 0:
            raise ValueError("RateLimit(rate=...) must be positive (requests per second)")
        self.rate = rate
        self.burst = float(burst if burst is not None else max(1, round(rate)))
        self.methods = None if methods is None else frozenset(methods)
        self.key = key or (lambda call: call.client_key)
        self.max_clients = max_clients
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, when)

    async def __call__(self, call: Call, call_next: Next) -> Any:
        key = self.key(call)
        now = time.monotonic()
        tokens, since = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - since) * self.rate)
        if tokens < 1:
            self._buckets[key] = (tokens, now)
            wait = (1 - tokens) / self.rate
            raise McpError(
                LIMIT_REACHED,
                f"Rate limit reached: at most {self.rate:g} {call.method} requests per second "
                f"(bursts of {self.burst:g}); retry in {wait:.2f} s",
                {"retryAfterSeconds": round(wait, 3)},
            )
        if key not in self._buckets and len(self._buckets) >= self.max_clients:
            self._buckets.pop(next(iter(self._buckets)))  # the oldest client seen goes first
        self._buckets[key] = (tokens - 1, now)
        return await call_next(call)


class Cache:
    """Keeps the results of read-only requests for `ttl` seconds: `resources/read`, and `tools/call`
    of the tools the server lists with `annotations.readOnlyHint` (learned from the `tools/list`
    results passing through, or named in `tools`). Keyed by the method and params (without
    `_meta`), and by the client (`Call.client_key`) unless the result says `cacheScope: "public"`
    (2026-07-28), whose `ttlMs`, where positive, is used instead of `ttl`. Error results are not
    kept. At most `max_entries` (the oldest go first)."""

    def __init__(self, ttl: float = 60.0, *, tools: Collection[str] = (), max_entries: int = 1000) -> None:
        self.ttl = ttl
        self.read_only: set[str] = set(tools)
        self.max_entries = max_entries
        self.methods = frozenset({v2026.RESOURCES_READ, v2026.TOOLS_CALL, v2026.TOOLS_LIST})
        self._entries: dict[tuple[str, str, str], tuple[float, Any]] = {}
        self.hits = 0
        self.misses = 0

    def clear(self) -> None:
        self._entries.clear()

    async def __call__(self, call: Call, call_next: Next) -> Any:
        if call.method == v2026.TOOLS_LIST:
            result = await call_next(call)
            self._learn(result)
            return result
        if call.method == v2026.TOOLS_CALL and call.target not in self.read_only:
            return await call_next(call)
        params = orjson.dumps(
            {k: v for k, v in versions.dump(call.params).items() if k != "_meta"}, option=orjson.OPT_SORT_KEYS
        ).decode()
        now = time.monotonic()
        for scope in ("public", call.client_key):
            entry = self._entries.get((call.method, params, scope))
            if entry is not None and entry[0] > now:
                self.hits += 1
                return entry[1]
        self.misses += 1
        result = await call_next(call)
        if getattr(result, "is_error", None) is not True:
            self._keep((call.method, params, call.client_key), now, result)
        return result

    def _keep(self, key: tuple[str, str, str], now: float, result: Any) -> None:
        ttl = self.ttl
        hinted = getattr(result, "ttl_ms", None)
        if isinstance(hinted, int) and hinted > 0:
            ttl = hinted / 1000
        if ttl <= 0:
            return
        if getattr(result, "cache_scope", None) == "public":
            key = (key[0], key[1], "public")
        if len(self._entries) >= self.max_entries:
            self._entries.pop(next(iter(self._entries)))
        self._entries[key] = (now + ttl, result)

    def _learn(self, listed: Any) -> None:
        for tool in getattr(listed, "tools", None) or ():
            annotations = getattr(tool, "annotations", None)
            if annotations is not None and getattr(annotations, "read_only_hint", None) is True:
                self.read_only.add(tool.name)
            else:
                self.read_only.discard(tool.name)
