"""Running the OAuth test stack in-process: uvicorn servers on 127.0.0.1 (ports bound first, so no
race), the test authorization server (`auth_server.AuthServer`), and an MCP server (the echo example)
behind `require_bearer`."""

from __future__ import annotations

import importlib.util
import socket
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import Any

import anyio
import uvicorn

from mcp_bindings.runtime.auth import AccessToken, JWTVerifier, RequestInfo, require_bearer
from mcp_bindings.runtime.auth.resource_server import BearerAuthMiddleware
from mcp_bindings.runtime.http.app import create_app
from tests.support import REPO_ROOT

from .auth_server import AuthServer, AuthServerOptions

START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0


class _Server(uvicorn.Server):
    def install_signal_handlers(self) -> None:  # the test process keeps its own handlers
        return None


def bind_local() -> tuple[socket.socket, str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock, f"http://127.0.0.1:{sock.getsockname()[1]}"


@asynccontextmanager
async def serve(app: Any, sock: socket.socket) -> AsyncIterator[None]:
    """Run `app` on uvicorn on an already bound socket until the block ends (bounded start and stop)."""
    config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=2)
    server = _Server(config)
    stopped = anyio.Event()

    async def run() -> None:
        try:
            await server.serve([sock])
        finally:
            stopped.set()

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        with anyio.fail_after(START_TIMEOUT):
            while not server.started:
                if stopped.is_set():
                    raise RuntimeError("uvicorn did not start")
                await anyio.sleep(0.01)
        try:
            yield
        finally:
            server.should_exit = True
            with anyio.move_on_after(STOP_TIMEOUT):
                await stopped.wait()
            group.cancel_scope.cancel()
    sock.close()


@cache
def echo_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("echo_server_example", REPO_ROOT / "examples" / "echo_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


READ, WRITE = "mcp:read", "mcp:write"


def read_write_policy(request: RequestInfo) -> Sequence[str]:
    """`tools/call` needs mcp:read and mcp:write; everything else mcp:read."""
    message = request.message
    if isinstance(message, dict) and message.get("method") == "tools/call":
        return (READ, WRITE)
    return (READ,)


class SwitchableVerifier:
    """Delegates to `current` (an authorization-server migration swaps it)."""

    def __init__(self, current: Any) -> None:
        self.current = current

    async def verify(self, token: str, *, resource: str) -> AccessToken:
        return await self.current.verify(token, resource=resource)


@dataclass
class Stack:
    auth: AuthServer
    app: BearerAuthMiddleware
    mcp_url: str
    rs_base: str
    verifier: SwitchableVerifier
    seen: list[AccessToken] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)  # every response status of the MCP server
    exits: AsyncExitStack | None = None

    async def add_auth_server(self, options: AuthServerOptions | None = None) -> AuthServer:
        """Start another authorization server (for migration tests)."""
        assert self.exits is not None
        sock, url = bind_local()
        other = AuthServer(url, options)
        await self.exits.enter_async_context(serve(other.app, sock))
        return other


class _Spy:
    """The MCP app as the middleware calls it: records `scope["auth"]` and the headers it got."""

    def __init__(self, app: Any, stack_seen: list[AccessToken], headers_seen: list[list[tuple[bytes, bytes]]]) -> None:
        self.app = app
        self.seen = stack_seen
        self.headers_seen = headers_seen

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.seen.append(scope["auth"])
            self.headers_seen.append(list(scope["headers"]))
        await self.app(scope, receive, send)


class _Statuses:
    def __init__(self, app: Any, statuses: list[int]) -> None:
        self.app = app
        self.statuses = statuses

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def record(message: Any) -> None:
            if message["type"] == "http.response.start":
                self.statuses.append(message["status"])
            await send(message)

        await self.app(scope, receive, record)


@asynccontextmanager
async def oauth_stack(
    options: AuthServerOptions | None = None,
    *,
    required_scopes: Any = (READ,),
    scopes_supported: Sequence[str] | None = (READ, WRITE),
    serve_root_metadata: bool = False,
    stub: str = "2026-07-28",
    resource_path: str = "/mcp",
    leeway: float = 0.0,
    headers_seen: list[list[tuple[bytes, bytes]]] | None = None,
    **middleware_options: Any,
) -> AsyncIterator[Stack]:
    """An authorization server and the echo MCP server behind `require_bearer`, both running."""
    as_sock, as_url = bind_local()
    rs_sock, rs_url = bind_local()
    auth = AuthServer(as_url, options)
    resource = rs_url + resource_path
    verifier = SwitchableVerifier(JWTVerifier(issuer=auth.issuer, jwks_uri=auth.jwks_uri, leeway=leeway))
    seen: list[AccessToken] = []
    inner = _Spy(create_app(echo_example().make_server(stub)), seen, headers_seen if headers_seen is not None else [])
    app = require_bearer(
        inner,
        verifier,
        resource=resource,
        authorization_servers=[auth.issuer],
        scopes_supported=scopes_supported,
        required_scopes=required_scopes,
        serve_root_metadata=serve_root_metadata,
        **middleware_options,
    )
    async with AsyncExitStack() as exits:
        await exits.enter_async_context(serve(auth.app, as_sock))
        statuses: list[int] = []
        await exits.enter_async_context(serve(_Statuses(app, statuses), rs_sock))
        stack = Stack(
            auth=auth,
            app=app,
            mcp_url=resource,
            rs_base=rs_url,
            verifier=verifier,
            seen=seen,
            statuses=statuses,
            exits=exits,
        )
        yield stack
