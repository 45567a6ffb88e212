"""Shared state in Redis (the `redis` extra: redis-py's asyncio client).

Keys live under one prefix (default `mcp:`), so several deployments can share a Redis database:

* `<prefix>bus`: the pub/sub channel of broadcasts. A message is JSON `{"o": worker, "m": method,
  "p": params}`; a worker skips its own (its host delivered them already). Pub/sub is fire and
  forget: a worker that is disconnected while a broadcast is published misses it (list changes and
  resource updates are hints; a client re-reads the list or resource when it reconnects).
* `<prefix>bus:<worker id>`: the pub/sub channel of messages to one worker (`send_to`), same format.
* `<prefix>session:<id>`: a handshake session's record (JSON: what any worker needs to serve it,
  `http_sessions.SessionRecord`, and `"worker"`, the one that wrote it last), expiring with the
  session's idle timeout, renewed by every request (read with GETEX).
* `<prefix>stream:<id>`: the worker holding a handshake session's one GET stream (set in one step
  when free, renewed while the stream is open, deleted when it closes; a claim whose worker no
  longer listens to its mail is taken over at once).
* `<prefix>replays:<id>`: the held SSE events of a handshake session, one hash field per worker that
  drained holding some (each bounded like that worker's log: `ReplayLimits` events and bytes per
  session), expiring with the newest event of any (`ReplayLimits.ttl_seconds`).
* `<prefix>task:...`: the task store (`redis_tasks.RedisTaskStore`).
* `<prefix>worker:<id>`: this worker's lease, renewed every third of `lease_s` while the bus runs and
  deleted when the worker closes; the task store reports the unfinished tasks of a worker whose lease
  has lapsed (killed, or cut off from Redis for that long) as failed.

Losing Redis mid-run: what needs it (a broadcast's fan-out, a task request) fails with -32603 naming
Redis (`BackendUnavailable`); requests that need no shared state go on; the bus reconnects with
exponential backoff (0.1 s doubling to 5 s) and readiness reports 503 meanwhile.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

import anyio
import orjson

from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.scaleout.attach import Attachable
from mcp_bindings.runtime.scaleout.backends.base import Deliver
from mcp_bindings.runtime.server.bus import BackendUnavailable
from mcp_bindings.runtime.tasks.core.store import TaskStore

if TYPE_CHECKING:
    from redis.asyncio import Redis

log = logs.logger("backends.redis")

BACKOFF_START_S = 0.1
BACKOFF_MAX_S = 5.0
LEASE_S = 15.0  # a worker's lease (`MCP_WORKER_LEASE_SECONDS`)

# A session's GET stream claim, set (and renewed) in one step when it is free, this worker's, or held
# by ARGV[3], the worker seen to have stopped; else the holder is returned.
_CLAIM = """
local held = redis.call('GET', KEYS[1])
if (not held) or held == ARGV[1] or held == ARGV[3] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return false
end
return held
"""
# A draining worker's snapshot of a session's held events, beside other workers' (one hash field per
# worker); the hash lives as long as its longest-lived snapshot.
_HAND_OVER = """
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def _where(url: str) -> str:
    """The URL without its credentials, for messages."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}"


class RedisBackend(Attachable):
    shared = True

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "mcp:",
        connect_timeout_s: float = 2.0,
        timeout_s: float = 5.0,
        client: Redis | None = None,
        lease_s: float = LEASE_S,
    ) -> None:
        self.url = url
        self.where = _where(url)
        self.prefix = prefix
        self.worker_id = f"{secrets.randbits(31):08x}"  # names its event ids too (`http_resume.worker_space`)
        self._connect_timeout_s = connect_timeout_s
        self._timeout_s = timeout_s
        self._client = client
        self._bus_up = False
        self.lease_s = lease_s
        self.leasing = False  # this worker's lease is held: the tasks it runs are recorded as its own

    @property
    def client(self) -> Redis:
        if self._client is None:
            try:
                from redis.asyncio import Redis
            except ImportError:  # pragma: no cover - the extra is missing
                raise BackendUnavailable(
                    "the Redis backend needs the `redis` extra: pip install 'mcp-bindgen[redis]'"
                ) from None
            self._client = Redis.from_url(
                self.url, socket_connect_timeout=self._connect_timeout_s, socket_timeout=self._timeout_s
            )
        return self._client

    def key(self, kind: str, name: str) -> str:
        """The Redis key of `name` (a session, a worker, a task, ...) of `kind`, under this backend's prefix."""
        return f"{self.prefix}{kind}:{name}"

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Around what uses Redis: its errors (and the network's) become `BackendUnavailable` (-32603
        naming Redis)."""
        from redis.exceptions import RedisError

        try:
            yield
        except (RedisError, OSError) as exc:
            raise BackendUnavailable(
                f"shared state unavailable (Redis at {self.where}: {exc or type(exc).__name__}); retry later"
            ) from None

    async def start(self) -> None:
        with self.guard():
            await self.client.ping()  # pyright: ignore[reportUnknownMemberType]

    async def aclose(self) -> None:
        if self._client is not None and self.leasing:
            from redis.exceptions import RedisError

            self.leasing = False
            try:  # a worker that stops runs no task any more: the others report its tasks failed at once
                with anyio.fail_after(self._connect_timeout_s):
                    await self._client.delete(self.key("worker", self.worker_id))  # pyright: ignore[reportUnknownMemberType]
            except (RedisError, OSError, TimeoutError):
                pass
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def ready(self) -> str | None:
        from redis.exceptions import RedisError

        try:
            with anyio.fail_after(self._connect_timeout_s):
                await self.client.ping()  # pyright: ignore[reportUnknownMemberType]
        except (RedisError, OSError, TimeoutError) as exc:
            return f"Redis at {self.where} unreachable: {exc or type(exc).__name__}"
        if not self._bus_up:
            return f"not subscribed to the notification bus at {self.where} yet"
        return None

    # -- the bus -------------------------------------------------------------------------------

    @property
    def channel(self) -> str:
        return f"{self.prefix}bus"

    async def publish(self, method: str, data: Any) -> None:
        message = orjson.dumps({"o": self.worker_id, "m": method, "p": data})
        with self.guard():
            await self.client.publish(self.channel, message)  # pyright: ignore[reportUnknownMemberType]

    @property
    def mailbox(self) -> str:
        """This worker's own channel (`send_to`)."""
        return f"{self.channel}:{self.worker_id}"

    async def send_to(self, worker_id: str, method: str, data: Any) -> bool:
        message = orjson.dumps({"o": self.worker_id, "m": method, "p": data})
        with self.guard():
            receivers: Any = await self.client.publish(f"{self.channel}:{worker_id}", message)  # pyright: ignore[reportUnknownMemberType]
        return bool(receivers)

    async def listens(self, worker_id: str) -> bool:
        with self.guard():
            counts: Any = await self.client.pubsub_numsub(f"{self.channel}:{worker_id}")  # pyright: ignore[reportUnknownMemberType]
        return bool(counts and int(counts[0][1]))

    async def run_bus(self, deliver: Deliver) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(self._renew_lease)
            await self._subscribe(deliver)

    async def _subscribe(self, deliver: Deliver) -> None:
        from redis.exceptions import RedisError

        delay = BACKOFF_START_S
        while True:
            pubsub = self.client.pubsub()  # pyright: ignore[reportUnknownMemberType]
            try:
                await pubsub.subscribe(self.channel, self.mailbox)  # pyright: ignore[reportUnknownMemberType]
                if not self._bus_up:
                    log.info("subscribed to %s at %s", self.channel, self.where)
                self._bus_up = True
                delay = BACKOFF_START_S
                while True:
                    message: Any = await pubsub.get_message(  # pyright: ignore[reportUnknownMemberType]
                        ignore_subscribe_messages=True, timeout=30.0
                    )
                    if message is not None and message.get("type") == "message":
                        await self._received(message.get("data"), deliver)
            except (RedisError, OSError) as exc:
                if self._bus_up:
                    log.warning("notification bus lost (Redis at %s: %s); reconnecting", self.where, exc)
                self._bus_up = False
            finally:
                with anyio.CancelScope(shield=True):
                    try:
                        await pubsub.aclose()  # pyright: ignore[reportUnknownMemberType]
                    except (RedisError, OSError):
                        pass
            await anyio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX_S)

    async def _received(self, raw: Any, deliver: Deliver) -> None:
        try:
            message = orjson.loads(raw)
            origin, method, params = message["o"], message["m"], message.get("p")
        except (orjson.JSONDecodeError, TypeError, KeyError):
            log.warning("ignored a malformed message on %s", self.channel)
            return
        if origin == self.worker_id or not isinstance(method, str):
            return
        try:
            await deliver(method, params)
        except Exception:
            log.exception("delivering %s from worker %s failed", method, origin)

    # -- the worker's lease -------------------------------------------------------------------

    async def _renew_lease(self) -> None:
        from redis.exceptions import RedisError

        while True:
            try:
                await self.client.set(self.key("worker", self.worker_id), b"1", px=max(1, int(self.lease_s * 1000)))  # pyright: ignore[reportUnknownMemberType]
                self.leasing = True
            except (RedisError, OSError) as exc:
                log.warning("worker lease not renewed (Redis at %s: %s)", self.where, exc)
            await anyio.sleep(self.lease_s / 3)

    async def alive(self, worker_id: str) -> bool:
        """Whether `worker_id` holds its lease (`BackendUnavailable` when Redis cannot say)."""
        if worker_id == self.worker_id and self.leasing:
            return True
        with self.guard():
            return bool(await self.client.exists(self.key("worker", worker_id)))  # pyright: ignore[reportUnknownMemberType]

    # -- session records ------------------------------------------------------------------------

    async def put(self, session_id: str, ttl_s: float, record: Mapping[str, Any] | None = None) -> None:
        value = orjson.dumps({**(record or {}), "worker": self.worker_id})
        with self.guard():
            await self.client.set(self.key("session", session_id), value, px=max(1, int(ttl_s * 1000)))  # pyright: ignore[reportUnknownMemberType]

    async def record(self, session_id: str, ttl_s: float | None = None) -> dict[str, Any] | None:
        key = self.key("session", session_id)
        with self.guard():
            if ttl_s is None:
                value: Any = await self.client.get(key)  # pyright: ignore[reportUnknownMemberType]
            else:  # read and renew in one round trip
                value = await self.client.getex(key, px=max(1, int(ttl_s * 1000)))  # pyright: ignore[reportUnknownMemberType]
        if not isinstance(value, bytes):
            return None
        try:
            decoded = orjson.loads(value)
        except orjson.JSONDecodeError:
            decoded = None
        if not isinstance(decoded, dict):
            log.warning("ignored a malformed session record %s", key)
            return None
        return cast("dict[str, Any]", decoded)

    async def holder(self, session_id: str) -> str | None:
        found = await self.record(session_id)
        worker = found.get("worker") if found is not None else None
        return worker if isinstance(worker, str) else None

    async def drop(self, session_id: str) -> None:
        with self.guard():
            await self.client.delete(self.key("session", session_id))  # pyright: ignore[reportUnknownMemberType]

    # -- a session's one GET stream ----------------------------------------------------------------

    async def claim_stream(self, session_id: str, ttl_s: float) -> str | None:
        key, px = self.key("stream", session_id), max(1, int(ttl_s * 1000))
        with self.guard():
            holder: Any = await self.client.eval(_CLAIM, 1, key, self.worker_id, px, "")  # pyright: ignore[reportUnknownMemberType]
            if holder is None:
                return None
            other = holder.decode() if isinstance(holder, bytes) else str(holder)
            if await self.listens(other):
                return other
            # Its worker is gone: take the claim over, unless a third worker just did.
            holder = await self.client.eval(_CLAIM, 1, key, self.worker_id, px, other)  # pyright: ignore[reportUnknownMemberType]
        if holder is None:
            log.info("took over the GET stream of session %s... from worker %s, which stopped", session_id[:8], other)
            return None
        return holder.decode() if isinstance(holder, bytes) else str(holder)

    async def release_stream(self, session_id: str) -> None:
        with self.guard():
            await self.client.eval(_RELEASE, 1, self.key("stream", session_id), self.worker_id)  # pyright: ignore[reportUnknownMemberType]

    # -- replay logs handed over by a draining worker ----------------------------------------------

    async def hand_over(self, session_id: str, snapshot: bytes, ttl_s: float) -> None:
        key, px = self.key("replays", session_id), max(1, int(ttl_s * 1000))
        with self.guard():
            await self.client.eval(_HAND_OVER, 1, key, self.worker_id, snapshot, px)  # pyright: ignore[reportUnknownMemberType]

    async def handed_over(self, session_id: str) -> list[bytes]:
        with self.guard():
            values: Any = await self.client.hvals(self.key("replays", session_id))  # pyright: ignore[reportUnknownMemberType]
        return [v for v in values if isinstance(v, bytes)] if isinstance(values, list) else []

    # -- tasks -------------------------------------------------------------------------------------

    def task_store(self) -> TaskStore:
        from mcp_bindings.runtime.scaleout.backends.redis_tasks import RedisTaskStore

        return RedisTaskStore(self)
