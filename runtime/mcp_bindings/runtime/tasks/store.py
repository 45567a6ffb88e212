"""Where tasks are kept: `protocol.task_store` (both sides keep tasks), re-exported here."""

from __future__ import annotations

from mcp_bindings.runtime.protocol.task_store import (
    STATUSES,
    TASK_METHODS,
    TERMINAL,
    InMemoryTaskStore,
    InvalidCursor,
    TaskLimitError,
    TaskState,
    TaskStore,
    decode_cursor,
    encode_cursor,
    iso8601,
)

__all__ = [
    "STATUSES",
    "TASK_METHODS",
    "TERMINAL",
    "InMemoryTaskStore",
    "InvalidCursor",
    "TaskLimitError",
    "TaskState",
    "TaskStore",
    "decode_cursor",
    "encode_cursor",
    "iso8601",
]
