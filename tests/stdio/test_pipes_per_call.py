"""What the stdio transport does once per request (issue 51, item 4), over real OS pipes: `receive`
uses the loop the pipes were opened on (`asyncio.get_running_loop()` makes a getpid system call each
time), a small result is written as one whole frame at once (no coroutine of `_send_frame` on the
way), and the paths that wait for a full pipe or refuse a closed one are unchanged."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.rpc import jsonrpc, pipes
from tests.support.pipes import DEADLINE, piped

pytestmark = pytest.mark.anyio


async def test_receive_uses_the_loop_it_was_opened_on(monkeypatch: pytest.MonkeyPatch) -> None:
    real = asyncio.get_running_loop
    asked: list[int] = []

    def counted() -> asyncio.AbstractEventLoop:
        asked.append(1)
        return real()

    with anyio.fail_after(DEADLINE):
        async with piped() as (transport, feed, _):
            monkeypatch.setattr(pipes.asyncio, "get_running_loop", counted)
            for n in range(3):  # each receive waits for its frame: a future on the loop each time

                async def feed_later(n: int = n) -> None:
                    await asyncio.sleep(0.01)
                    os.write(feed, b'{"n":%d}\n' % n)

                task = asyncio.ensure_future(feed_later())
                assert await transport.receive() == b'{"n":%d}' % n
                await task
            monkeypatch.undo()
    assert asked == []  # before: one call (and one getpid) per frame


async def test_a_small_result_is_one_write_without_send_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    async def refused(self: Any, parts: tuple[bytes, ...]) -> None:
        raise AssertionError("a small result while the pipe takes it needs no _send_frame")

    with anyio.fail_after(DEADLINE):
        async with piped() as (transport, _, out):
            writes: list[bytes] = []
            real_write = transport._write_transport.write  # pyright: ignore[reportPrivateUsage]

            def write(data: Any) -> None:
                writes.append(bytes(data))
                real_write(data)

            monkeypatch.setattr(transport._write_transport, "write", write)  # pyright: ignore[reportPrivateUsage]
            monkeypatch.setattr(pipes.PipeTransport, "_send_frame", refused)
            await transport.send_result(7, b'{"content":[]}')
            await transport.send_result("a", b"{}")
            expected = [
                b'{"jsonrpc":"2.0","id":7,"result":{"content":[]}}\n',
                b'{"jsonrpc":"2.0","id":"a","result":{}}\n',
            ]
            assert writes == expected
            assert os.read(out, 4096) == b"".join(expected)


async def test_a_small_result_waits_while_the_pipe_is_full() -> None:
    with anyio.fail_after(DEADLINE):
        async with piped() as (transport, _, out):
            filler = b"x" * 65536
            written = 0
            while not transport._writer.paused:  # pyright: ignore[reportPrivateUsage]
                transport._write_transport.write(filler)  # pyright: ignore[reportPrivateUsage]
                written += len(filler)
            waiting = asyncio.ensure_future(transport.send_result(99, b"{}"))
            await asyncio.sleep(0.05)
            assert not waiting.done()  # held until the pipe drains, as before: not joined to a full buffer
            received = b""
            while not received.endswith(b"\n"):
                received += await asyncio.to_thread(os.read, out, 1 << 20)
            await waiting
            assert received == b"x" * written + b'{"jsonrpc":"2.0","id":99,"result":{}}\n'


async def test_a_small_result_to_a_closed_reader_is_refused() -> None:
    with anyio.fail_after(DEADLINE):
        async with piped() as (transport, _, out):
            os.close(out)
            with pytest.raises((anyio.BrokenResourceError, OSError)):
                for n in range(100):  # the loss is seen on a write, then every send is refused
                    await transport.send_result(n, b"{}")
                    await asyncio.sleep(0.01)


def test_result_prefix_writes_an_integer_id_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = {n: b'{"jsonrpc":"2.0","id":' + jsonrpc.dumps(n) + b',"result":' for n in (0, 7, -3, 2**64 + 1)}
    monkeypatch.setattr(jsonrpc, "dumps", lambda value: pytest.fail(f"dumps({value!r}) for an integer id"))
    assert {n: jsonrpc.result_prefix(n) for n in expected} == expected
    monkeypatch.undo()
    assert jsonrpc.result_prefix('a"b') == b'{"jsonrpc":"2.0","id":"a\\"b","result":'
