"""Giving freed memory back to the system: glibc keeps the freed blocks of large frames in its heap,
so without `malloc_trim` the resident size stays at its peak after a heavy session is released, or
grows with every large answer a stdio server writes. Shared by the transports: HTTP's replay log
(`http.resume`) and legacy queues (`http.legacy`) as they are released, the stdio pipes (`rpc.pipes`)
after each large frame read or written."""

from __future__ import annotations

import asyncio
import ctypes
import sys
import threading
import time
from collections.abc import Callable
from functools import cache

__all__ = ["RECLAIM_AFTER", "RECLAIM_DELAY", "reclaim"]

MIB = 1024 * 1024
RECLAIM_AFTER = 1 * MIB  # bytes freed (replay log, legacy queues, large stdio frames) before memory is given back
RECLAIM_DELAY = 0.5  # seconds: frees in a burst are given back together, at most twice a second
_reclaim = {"freed": 0, "due": 0.0}  # bytes freed since the last trim; when the scheduled one runs


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's `malloc_trim`; None elsewhere. glibc keeps the freed blocks of large frames in its
    heap, so without it RSS stays at its peak after a heavy session is released."""
    if sys.platform != "linux":
        return None
    try:  # the process's own symbols: libc is loaded already (`find_library` would run `ldconfig`)
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def reclaim(freed: int) -> None:
    """Note `freed` bytes released; once RECLAIM_AFTER have been, give the process's free heap
    memory back to the system (glibc `malloc_trim`, in a worker thread, RECLAIM_DELAY later)."""
    trim = _malloc_trim()
    if trim is None:
        return
    _reclaim["freed"] += freed
    now = time.monotonic()
    if _reclaim["freed"] < RECLAIM_AFTER or now < _reclaim["due"]:
        return  # not enough yet, or a trim is already scheduled
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio (e.g. trio): trim here, it takes milliseconds
        _reclaim["freed"], _reclaim["due"] = 0, now + RECLAIM_DELAY
        trim(0)
        return
    _reclaim["due"] = now + RECLAIM_DELAY

    def run() -> None:
        _reclaim["freed"] = 0
        # A thread of its own, gone once the trim returns (not the loop's default executor, whose
        # thread and queues would be created at the load's peak and outlive it in memory the load
        # took: see docs/security.md, "Giving memory back").
        threading.Thread(target=trim, args=(0,), name="mcp-malloc-trim", daemon=True).start()

    loop.call_later(RECLAIM_DELAY, run)


_malloc_trim()  # looked up as the module is imported (about 0.03 ms), not first at the peak of a load
