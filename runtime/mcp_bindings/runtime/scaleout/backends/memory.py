"""The default backend: one process. Broadcasts are delivered by the `ServerHost` itself, sessions
live in the HTTP app, tasks in an `InMemoryTaskStore`; nothing is shared, nothing to run."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

import anyio

from mcp_bindings.runtime.scaleout.attach import Attachable
from mcp_bindings.runtime.scaleout.backends.base import Deliver
from mcp_bindings.runtime.tasks.core.store import InMemoryTaskStore, TaskStore


class InMemoryBackend(Attachable):
    shared = False

    def __init__(self) -> None:
        self.worker_id = secrets.token_hex(6)

    async def start(self) -> None:
        return None

    async def aclose(self) -> None:
        return None

    async def ready(self) -> str | None:
        return None

    async def publish(self, method: str, data: Any) -> None:
        return None  # the host has delivered it to this process's clients already

    async def run_bus(self, deliver: Deliver) -> None:
        await anyio.sleep_forever()

    async def put(self, session_id: str, ttl_s: float, record: Mapping[str, Any] | None = None) -> None:
        return None

    async def record(self, session_id: str, ttl_s: float | None = None) -> dict[str, Any] | None:
        return None  # the app's own sessions are all there is

    async def holder(self, session_id: str) -> str | None:
        return None

    async def send_to(self, worker_id: str, method: str, data: Any) -> bool:
        return False  # one process: no other worker

    async def listens(self, worker_id: str) -> bool:
        return False

    async def drop(self, session_id: str) -> None:
        return None

    async def claim_stream(self, session_id: str, ttl_s: float) -> str | None:
        return None  # one process: the session's transport holds at most one GET stream

    async def release_stream(self, session_id: str) -> None:
        return None

    async def hand_over(self, session_id: str, snapshot: bytes, ttl_s: float) -> None:
        return None  # one process: no other worker to resume a session's streams

    async def handed_over(self, session_id: str) -> list[bytes]:
        return []

    def task_store(self) -> TaskStore:
        return InMemoryTaskStore()
