"""Deprecated alias: the server's task service moved to `mcp_bindings.runtime.tasks.server` (issue 47,
tasks in one home), split into `service`, `context` and `running`. What docs/extensions.md pointed
at here keeps working with a `DeprecationWarning`; `mcp_bindings.runtime.tasks` exports the public
names (`run_as_task`, `TaskContext`, `configure`, ...). Nothing in the runtime imports this module."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from mcp_bindings.runtime.rpc.moved import moved
from mcp_bindings.runtime.tasks.server import context, running, service

# name -> the module of mcp_bindings.runtime.tasks.server that has it now
_MOVED: dict[str, ModuleType] = {
    "RELATED_TASK": service,
    "TaskService": service,
    "configure": service,
    "current_task_id": service,
    "quota_of": service,
    "requester_of": service,
    "service_for": service,
    "TaskContext": context,
    "run_in_handshake_era": running,
    "stateless_request": running,
}


def __getattr__(name: str) -> Any:
    return moved(__name__, name, _MOVED.get(name))
