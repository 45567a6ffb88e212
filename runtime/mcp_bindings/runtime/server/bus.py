"""What a server needs of the other workers of its deployment, as interfaces (several workers,
docs/deployment.md). One process has none of them: nothing here imports the scale-out plug-in
(`scaleout`), which implements them and fills them in when a shared backend is attached.

* the notification bus (`NotificationBus`, `ServerHost.bus`): a broadcast raised on one worker is
  published there, and every other worker delivers it to its own clients (`ServerHost.deliver`);
  a custom (extension) broadcast travels as an `EXTENSION_BROADCAST` message;
* calls to another worker (`Forwarder`, kept by the host: `host.find(Forwarder)`): state that
  lives where its work runs (a tasks-extension task's open input asks) is read or changed by calling
  that worker. Operations are registered by name (`operation`) by the module owning the state; a call
  to a worker that is gone raises `WorkerGone`. Without a forwarder (one process) there is nothing to
  forward.

`BackendUnavailable` is what a backend raises when the shared state cannot be reached.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, McpError

if TYPE_CHECKING:
    from mcp_bindings.runtime.server.stubs import ServerStub

__all__ = [
    "EXTENSION_BROADCAST",
    "BackendUnavailable",
    "Forwarder",
    "NotificationBus",
    "Operation",
    "WorkerGone",
    "operation",
    "operations",
]

# A bus message between workers, not a notification (no MCP method has this name): a custom
# (extension) notification broadcast (`extensions.broadcast`); params: the method, its extension and
# its wire params, so every worker sends it to its clients that declared it.
EXTENSION_BROADCAST = "mcp-bindings/extension-broadcast"


class BackendUnavailable(McpError):
    """The shared state cannot be reached: what needed it fails with -32603 naming the backend."""

    def __init__(self, message: str) -> None:
        super().__init__(INTERNAL_ERROR, f"Internal error: {message}")


class NotificationBus(Protocol):
    async def publish(self, method: str, data: Any) -> None:
        """Send a broadcast to the other workers (`BackendUnavailable` when it cannot)."""
        ...


class WorkerGone(McpError):
    """The worker called does not listen any more (it stopped, or was killed)."""

    def __init__(self, worker_id: str, op: str) -> None:
        super().__init__(INTERNAL_ERROR, f"Internal error: worker {worker_id} (for {op}) is gone")
        self.worker_id = worker_id


class Forwarder(Protocol):
    """Calls from this worker to another (`scaleout.forwarding.Forwarder` is the one there is)."""

    @property
    def worker_id(self) -> str:
        """This worker's name."""
        ...

    async def call(self, worker_id: str, op: str, args: Any) -> Any:
        """What `worker_id` answers to `op(args)`; its error raised as `McpError`, `WorkerGone`
        when that worker is gone."""
        ...


Operation = Callable[["ServerStub", Any], Awaitable[Any]]
_OPERATIONS: dict[str, Operation] = {}


def operation(name: str) -> Callable[[Operation], Operation]:
    """Register `fn(server, args) -> JSON result` as what a worker does when another calls `name`."""

    def register(fn: Operation) -> Operation:
        _OPERATIONS[name] = fn
        return fn

    return register


def operations() -> dict[str, Operation]:
    """The registered operations by name (what a worker serves to the others)."""
    return _OPERATIONS
