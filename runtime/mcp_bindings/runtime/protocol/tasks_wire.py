"""Deprecated alias: the tasks extension's wire shapes moved to `mcp_bindings.runtime.tasks.core.wire`
(issue 47, tasks in one home). `from mcp_bindings.runtime.protocol.tasks_wire import EXTENSION`, as
docs/extensions.md showed, keeps working with a `DeprecationWarning`; nothing in the runtime imports
this module."""

from __future__ import annotations

from typing import Any

from mcp_bindings.runtime.rpc.moved import moved
from mcp_bindings.runtime.tasks.core import wire


def __getattr__(name: str) -> Any:
    return moved(__name__, name, wire if name in wire.__all__ else None)
