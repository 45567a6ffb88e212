"""Floor peer for HTTP: a bare-ASGI JSON echo under uvicorn, no MCP library, no framework.

Run: ``<python> benchmarks/peers/floor_http_echo.py --fd FD``. Same uvicorn
(h11, asyncio loop, access log off, on the socket inherited as FD, bound on 127.0.0.1
by the harness: ``procs.listener``) as the official HTTP peer,
so the difference between the two is the MCP layer, not the HTTP server. Every
POST body is one JSON-RPC message: a request gets a JSON response (canned for
``initialize`` / ``server/discover``, else the ``arguments.text`` echo), a
notification gets ``202``. One ``json.loads`` and one ``json.dumps`` per request.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import uvicorn

_INIT: dict[str, Any] = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {"listChanged": False}},
    "serverInfo": {"name": "bench-floor", "version": "0"},
}
_DISCOVER: dict[str, Any] = {
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}},
    "resultType": "complete",
}
_JSON_HEADERS = [(b"content-type", b"application/json")]


async def app(scope, receive, send):  # noqa: ANN001 - raw ASGI
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    msg = json.loads(body)
    if "id" not in msg:
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    method = msg.get("method")
    result: dict[str, Any]
    if method == "initialize":
        result = _INIT
    elif method == "server/discover":
        result = _DISCOVER
    else:
        text = ((msg.get("params") or {}).get("arguments") or {}).get("text", "")
        result = {"content": [{"type": "text", "text": text}]}
    out = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}, separators=(",", ":")).encode()
    await send({"type": "http.response.start", "status": 200, "headers": _JSON_HEADERS})
    await send({"type": "http.response.body", "body": out})


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "--fd":
        sys.exit("usage: floor_http_echo.py --fd FD")
    uvicorn.run(
        app,
        fd=int(sys.argv[2]),
        log_level="warning",
        access_log=False,
        lifespan="on",
    )
