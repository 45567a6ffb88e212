"""Floor peer for stdio: a standard-library-only JSON-RPC line echo, no MCP library.

Reads one JSON object per line from stdin; every message with an ``id`` gets one
response line: a canned result for ``initialize`` / ``server/discover``, and for
anything else ``{"content": [{"type": "text", "text": <arguments.text>}]}``.
Notifications get nothing. It does exactly one ``json.loads`` and one
``json.dumps`` per message, the least any JSON-RPC server must do.
"""

from __future__ import annotations

import json
import sys
from typing import Any

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


def main() -> None:
    read = sys.stdin.buffer.readline
    out = sys.stdout.buffer
    dumps = json.dumps
    loads = json.loads
    while True:
        line = read()
        if not line:
            return
        msg = loads(line)
        if "id" not in msg:
            continue
        method = msg.get("method")
        result: dict[str, Any]
        if method == "initialize":
            result = _INIT
        elif method == "server/discover":
            result = _DISCOVER
        else:
            text = ((msg.get("params") or {}).get("arguments") or {}).get("text", "")
            result = {"content": [{"type": "text", "text": text}]}
        out.write(dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}, separators=(",", ":")).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
