"""Tasks on the dispatch seam (`server.seam`): an `Extension` (`server.plugins`) every server host
loads, discovered through the entry point group `mcp_bindings.extensions` (pyproject.toml).

- `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` are served from the task store for a
  server whose stub does not handle them (`methods.served_by_runtime`);
- the methods of the tasks extension (2026-07-28) for a server that declared it (`extension.plan`);
- around a handler of a method the server offers under `tasks.requests` (and tools/list, for
  tool-level task support), what runs it as a task where the client asks for one, and the
  `CreateTaskResult` type its plan writes as it is (`hooks.augment`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mcp_bindings.ext.io_modelcontextprotocol_tasks.names import NOTIFICATIONS_TASKS as TASK_STATUS
from mcp_bindings.runtime.protocol.spec import MethodSpec
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.server.plugins import Extension
from mcp_bindings.runtime.server.seam import Plan, ServerFeature
from mcp_bindings.runtime.tasks.server import hooks, methods

if TYPE_CHECKING:
    from types import ModuleType

    from mcp_bindings.runtime.server.peer import PeerView
    from mcp_bindings.runtime.server.runtime import ServerRuntime

__all__ = ["Tasks", "TasksExtension"]


def _extension() -> ModuleType:
    """The tasks extension (2026-07-28), loaded where a stateless-era request first meets it: its
    models (and the 2026-07-28 ones under them) stay out of a handshake-era server."""
    from mcp_bindings.runtime.tasks.server import extension

    return extension


class Tasks(ServerFeature):
    """The tasks feature of a server host."""

    def serve(self, runtime: ServerRuntime, method: str, spec: MethodSpec | None, view: PeerView) -> Plan | None:
        if spec is None:  # the tasks extension is of the stateless era: its methods exist only there
            return _extension().plan(runtime.server, method) if view.stateless else None
        stub_spec = runtime.stub.client_requests.get(method)
        if stub_spec is None or runtime.server.implements(stub_spec):
            return None
        builtin = methods.served_by_runtime(method)
        return None if builtin is None else Plan(spec, spec, view.protocol is not runtime.stub, builtin)

    def wrap(self, runtime: ServerRuntime, plan: Plan, view: PeerView) -> None:
        if plan.converts:
            return
        if view.stateless:  # the tasks extension (2026-07-28): the handler decides, per request
            model = _extension().result_model(runtime.server, view, plan.spec)
        else:
            around, model = hooks.augment(runtime.server, view, plan.spec)
            if around is not None:
                plan.wrap(around)  # around what was there
        if model is not None:
            plan.write_as_is(model)

    async def listen_filters(
        self, view: PeerView, session: Session, wanted: Mapping[str, Any]
    ) -> dict[str, tuple[str, Any]]:
        task_ids = await _extension().listen_filter(view, session, wanted)  # -32021 undeclared
        return {} if task_ids is None else {"taskIds": (TASK_STATUS, task_ids)}


class TasksExtension(Extension):
    """The tasks plug-in: its feature on the dispatch seam; its state, the task service, is made on
    first use (`service.service_for`: `host.state_of(TaskService)`)."""

    def features(self) -> Sequence[ServerFeature]:
        return (Tasks(),)
