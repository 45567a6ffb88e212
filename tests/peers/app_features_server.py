"""An authoring-layer server using the features of issue 32 (a lifespan, a per-request dependency
on it, an app-scoped one, middleware that refuses a call before the tool runs: `raise ToolError`,
reading the lifespan's value, issue 44; timing, a tool disabled by tag, a mounted app), for the
official SDK client to drive: over stdio as a script (`python tests/peers/app_features_server.py
LOGFILE`: the lifespan writes "start" / "stop" lines there), or over Streamable HTTP through
`build()` mounted by the test."""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from mcp_bindings.runtime.app import App, Context, Depends, ToolError
from mcp_bindings.runtime.middleware import Call, Next, Timing


@dataclass
class Database:
    rows: dict[str, str] = field(default_factory=lambda: {"ada": "Ada Lovelace", "alan": "Alan Turing"})
    connections_out: int = 0
    opened: int = 0


def build(log: Path | None = None) -> App:
    def note(line: str) -> None:
        if log is not None:
            with log.open("a") as out:
                out.write(line + "\n")

    @asynccontextmanager
    async def lifespan(app: App) -> AsyncGenerator[Database]:
        note("start")
        yield Database()
        note("stop")

    async def connection(ctx: Context[Database]) -> AsyncIterator[Database]:
        db = ctx.lifespan
        db.connections_out += 1
        db.opened += 1
        try:
            yield db
        finally:
            db.connections_out -= 1

    def greeting() -> str:
        return "hello"

    app = App("features", version="1.0", lifespan=lifespan, middleware=[Timing()])

    @app.middleware
    async def guard(call: Call[Any, Database], call_next: Next) -> Any:
        arguments = getattr(call.params, "arguments", None) or {}
        if call.target == "lookup" and arguments.get("name") not in call.lifespan.rows:  # the lifespan's value
            raise ToolError("refused by policy")  # denied here: the tool never runs (an isError result)
        return await call_next(call)

    @app.tool
    async def lookup(
        name: str,
        db: Annotated[Database, Depends(connection)],
        hello: Annotated[str, Depends(greeting, scope="app")],
    ) -> str:
        """The full name of a user."""
        found = db.rows.get(name, f"no user {name!r}")
        return f"{hello} {found} (connections out: {db.connections_out}, opened: {db.opened})"

    @app.tool(tags={"admin"})
    def reset() -> str:
        return "reset"

    app.disable(tags={"admin"})  # hidden from the list, answered as unknown

    weather = App("weather", version="1.0")

    @weather.tool
    def forecast(city: str) -> str:
        return f"sunny in {city}"

    app.mount(weather, namespace="weather")  # its tools as weather_*

    return app


if __name__ == "__main__":
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else None).run()
