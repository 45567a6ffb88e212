"""Calls from one worker to another (several workers, docs/deployment.md).

Some state lives only where its work runs: the open input asks of a tasks-extension task
(`tasks.server.extension`: awaited by the task's work in the worker running it). A worker that gets a
request about such state (`tasks/update` answering the asks, `tasks/get` showing them) calls the
worker holding it: a `CALL` message to that worker's mailbox (`backends.WorkerMail`), answered by a
`REPLY` to the caller's. Operations are registered by name (`operation`) by the module that owns
the state; a call to a worker that does not listen (or stops listening before it replies: killed
mid-call) raises `WorkerGone`, one not answered in time -32603 naming the worker.

The interfaces (`operation`, `WorkerGone`, `Forwarder`) are the server's (`server.bus`), so that
the modules owning such state need not import this plug-in. One forwarder per server host, kept by
it (`host.find(bus.Forwarder)`) when a shared backend is attached (`scaleout.attach`); with one
process there is none and nothing is forwarded.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

import anyio

from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, McpError
from mcp_bindings.runtime.rpc.jsonrpc import json_object
from mcp_bindings.runtime.server.bus import WorkerGone, operation, operations

if TYPE_CHECKING:
    from mcp_bindings.runtime.scaleout.backends import WorkerMail
    from mcp_bindings.runtime.server.stubs import ServerStub

__all__ = ["CALL", "REPLY", "Forwarder", "WorkerGone", "operation"]

log = logs.logger("forwarding")

CALL = "mcp-bindings/call"  # {"c": call id, "from": worker, "op": name, "a": args}
REPLY = "mcp-bindings/reply"  # {"c": call id, "r": result} or {"c": call id, "e": {"code", "message", "data"}}
TIMEOUT_S = 5.0
PROBE_S = 0.25  # while waiting for a reply, how often to ask whether the worker called still listens


class Forwarder:
    def __init__(self, server: ServerStub, mail: WorkerMail, worker_id: str, timeout_s: float = TIMEOUT_S) -> None:
        self.server = server
        self.mail = mail
        self.worker_id = worker_id
        self.timeout_s = timeout_s
        self._waiting: dict[str, tuple[anyio.Event, list[dict[str, Any]]]] = {}

    async def call(self, worker_id: str, op: str, args: Any) -> Any:
        """What `worker_id` answers to `op(args)`; its error raised as `McpError`."""
        call_id = secrets.token_hex(8)
        done, reply = anyio.Event(), list[dict[str, Any]]()
        self._waiting[call_id] = (done, reply)
        try:
            message = {"c": call_id, "from": self.worker_id, "op": op, "a": args}
            if not await self.mail.send_to(worker_id, CALL, message):
                raise WorkerGone(worker_id, op)
            with anyio.move_on_after(self.timeout_s):
                # A worker killed as the call was sent (counted as a receiver, the message lost with
                # it) or while working on it never replies: it is gone as soon as it stops listening.
                while True:
                    with anyio.move_on_after(PROBE_S):
                        await done.wait()
                    if done.is_set():
                        break
                    if not await self.mail.listens(worker_id):
                        raise WorkerGone(worker_id, op)
        finally:
            self._waiting.pop(call_id, None)
        if not reply:
            raise McpError(
                INTERNAL_ERROR, f"Internal error: worker {worker_id} did not answer {op} in {self.timeout_s:g} s"
            )
        error = reply[0].get("e")
        if isinstance(error, dict):
            raise McpError.from_error(json_object(error))
        return reply[0].get("r")

    async def received(self, method: str, data: Any) -> bool:
        """Handle a bus message if it is a call or a reply (True), else leave it (False)."""
        if method == REPLY:
            reply: dict[str, Any] = data if isinstance(data, dict) else {}  # pyright: ignore[reportUnknownVariableType]
            call_id = reply.get("c")
            waiting = self._waiting.get(call_id) if isinstance(call_id, str) else None
            if waiting is not None:
                waiting[1].append(reply)
                waiting[0].set()
            return True
        if method != CALL:
            return False
        if not isinstance(data, dict):
            return True
        call: dict[str, Any] = data  # pyright: ignore[reportUnknownVariableType]
        caller, op = call.get("from"), call.get("op")
        if not isinstance(caller, str) or not isinstance(op, str):
            return True
        fn = operations().get(op)
        answer: dict[str, Any] = {"c": call.get("c")}
        try:
            if fn is None:
                raise McpError(INTERNAL_ERROR, f"Internal error: worker {self.worker_id} does not serve {op}")
            answer["r"] = await fn(self.server, call.get("a"))
        except McpError as exc:
            answer["e"] = exc.to_error()
        except Exception:
            log.exception("%s called by worker %s failed", op, caller)
            answer["e"] = {"code": INTERNAL_ERROR, "message": "Internal error"}
        try:
            await self.mail.send_to(caller, REPLY, answer)
        except McpError as exc:
            log.warning("reply to worker %s not sent: %s", caller, exc.message)
        return True
