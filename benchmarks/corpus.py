"""The message-path corpus: four wire messages, built deterministically (no randomness, no files).

Each :class:`CorpusItem` is one JSON-RPC message as it arrives on the wire
(compact JSON, UTF-8, no trailing newline), at protocol version 2025-11-25:

``tools_call_request``  client -> server ``tools/call`` for the ``echo`` tool.
``tools_list_result``   server -> client response to ``tools/list``: 100 tools.
``resources_read_result`` server -> client response to ``resources/read``: one 1 MiB text resource.
``progress_notification`` server -> client ``notifications/progress``.

What one "message path" is, for every implementation (see ``benchmarks/ours.py``):

* request: bytes -> envelope -> validated, dispatch-ready typed request ->
  the ``echo`` handler's result (``content = [{"type": "text", "text": arguments.text}]``)
  -> response envelope -> bytes.
* result: the receiving side (bytes -> envelope -> validated typed result for
  ``request_method``) followed by the sending side (that typed result ->
  response envelope -> bytes), i.e. one crossing in each direction.
* notification: receive (bytes -> validated typed notification) then send
  (typed notification -> bytes).

The bytes returned are one JSON-RPC message followed by ``b"\\n"`` (stdio framing).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

from benchmarks.config import PROTOCOL_LEGACY


@dataclass(frozen=True)
class CorpusItem:
    name: str
    title: str
    kind: str  # "request" | "result" | "notification"
    method: str  # JSON-RPC method of the message, or for a result the method it answers
    protocol_version: str
    wire: bytes

    @property
    def request_method(self) -> str:
        return self.method


def _dumps(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def _tool(i: int) -> dict:
    tool = {
        "name": f"tool_{i:03d}",
        "title": f"Tool number {i}",
        "description": (
            f"Benchmark tool {i}: looks up records in collection {i % 7} and returns the matching rows, "
            "optionally limited and filtered."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Free-text query."},
                "limit": {
                    "type": "integer",
                    "description": "Maximum number of rows.",
                    "minimum": 1,
                },
                "exact": {"type": "boolean", "description": "Exact match only."},
                "fields": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Columns to return.",
                },
            },
            "required": ["query"],
        },
    }
    if i % 3 == 0:
        tool["annotations"] = {"readOnlyHint": True, "openWorldHint": False}
    if i % 5 == 0:
        tool["outputSchema"] = {
            "type": "object",
            "properties": {
                "rows": {"type": "array", "items": {"type": "object"}},
                "count": {"type": "integer"},
            },
            "required": ["rows"],
        }
    return tool


def _mib_text() -> str:
    line = 'The quick brown fox jumps over the lazy dog; "quoted" text, tabs\tand unicode é. 0123456789\n'
    text = line * (1024 * 1024 // len(line) + 1)
    return text[: 1024 * 1024]


@lru_cache(maxsize=1)
def build_corpus() -> tuple[CorpusItem, ...]:
    v = PROTOCOL_LEGACY
    return (
        CorpusItem(
            "tools_call_request",
            "tools/call request",
            "request",
            "tools/call",
            v,
            _dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 42,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": "hello, benchmark"}},
                }
            ),
        ),
        CorpusItem(
            "tools_list_result",
            "tools/list result, 100 tools",
            "result",
            "tools/list",
            v,
            _dumps({"jsonrpc": "2.0", "id": 7, "result": {"tools": [_tool(i) for i in range(100)]}}),
        ),
        CorpusItem(
            "resources_read_result",
            "resources/read result, 1 MiB text",
            "result",
            "resources/read",
            v,
            _dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 8,
                    "result": {
                        "contents": [
                            {
                                "uri": "file:///bench/big.txt",
                                "mimeType": "text/plain",
                                "text": _mib_text(),
                            }
                        ]
                    },
                }
            ),
        ),
        CorpusItem(
            "progress_notification",
            "progress notification",
            "notification",
            "notifications/progress",
            v,
            _dumps(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {
                        "progressToken": "tok-42",
                        "progress": 50,
                        "total": 100,
                        "message": "halfway there",
                    },
                }
            ),
        ),
    )
