"""An in-memory connection between a server object and a typed client, for tests and embedding."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TypeVar, Unpack

import anyio

from mcp_bindings.runtime.client.options import ClientArgs, ClientOptions
from mcp_bindings.runtime.client.runtime import connect
from mcp_bindings.runtime.client.stub import ClientStub
from mcp_bindings.runtime.protocol.request_state import RequestStateSealer
from mcp_bindings.runtime.rpc.errors import ungrouped
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.rpc.transport import memory_pair
from mcp_bindings.runtime.server.host import ServerHost
from mcp_bindings.runtime.server.runtime import ServerRuntime
from mcp_bindings.runtime.server.stubs import ServerStub

C = TypeVar("C", bound=ClientStub)


@asynccontextmanager
async def connect_in_memory(
    server: ServerStub,
    client: type[C],
    *,
    supported_versions: list[str] | None = None,
    request_state: RequestStateSealer | None = None,
    host: ServerHost | None = None,
    options: ClientOptions | None = None,
    **args: Unpack[ClientArgs],
) -> AsyncGenerator[C, None]:
    """A client and a server in one process (tests, embedding): `options` (or the same as keyword
    arguments) are `client.connect`'s (see `ClientOptions`); `supported_versions`, `request_state`
    and `host` the `ServerRuntime`'s."""
    settings = ClientOptions.of(options, args)
    client_end, server_end = memory_pair()
    runtime = ServerRuntime(server, supported_versions=supported_versions, request_state=request_state, host=host)
    server_session = Session(server_end, runtime)
    with ungrouped():  # an error in the caller's block comes out as itself
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(server_session.run)
            try:
                async with connect(client_end, client, options=settings) as typed:
                    yield typed
            finally:
                task_group.cancel_scope.cancel()
                runtime.host.disconnect(runtime)
