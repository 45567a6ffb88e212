"""The one raw client every server is driven by, so client cost is identical for all peers.

* :class:`StdioClient` - JSON-RPC over a subprocess pipe: pre-encoded request
  lines out, ``select`` + ``os.read`` line framing in, ``json.loads`` to match ids.
* :class:`HttpClient` - a minimal asyncio HTTP/1.1 keep-alive client (one
  connection per client) that understands ``Content-Length``, chunked bodies and
  ``text/event-stream`` responses.
* :class:`McpHttpSession` / :func:`stdio_handshake` - the MCP handshake done by
  hand: ``initialize`` + ``notifications/initialized`` for 2025-11-25; for
  2026-07-28 there is no handshake (every request carries the per-request
  ``_meta`` envelope: protocol version, client capabilities, client info) and
  the client probes with ``server/discover``; on HTTP the body fields are
  mirrored into ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name``
  headers, with no ``Mcp-Session-Id``.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import time
from typing import Any

from benchmarks.config import PROTOCOL_LEGACY, PROTOCOL_MODERN

CLIENT_INFO = {"name": "mcp-bench-driver", "version": "0"}
ECHO_TEXT = "hello from the benchmark driver"

_PV_KEY = "io.modelcontextprotocol/protocolVersion"
_CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
_INFO_KEY = "io.modelcontextprotocol/clientInfo"


class DriverError(RuntimeError):
    pass


# --- message builders (bytes, no trailing newline) -------------------------------------------


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def envelope(version: str) -> dict[str, Any]:
    return {_PV_KEY: version, _CAPS_KEY: {}, _INFO_KEY: CLIENT_INFO}


def initialize_request(req_id: int, version: str = PROTOCOL_LEGACY) -> bytes:
    return _dumps(
        {
            "jsonrpc": "2.0",
            "id": req_id,
            "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO},
        }
    )


def initialized_notification() -> bytes:
    return _dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})


def discover_request(req_id: int, version: str = PROTOCOL_MODERN) -> bytes:
    return _dumps(
        {
            "jsonrpc": "2.0",
            "id": req_id,
            "method": "server/discover",
            "params": {"_meta": envelope(version)},
        }
    )


class CallTemplate:
    """Pre-encoded ``tools/call echo`` request; only the id changes per call (cheap, identical for all)."""

    def __init__(self, version: str, text: str = ECHO_TEXT) -> None:
        params: dict[str, Any] = {"name": "echo", "arguments": {"text": text}}
        if version == PROTOCOL_MODERN:
            params["_meta"] = envelope(version)
        body = _dumps({"jsonrpc": "2.0", "id": 999_999_999, "method": "tools/call", "params": params})
        self._head, self._tail = body.split(b"999999999", 1)

    def encode(self, req_id: int) -> bytes:
        return b"%s%d%s" % (self._head, req_id, self._tail)


def check_echo(response: dict[str, Any]) -> None:
    if "result" not in response:
        raise DriverError(f"tools/call failed: {str(response)[:300]}")


# --- stdio ------------------------------------------------------------------------------------


class StdioClient:
    """Sequential JSON-RPC over a subprocess's stdin/stdout (binary, unbuffered pipes)."""

    def __init__(self, proc: subprocess.Popen, timeout: float) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.proc = proc
        self._in = proc.stdin.fileno()
        self._out = proc.stdout.fileno()
        self._buf = b""
        self.timeout = timeout

    def send(self, line: bytes) -> None:
        data = memoryview(line + b"\n")
        while data:
            n = os.write(self._in, data)
            data = data[n:]

    def read_line(self) -> bytes:
        deadline = time.monotonic() + self.timeout
        # A long line (a 10 MB resource) arrives in many pipe-sized reads: they are joined once its end
        # is in, so the cost stays linear in its length.
        parts = [self._buf]
        while True:
            nl = parts[-1].find(b"\n")
            if nl >= 0:
                if len(parts) > 1:
                    self._buf = b"".join(parts)
                    nl = self._buf.find(b"\n", len(self._buf) - len(parts[-1]))
                line, self._buf = self._buf[:nl], self._buf[nl + 1 :]
                return line
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DriverError(f"no response within {self.timeout}s")
            ready, _, _ = select.select([self._out], [], [], remaining)
            if ready:
                chunk = os.read(self._out, 1 << 20)
                if not chunk:
                    raise DriverError(f"server closed stdout (exit code {self.proc.poll()})")
                parts.append(chunk)

    def request(self, line: bytes, req_id: int) -> dict[str, Any]:
        """Send one request and return the response with that id (skipping server notifications)."""
        self.send(line)
        for _ in range(10_000):
            msg = json.loads(self.read_line())
            if msg.get("id") == req_id and ("result" in msg or "error" in msg):
                return msg
        raise DriverError("too many unrelated messages before the response")


def stdio_handshake(client: StdioClient, version: str) -> dict[str, Any]:
    """Do the MCP opening exchange for ``version``; returns the first response."""
    if version == PROTOCOL_LEGACY:
        first = client.request(initialize_request(0, version), 0)
        if "result" not in first:
            raise DriverError(f"initialize failed: {first}")
        client.send(initialized_notification())
        return first
    first = client.request(discover_request(0, version), 0)
    if "result" not in first:
        raise DriverError(f"server/discover failed: {first}")
    return first


# --- HTTP -------------------------------------------------------------------------------------


class HttpClient:
    """Minimal HTTP/1.1 keep-alive client over one asyncio connection."""

    def __init__(self, host: str, port: int, path: str, timeout: float) -> None:
        self.host, self.port, self.path, self.timeout = host, port, path, timeout
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._prefix = (
            f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\n"
        ).encode()

    async def connect(self) -> None:
        self._reader, self._writer = await asyncio.wait_for(
            asyncio.open_connection(self.host, self.port, limit=1 << 24), self.timeout
        )

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            try:
                await asyncio.wait_for(self._writer.wait_closed(), 2)
            except (TimeoutError, OSError):
                pass
            self._writer = None

    async def post(self, body: bytes, headers: bytes = b"") -> tuple[int, dict[str, str], bytes]:
        try:
            return await asyncio.wait_for(self._post(body, headers), self.timeout)
        except (asyncio.IncompleteReadError, ConnectionResetError) as exc:
            # The server closed this keep-alive connection while it sat idle (servers do after a few
            # seconds: uvicorn's default is 5 s) before reading the request: reconnect and send it
            # again, as HTTP clients do. Anything after a partial answer is an error.
            if isinstance(exc, asyncio.IncompleteReadError) and exc.partial:
                raise
            await self.close()
            await self.connect()
            return await asyncio.wait_for(self._post(body, headers), self.timeout)

    async def _post(self, body: bytes, headers: bytes) -> tuple[int, dict[str, str], bytes]:
        assert self._reader is not None and self._writer is not None
        self._writer.write(b"%s%sContent-Length: %d\r\n\r\n%s" % (self._prefix, headers, len(body), body))
        head = await self._reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        hdrs: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                k, _, v = line.partition(":")
                hdrs[k.strip().lower()] = v.strip()
        if "content-length" in hdrs:
            data = await self._reader.readexactly(int(hdrs["content-length"]))
        elif hdrs.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            for _ in range(1_000_000):
                size_line = await self._reader.readuntil(b"\r\n")
                size = int(size_line.split(b";")[0], 16)
                if size == 0:
                    await self._reader.readuntil(b"\r\n")
                    break
                parts.append(await self._reader.readexactly(size))
                await self._reader.readexactly(2)
            data = b"".join(parts)
        else:
            data = await self._reader.read()  # connection: close framing
        if hdrs.get("connection", "").lower() == "close":
            await self.close()
            await self.connect()
        return status, hdrs, data


def _jsonrpc_from_body(content_type: str, data: bytes, req_id: int) -> dict[str, Any]:
    if content_type.startswith("text/event-stream"):
        for event in data.replace(b"\r\n", b"\n").split(b"\n\n"):
            payload = b"\n".join(line[5:].lstrip() for line in event.split(b"\n") if line.startswith(b"data:"))
            if payload:
                msg = json.loads(payload)
                if msg.get("id") == req_id:
                    return msg
        raise DriverError("SSE stream ended without the response")
    return json.loads(data)


class McpHttpSession:
    """One MCP client over one keep-alive connection: handshake then ``tools/call`` round trips."""

    def __init__(self, http: HttpClient, version: str) -> None:
        self.http = http
        self.version = version
        self.session_id: str | None = None
        self.calls = CallTemplate(version)
        self._next_id = 1

    def _headers(self, method: str, name: str | None = None) -> bytes:
        h = []
        if self.version == PROTOCOL_MODERN:
            h.append(f"MCP-Protocol-Version: {self.version}\r\nMcp-Method: {method}\r\n")
            if name is not None:
                h.append(f"Mcp-Name: {name}\r\n")
        elif method != "initialize":
            h.append(f"MCP-Protocol-Version: {self.version}\r\n")
        if self.session_id:
            h.append(f"Mcp-Session-Id: {self.session_id}\r\n")
        return "".join(h).encode()

    async def _request(self, body: bytes, req_id: int, method: str, name: str | None = None) -> dict[str, Any]:
        status, hdrs, data = await self.http.post(body, self._headers(method, name))
        if status != 200:
            raise DriverError(f"{method}: HTTP {status}: {data[:300]!r}")
        if method == "initialize" and "mcp-session-id" in hdrs:
            self.session_id = hdrs["mcp-session-id"]
        return _jsonrpc_from_body(hdrs.get("content-type", ""), data, req_id)

    async def handshake(self) -> dict[str, Any]:
        if self.version == PROTOCOL_LEGACY:
            first = await self._request(initialize_request(0, self.version), 0, "initialize")
            if "result" not in first:
                raise DriverError(f"initialize failed: {first}")
            status, _, data = await self.http.post(
                initialized_notification(), self._headers("notifications/initialized")
            )
            if status not in (200, 202, 204):
                raise DriverError(f"notifications/initialized: HTTP {status}: {data[:200]!r}")
            return first
        first = await self._request(discover_request(0, self.version), 0, "server/discover")
        if "result" not in first:
            raise DriverError(f"server/discover failed: {first}")
        return first

    async def call_echo(self) -> dict[str, Any]:
        req_id = self._next_id
        self._next_id += 1
        msg = await self._request(self.calls.encode(req_id), req_id, "tools/call", "echo")
        check_echo(msg)
        return msg
