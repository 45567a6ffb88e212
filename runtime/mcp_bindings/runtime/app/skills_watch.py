"""Watching a served skills directory while the app serves: a function of the changed paths is
called after each burst of changes under the root (files added, removed, edited, renamed).

The watching is watchfiles' (the `skills` extra): the operating system's file events (inotify,
FSEvents, ReadDirectoryChangesW) through a maintained Rust library, with bursts grouped (a `git
checkout` is one call, not hundreds) and no work at all while nothing changes; where the system gives
no file events (its limit of watches reached, say), it polls the tree instead. One watcher per
served directory, owned by the app's lifetime (`Lifetime.services`): started when the app starts
serving, stopped when it stops; nothing is kept at module level."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Set
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

__all__ = ["DirectoryWatcher", "can_watch"]

log = logging.getLogger("mcp_bindings.runtime.app.skills")

STEP_MS = 50  # quiet time that ends a burst of changes
DEBOUNCE_MS = 1_000  # a burst longer than this is reported in parts
STOP_SECONDS = 2.0  # what stopping the watch may take at most
POLL_MS = 300  # watchfiles' polling interval, where the system gives no file events


def can_watch() -> bool:
    """Whether watchfiles is installed (`pip install 'mcp-bindgen[skills]'`), without importing it."""
    return importlib.util.find_spec("watchfiles") is not None


class DirectoryWatcher:
    """`watcher()` is an async context manager: while it is entered, `changed(paths)` is awaited
    after each burst of changes under `root` (and once, with no paths, as the watch starts). A
    failure of the watch itself (the root removed, say) is logged and ends the watching, never the
    server."""

    def __init__(self, root: Path, changed: Callable[[set[Path]], Awaitable[None]]) -> None:
        self.root = root
        self.changed = changed

    @asynccontextmanager
    async def __call__(self) -> AsyncGenerator[None]:
        # A task of its own, not a task group: the lifetime leaves its services inside a shielded
        # scope of its own, which a task group's scope would have to be nested in.
        stop = anyio.Event()
        task = asyncio.get_running_loop().create_task(self._watch(stop))
        try:
            yield
        finally:
            stop.set()  # the watch thread sees it within a step
            done, _ = await asyncio.wait({task}, timeout=STOP_SECONDS)
            if not done:
                task.cancel()

    async def _watch(self, stop: anyio.Event) -> None:
        from watchfiles import awatch  # pyright: ignore[reportUnknownVariableType]  # stop_event may be trio's (not installed)

        resynced = False
        for polling in (False, True):
            try:
                changes: AsyncIterator[Set[tuple[object, str]]] = awatch(
                    self.root,
                    stop_event=stop,
                    step=STEP_MS,
                    debounce=DEBOUNCE_MS,
                    ignore_permission_denied=True,
                    force_polling=True if polling else None,  # None: file events (or WATCHFILES_FORCE_POLLING)
                    poll_delay_ms=POLL_MS,
                )
                batch = asyncio.ensure_future(anext(changes))
                await asyncio.sleep(0)  # the watch is set up: from now on no change is missed
                if not resynced:  # what changed while nothing watched (before serving, between runs)
                    resynced = True
                    await self._tell(set())
                while found := await _next(batch):
                    await self._tell({Path(path) for _change, path in found})
                    batch = asyncio.ensure_future(anext(changes))
                return
            except (OSError, RuntimeError) as exc:
                if polling or not self.root.is_dir():  # the root removed or unreadable: served as it is now
                    log.warning("skills: stopped watching %s: %s", self.root, exc)
                    return
                # No file events here (the system's limit of watches reached, say): polling instead.
                log.warning("skills: no file events for %s (%s): polling it every %d ms", self.root, exc, POLL_MS)

    async def _tell(self, paths: set[Path]) -> None:
        try:
            await self.changed(paths)
        except Exception:  # noqa: BLE001 - one bad resync must not end the watching
            log.exception("skills: could not follow a change under %s", self.root)


async def _next(batch: Awaitable[Set[tuple[object, str]]]) -> Set[tuple[object, str]] | None:
    """The next batch of changes; None once the watch has stopped."""
    try:
        return await batch
    except StopAsyncIteration:
        return None
