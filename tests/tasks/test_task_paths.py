"""Tasks moved to one home (issue 47: `tasks.core`, `tasks.server`); the import paths the docs showed
before keep working through deprecated aliases, each warning and naming the new path, and each
giving the very object the new path has. The package's public names are unchanged."""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest

from mcp_bindings.runtime import tasks
from mcp_bindings.runtime.tasks.core import wire
from mcp_bindings.runtime.tasks.server import context, running, service

# (old module, name, the module that has it now)
MOVED = [
    ("mcp_bindings.runtime.protocol.tasks_wire", "EXTENSION", wire),
    ("mcp_bindings.runtime.protocol.tasks_wire", "CreateTaskResult", wire),
    ("mcp_bindings.runtime.tasks.service", "TaskContext", context),
    ("mcp_bindings.runtime.tasks.service", "configure", service),
    ("mcp_bindings.runtime.tasks.service", "current_task_id", service),
    ("mcp_bindings.runtime.tasks.service", "run_in_handshake_era", running),
]


@pytest.mark.parametrize(("old", "name", "new"), MOVED)
def test_an_old_path_warns_and_gives_the_same_object(old: str, name: str, new: ModuleType) -> None:
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=rf"{old} is deprecated: import {name} from {new.__name__}"):
        found = getattr(module, name)
    assert found is getattr(new, name)


def test_an_old_path_names_only_what_it_had() -> None:
    module = importlib.import_module("mcp_bindings.runtime.tasks.service")
    with pytest.raises(AttributeError, match="has no attribute 'augment'"):
        _ = module.augment


def test_the_package_exports_are_where_they_were() -> None:
    assert tasks.TaskContext is context.TaskContext
    assert tasks.configure is service.configure
    assert tasks.current_task_id is service.current_task_id
    from mcp_bindings.runtime.client.task_handle import TaskHandle

    assert tasks.TaskHandle is TaskHandle
