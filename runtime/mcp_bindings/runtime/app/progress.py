"""`ctx.progress(total)`: a request's progress as a counter, for a handler that works in steps.

    @app.tool
    async def import_rows(rows: list[str], ctx: Context) -> int:
        progress = ctx.progress(total=len(rows))
        for row in rows:
            ...
            await progress.advance(message=f"imported {row}")
        return len(rows)

Each `advance` (or `update`) sends `notifications/progress` with the running value, the total and
the message, where the client asked for progress (a progress token on the call; at every version,
handshake or 2026-07-28), and nothing otherwise; a 2024-11-05 client gets no message (its
notifications have none). The value only goes up, as the protocol requires: a step that would
not raise it is an error naming the values, not a notification the client would have to drop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

__all__ = ["Progress"]

Report = Callable[[float, "float | None", "str | None"], Awaitable[None]]


class Progress:
    """The progress of one request: `value` so far (from 0) out of `total` (None: unknown)."""

    __slots__ = ("_report", "total", "value")

    def __init__(self, report: Report, total: float | None = None) -> None:
        if total is not None and not total > 0:
            raise ValueError(f"ctx.progress(total={total!r}): the total must be a positive number (or None: unknown)")
        self._report = report
        self.total = total
        self.value: float = 0

    async def advance(self, amount: float = 1, message: str | None = None) -> None:
        """Move on by `amount` (default: one step) and report it."""
        await self.update(self.value + amount, message)

    async def update(self, value: float, message: str | None = None) -> None:
        """Set the progress to `value` (more than before) and report it."""
        if not value > self.value:
            raise ValueError(f"progress must increase: {value!r} after {self.value!r} (advance by a positive amount)")
        self.value = value
        await self._report(value, self.total, message)
