"""The decorated app of the task tests (tests/app/test_app_tasks.py, tests/app/test_app_tasks_peers.py):
one tool that may run as a task, one that must, one that asks the user from inside its task, and a
plain one. Run it to serve it over stdio: `python tests/peers/task_app.py [protocol]`."""

from __future__ import annotations

import sys

import anyio
from pydantic import BaseModel

from mcp_bindings.runtime.app import Accepted, App, Context
from mcp_bindings.runtime.tasks.server.service import current_task_id


class Name(BaseModel):
    name: str


def build(protocol: str) -> App:
    app = App(f"tasks-{protocol}", protocol=protocol)

    @app.tool(task=True)
    async def slow(seconds: float) -> str:
        """Sleeps, then says whether it ran as a task."""
        await anyio.sleep(seconds)
        return f"slept {seconds} in a task: {current_task_id() is not None}"

    @app.tool(task="required")
    async def batch(n: int) -> dict[str, int]:
        """Only as a task."""
        return {"total": sum(range(n))}

    @app.tool(task=True)
    async def greet(ctx: Context) -> str:
        """Asks the user for a name from inside the task."""
        answer = await ctx.elicit("Your name?", Name)
        return f"hello {answer.data.name}" if isinstance(answer, Accepted) else "no name"

    @app.tool
    def plain() -> str:
        return "plain"

    return app


if __name__ == "__main__":
    build(sys.argv[1] if len(sys.argv) > 1 else "2025-11-25").run()
