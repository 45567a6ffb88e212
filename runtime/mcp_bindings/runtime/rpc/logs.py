"""The runtime's loggers, bounded: a hostile peer decides what the runtime logs about its messages,
so each line is cut to `MAX_CHARS` and a message repeated more than `BURST` times within `WINDOW`
seconds is suppressed, with one line saying how many were left out once it shows again."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

MAX_CHARS = 2_000  # per log message (the peer's bytes it quotes included)
BURST = 20  # lines of one kind per window before suppressing
WINDOW = 10.0  # seconds


class Bounded(logging.Filter):
    """Cuts long messages; rate-limits repeats of one message template (per logger and template)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._clock = clock
        self._seen: dict[tuple[str, str], list[float]] = {}  # key -> [window start, count, suppressed]

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg))
        now = self._clock()
        state = self._seen.get(key)
        if state is None or now - state[0] >= WINDOW:
            suppressed = int(state[2]) if state is not None else 0
            if len(self._seen) > 1_000:  # keys are message templates: few, unless a caller formats itself
                self._seen.clear()
            self._seen[key] = [now, 1, 0]
            self._cut(record, suppressed)
            return True
        state[1] += 1
        if state[1] > BURST:
            state[2] += 1
            return False
        self._cut(record, 0)
        return True

    @staticmethod
    def _cut(record: logging.LogRecord, suppressed: int) -> None:
        message = record.getMessage()
        if len(message) > MAX_CHARS:
            message = f"{message[:MAX_CHARS]}... ({len(message) - MAX_CHARS} more characters)"
        if suppressed:
            message += f" [{suppressed} similar messages suppressed in the last {WINDOW:g} s]"
        record.msg, record.args = message, None


_FILTER = Bounded()


def logger(name: str) -> logging.Logger:
    """The runtime logger `mcp_bindings.runtime[.name]`, with the shared bound attached."""
    log = logging.getLogger(f"mcp_bindings.runtime.{name}" if name else "mcp_bindings.runtime")
    if _FILTER not in log.filters:
        log.addFilter(_FILTER)
    return log
