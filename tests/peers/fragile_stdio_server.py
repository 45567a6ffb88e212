"""A minimal stdio server of the handshake era for `tests/stdio/test_auto_restart.py`, written by hand
to behave as servers on old SDKs do on the `server/discover` probe of `auto`:

* `silent`: stops reading and answering (mcp 1.1.x does, after its parse error), and exits with
  code 1 once its stdin closes;
* `answers`: answers it with -32601, as JSON-RPC asks of any server.

Each start appends a line to the file named by the second argument (the test counts the starts).
"""

from __future__ import annotations

import json
import sys

MODE, STARTS = sys.argv[1], sys.argv[2]
RESULTS = {
    "initialize": {
        "protocolVersion": "2024-11-05",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "fragile", "version": "1.0"},
    },
    "tools/list": {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]},
    "ping": {},
}


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    with open(STARTS, "a", encoding="utf-8") as starts:
        starts.write("start\n")
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if method == "server/discover" and MODE == "silent":
            for _ in sys.stdin:  # wedged: reads on, answers nothing
                pass
            sys.exit(1)
        if request_id is None:
            continue
        if method in RESULTS:
            send({"jsonrpc": "2.0", "id": request_id, "result": RESULTS[method]})
        else:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": f"unknown {method}"}})


if __name__ == "__main__":
    main()
