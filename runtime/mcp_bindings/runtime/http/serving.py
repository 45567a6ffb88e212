"""Serving the Streamable HTTP app on uvicorn: what only the HTTP server can bound.

`serve_http(MyServer(), port=3001)` builds the app (`http.app.create_app`) and runs it until
interrupted; `uvicorn_config(app, host, port)` gives the same `uvicorn.Config` for running uvicorn
yourself. The config applies the app's connection limits (`HttpOptions`: `max_connections`,
`header_timeout_seconds`, `max_header_bytes`, `keep_alive_seconds`), and `_HeadDeadline`, mixed into
uvicorn's protocol class, adds what uvicorn lacks: a deadline and a size bound for a request's head,
and a bound on the connections one address holds open (`max_connections_per_address`), applied
when a connection opens, before anything of it is parsed. Every limit, its default and its option:
docs/security.md.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal

import anyio

from mcp_bindings.runtime.http.app import StreamableHTTPApp, create_app
from mcp_bindings.runtime.http.fairness import PerClient
from mcp_bindings.runtime.http.sessions import LOCAL_HOSTS
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.server.stubs import ServerStub

if TYPE_CHECKING:
    import socket

    import uvicorn

__all__ = ["running", "serve_http", "uvicorn_config"]

log = logs.logger("http")

START_SECONDS = 10.0  # `running`: for uvicorn to listen
STOP_SECONDS = 5.0  # `running`: for uvicorn to end


def _over_bound_answer(limit: int) -> bytes:
    """What a connection over its address's bound gets before it is closed: a plain 503."""
    body = (
        f"Service Unavailable: too many connections from this address (at most {limit}, max_connections_per_address)\n"
    ).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


class _HeadDeadline(asyncio.Protocol):
    """Mixed into uvicorn's HTTP protocol class (h11 or httptools): what uvicorn lacks, a deadline
    for a request's head (request line and headers) and a bound on its size. uvicorn arms no timer
    until a first response is complete (its keep-alive timer, disarmed by any byte received), so a
    client that sends half a request line and goes silent is otherwise kept forever.

    And a bound on the connections one address (the socket's peer IP, not the port; forwarded
    headers are not read before a request is parsed) holds open at once: one more is answered a
    plain 503 with `connection: close` and closed, before anything it sends is parsed, so that one
    address holding half-sent heads cannot take `max_connections` from every other client.
    `per_address` counts them (one per `uvicorn_config`, shared by its connections).

    The deadline runs from the connection's start and from the end of each response; when it
    passes while no request is being served (the head is incomplete, or the connection idles), the
    connection is closed. Bytes received while no request is being served count towards the head."""

    head_timeout: float = 30.0
    max_head_bytes: int = 64 * 1024
    per_address: PerClient | None = None  # None: no bound per address
    # uvicorn's protocol attributes this mixin uses
    cycle: Any
    transport: Any
    loop: Any

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._head_bytes = 0
        self._head_timer: asyncio.TimerHandle | None = None
        self._address: str | None = None
        bound = self.per_address
        if bound is not None:
            peer = transport.get_extra_info("peername")
            address = str(peer[0]) if isinstance(peer, tuple) and peer else None  # None: a Unix socket
            if address is not None and bound.held(address) >= bound.limit:
                log.info("connection from %s refused: %d open from that address already", address, bound.limit)
                transport.write(_over_bound_answer(bound.limit))
                transport.close()
                return
            if address is not None:
                bound.take(address)
                self._address = address
        # One timer per connection, checked lazily: a response's end only notes the time (arming a
        # timer per response and cancelling it at the next costs more than a small request's parse).
        self._head_since = self.loop.time()
        self._head_timer = self.loop.call_later(self.head_timeout, self._head_check)

    def data_received(self, data: bytes) -> None:
        if self.transport.is_closing():  # refused (over its address's bound) or being closed: not parsed
            return
        super().data_received(data)
        if not self._serving():
            self._head_bytes += len(data)
            if self._head_bytes > self.max_head_bytes and not self.transport.is_closing():
                log.info("request head over %d bytes: connection closed", self.max_head_bytes)
                self.transport.close()
        else:
            self._head_bytes = 0

    def on_response_complete(self) -> None:
        base: Any = super()  # uvicorn's protocol (after this mixin in the MRO)
        base.on_response_complete()
        self._head_bytes = 0
        self._head_since = self.loop.time()  # the next head's deadline runs from here

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        if self._address is not None and self.per_address is not None:
            self.per_address.give_back(self._address)
            self._address = None
        super().connection_lost(exc)

    def _serving(self) -> bool:
        """A request's head has arrived and its response is not complete."""
        return self.cycle is not None and not self.cycle.response_complete

    def _head_check(self) -> None:
        """The timer: close the connection if the deadline has passed while no request is being
        served, else check again when it can next pass."""
        self._head_timer = None
        if self.transport.is_closing():
            return
        delay = self.head_timeout  # while serving: the deadline restarts when the response ends
        if not self._serving():
            delay = self._head_since + self.head_timeout - self.loop.time()
            if delay <= 0:
                log.info("request head not received within %s s: connection closed", self.head_timeout)
                self.transport.close()
                return
        self._head_timer = self.loop.call_later(delay, self._head_check)


def uvicorn_config(
    app: StreamableHTTPApp,
    host: str = "127.0.0.1",
    port: int = 3001,
    *,
    log_level: str = "warning",
    http: Literal["auto", "h11", "httptools"] = "auto",
    loop: Literal["auto", "asyncio", "uvloop"] = "auto",
) -> uvicorn.Config:
    """The uvicorn `Config` that `serve_http` runs: the app's connection limits (`HttpOptions`:
    `max_connections`, `header_timeout_seconds`, `max_header_bytes`, `keep_alive_seconds`) applied
    to uvicorn. Run it with `uvicorn.Server(config)`, e.g. in a thread of your own."""
    import uvicorn
    from uvicorn.config import HTTP_PROTOCOLS, LOG_LEVELS
    from uvicorn.importer import import_from_string

    o = app.options
    # Access log lines are written at level info: below it (the default, "warning") uvicorn would
    # still build each line's arguments on every response. uvicorn's proxy-headers middleware is
    # off at every level: which X-Forwarded-For counts is the app's one setting
    # (`forwarded_allow_ips`, `http.fairness.ClientAddress`), whatever the log level.
    access_log = LOG_LEVELS.get(log_level.lower(), logging.INFO) <= logging.INFO
    base: type[asyncio.Protocol] = import_from_string(HTTP_PROTOCOLS[http])
    per_address = PerClient("max_connections_per_address", o.max_connections_per_address, "connections", "")
    protocol: type[asyncio.Protocol] = type(
        f"HeadDeadline{base.__name__}",
        (_HeadDeadline, base),
        {"head_timeout": o.header_timeout_seconds, "max_head_bytes": o.max_header_bytes, "per_address": per_address},
    )
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=access_log,
        proxy_headers=False,
        server_header=False,  # no `server: uvicorn` on every response: nothing needs it, and it fingerprints
        lifespan="on",
        http=protocol,
        loop=loop,
        ws="none",  # the app speaks no WebSocket
        # uvicorn answers 503 when connections (this one included) >= the limit, or running requests do.
        limit_concurrency=o.max_connections + 1,
        timeout_keep_alive=o.keep_alive_seconds,  # pyright: ignore[reportArgumentType]  # a float works (call_later)
        h11_max_incomplete_event_size=o.max_header_bytes,
    )


def serve_http(
    server: ServerStub,
    host: str = "127.0.0.1",
    port: int = 3001,
    path: str = "/mcp",
    *,
    log_level: str = "warning",
    http: Literal["auto", "h11", "httptools"] = "auto",
    loop: Literal["auto", "asyncio", "uvloop"] = "auto",
    wrap: Callable[[StreamableHTTPApp], Any] | None = None,
    sock: socket.socket | None = None,
    **options: Any,
) -> None:
    """`serve_http(MyServer(), port=3001)`: run the server on uvicorn until interrupted.

    `http` and `loop` choose uvicorn's HTTP parser and event loop; "auto" takes httptools and uvloop
    (both in the `http` extra) where installed, "h11" / "asyncio" the pure-Python ones. `wrap(app)`:
    the ASGI app uvicorn runs around the MCP app (e.g. `require_bearer`). `sock`: a bound socket to
    serve on instead of binding `port` (e.g. one inherited from the process that started this one)."""
    import uvicorn

    if host not in LOCAL_HOSTS and "allowed_hosts" not in options:
        log.warning(
            "binding %s: DNS-rebinding protection still only admits Host headers of %s", host, ", ".join(LOCAL_HOSTS)
        )
    app = create_app(server, path=path, **options)

    class Announcing(uvicorn.Server):
        """Says where it serves once it listens (the port it was given, or the one it got for 0)."""

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets=sockets)
            if self.started:
                print(f"serving MCP (Streamable HTTP) at {_url(self, host, port, app.endpoint)}", file=sys.stderr)
                sys.stderr.flush()

    config = uvicorn_config(app, host, port, log_level=log_level, http=http, loop=loop)
    if wrap is not None:
        config.app = wrap(app)
    try:
        Announcing(config).run(sockets=None if sock is None else [sock])
    except KeyboardInterrupt:  # as uvicorn.run: Ctrl-C ends the server quietly
        pass


@asynccontextmanager
async def running(app: Any, host: str = "127.0.0.1", port: int = 0) -> AsyncIterator[tuple[str, int]]:
    """Serve the ASGI `app` on uvicorn in this event loop until the block ends (`port` 0: a free
    one); yields the address it listens on. For the runtime's own tools (the recording proxy, the
    HTTP replay), not a production server: no limits beyond uvicorn's, no lifespan."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=2))
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
    stopped = anyio.Event()

    async def run() -> None:
        try:
            await server.serve([sock])
        finally:
            stopped.set()

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(run)
            with anyio.fail_after(START_SECONDS):
                while not server.started:
                    await anyio.sleep(0.01)
            try:
                yield sock.getsockname()[:2]
            finally:
                # uvicorn stopped mid-serve (cancelled) leaves the next server of the loop deaf: let it end.
                server.should_exit = True
                with anyio.move_on_after(STOP_SECONDS):
                    await stopped.wait()
                group.cancel_scope.cancel()
    finally:
        sock.close()


def _url(server: Any, host: str, port: int, path: str) -> str:
    """The URL a started uvicorn server serves `path` at."""
    for listener in getattr(server, "servers", ()):
        for sock in getattr(listener, "sockets", ()):
            port = sock.getsockname()[1]
            break
    name = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{name}:{port}{path}"
