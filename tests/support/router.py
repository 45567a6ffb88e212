"""A load balancer that routes by path, for tests of one server on several workers where a test must
say which worker serves which step (a kernel spreading connections over workers sharing a port
decides nothing a test can name): `PathRouter` is an ASGI app forwarding each request, headers
(`Host` included) and body as they came, to the worker its path is given to, and the answer back
streamed (SSE included, until either side closes); `served` records (path, worker name) per request."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import httpx

# Connection-level headers, never forwarded (RFC 9110 §7.6.1).
HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade"})


class PathRouter:
    """`routes`: path -> worker name; `workers`: worker name -> base URL; `default`: the worker of
    every other path."""

    def __init__(self, workers: Mapping[str, str], routes: Mapping[str, str], default: str) -> None:
        self.workers = dict(workers)
        self.routes = dict(routes)
        self.default = default
        self.served: list[tuple[str, str]] = []
        self.http = httpx.AsyncClient(timeout=httpx.Timeout(30, read=None))

    def worker_of(self, path: str) -> str:
        return self.routes.get(path, self.default)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        worker = self.worker_of(scope["path"])
        self.served.append((scope["path"], worker))
        body = bytearray()
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        query = scope.get("query_string", b"").decode("latin-1")
        url = self.workers[worker] + scope["path"] + (f"?{query}" if query else "")
        headers = [(k, v) for k, v in scope["headers"] if k.decode("latin-1").lower() not in HOP_BY_HOP]
        request = self.http.build_request(scope["method"], url, headers=headers, content=bytes(body))
        response = await self.http.send(request, stream=True)
        try:
            kept = [(k, v) for k, v in response.headers.raw if k.decode("latin-1").lower() not in HOP_BY_HOP]
            await send({"type": "http.response.start", "status": response.status_code, "headers": kept})
            async with anyio.create_task_group() as group:

                async def until_the_client_leaves() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    group.cancel_scope.cancel()

                group.start_soon(until_the_client_leaves)
                async for chunk in response.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
                group.cancel_scope.cancel()
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()
