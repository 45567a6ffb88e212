"""Real OS pipes around the stdio server's transport (`rpc.pipes.PipeTransport`), for the tests of
tests/stdio/."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp_bindings.runtime.rpc.pipes import PipeTransport

DEADLINE = 10


@asynccontextmanager
async def piped(limit: int = 1024) -> AsyncIterator[tuple[PipeTransport, int, int]]:
    """A transport reading one pipe and writing another; yields it, the fd that feeds what it reads
    and the fd that reads what it writes."""
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    transport = await PipeTransport.open(
        os.fdopen(in_read, "rb", buffering=0), os.fdopen(out_write, "wb", buffering=0), limit
    )
    try:
        yield transport, in_write, out_read
    finally:
        await transport.aclose()
        for fd in (in_write, out_read):
            try:
                os.close(fd)
            except OSError:
                pass
