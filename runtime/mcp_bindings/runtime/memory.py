"""An in-memory connection between a server object and a typed client, for tests and embedding."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio

from mcp_bindings.runtime.client.runtime import connect
from mcp_bindings.runtime.client.stub import ClientHandlerStub, ClientStub
from mcp_bindings.runtime.rpc.errors import sole_exception
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.rpc.transport import memory_pair
from mcp_bindings.runtime.server.runtime import ServerRuntime
from mcp_bindings.runtime.server.stubs import ServerStub

C = TypeVar("C", bound=ClientStub)


@asynccontextmanager
async def connect_in_memory(
    server: ServerStub,
    client: type[C],
    *,
    handlers: ClientHandlerStub | None = None,
    protocol_version: str | None = None,
    request_timeout: float | None = None,
    client_info: dict[str, Any] | None = None,
    lenient: bool = False,
    **runtime_options: Any,
) -> AsyncGenerator[C, None]:
    """A client and a server in one process (tests, embedding): the client options are
    `client.connect`'s; `runtime_options` go to the `ServerRuntime`."""
    client_end, server_end = memory_pair()
    server_session = Session(server_end, ServerRuntime(server, **runtime_options))
    try:
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(server_session.run)
            try:
                async with connect(
                    client_end,
                    client,
                    handlers=handlers,
                    protocol_version=protocol_version,
                    request_timeout=request_timeout,
                    client_info=client_info,
                    lenient=lenient,
                ) as typed:
                    yield typed
            finally:
                task_group.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        sole = sole_exception(group)  # an error in the caller's block comes out as itself
        if sole is None:
            raise
        raise sole from None
