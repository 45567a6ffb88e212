"""The stdio server's transport on the loop's own primitives (`runtime.pipes`), over real OS pipes:
framing (split, joined, blank and CRLF lines, a last line without newline), the size limit (an
oversized frame is discarded as it arrives, in its place in the order), reading paused while unread
frames pile up, and writing: whole frames, waiting while the pipe is full, a closed reader."""

from __future__ import annotations

import os
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.rpc import jsonrpc, pipes
from mcp_bindings.runtime.rpc.pipes import PipeTransport
from mcp_bindings.runtime.rpc.transport import OversizedMessage
from tests.support.pipes import DEADLINE, piped

pytestmark = pytest.mark.anyio


async def frames(transport: PipeTransport, count: int) -> list[Any]:
    out: list[Any] = []
    for _ in range(count):
        try:
            out.append(await transport.receive())
        except OversizedMessage:
            out.append(OversizedMessage)
    return out


async def test_framing() -> None:
    with anyio.fail_after(DEADLINE):
        async with piped() as (transport, feed, _):
            os.write(feed, b'{"a":1}\n')
            assert await transport.receive() == b'{"a":1}'
            os.write(feed, b'{"b":2}\n\n  \n{"c":3}\r\n{"d"')  # several, blank lines, CRLF, a partial one
            assert await frames(transport, 2) == [b'{"b":2}', b'{"c":3}']
            for piece in (b":", b"4", b"}", b"\n"):  # the rest of it, a byte at a time
                os.write(feed, piece)
                await anyio.sleep(0.01)
            assert await transport.receive() == b'{"d":4}'
            os.write(feed, b'{"last":true}')  # no newline before the end
            os.close(feed)
            assert await transport.receive() == b'{"last":true}'
            with pytest.raises(anyio.EndOfStream):
                await transport.receive()
            with pytest.raises(anyio.EndOfStream):  # and stays ended
                await transport.receive()


async def test_oversized_frames_are_dropped_in_place() -> None:
    with anyio.fail_after(DEADLINE):
        async with piped(limit=100) as (transport, feed, _):
            big = b'"' + b"x" * 150 + b'"'
            os.write(feed, b"1\n" + big + b"\n2\n")  # whole, in one read
            assert await frames(transport, 3) == [b"1", OversizedMessage, b"2"]
            os.write(feed, b"3\n" + big[:60])  # arriving in pieces: dropped once over the limit
            os.write(feed, big[60:])
            await anyio.sleep(0.05)
            reader: Any = transport._reader  # pyright: ignore[reportPrivateUsage]
            assert len(reader.partial) <= 100  # not buffered
            os.write(feed, b"yyyy\n4\n")  # the rest of the oversized line, then a good one
            assert await frames(transport, 3) == [b"3", OversizedMessage, b"4"]
            os.write(feed, b"z" * 99 + b"\n")  # at the limit: fine
            assert await transport.receive() == b"z" * 99


async def test_an_oversized_last_line_is_not_a_frame() -> None:
    with anyio.fail_after(DEADLINE):
        async with piped(limit=10) as (transport, feed, _):
            os.write(feed, b"y" * 50)
            os.close(feed)
            assert await frames(transport, 1) == [OversizedMessage]
            with pytest.raises(anyio.EndOfStream):
                await transport.receive()


async def test_reading_pauses_while_frames_pile_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipes, "PAUSE_BYTES", 1000)
    with anyio.fail_after(DEADLINE):
        async with piped() as (transport, feed, _):
            line = b"f" * 99 + b"\n"
            os.write(feed, line * 30)  # 3,000 bytes of frames, nobody reading them
            await anyio.sleep(0.05)
            read_transport: Any = transport._read_transport  # pyright: ignore[reportPrivateUsage]
            assert not read_transport.is_reading()
            await frames(transport, 26)  # below half the mark: reading again
            assert read_transport.is_reading()
            assert await frames(transport, 4) == [b"f" * 99] * 4


async def test_writes_are_whole_frames_and_wait_while_the_pipe_is_full() -> None:
    with anyio.fail_after(DEADLINE):
        async with piped() as (transport, _, drain):
            await transport.send(b'{"x":1}')
            assert os.read(drain, 100) == b'{"x":1}\n'
            frame = b"w" * (1 << 20)  # more than a pipe holds: the send waits for the reader
            done = anyio.Event()

            async def send() -> None:
                await transport.send(frame)
                await transport.send(b"next")
                done.set()

            async with anyio.create_task_group() as group:
                group.start_soon(send)
                await anyio.sleep(0.05)
                assert not done.is_set()
                received = b""
                while not received.endswith(b"next\n"):
                    await anyio.wait_readable(drain)
                    received += os.read(drain, 1 << 16)
                assert received == frame + b"\nnext\n"
                await done.wait()


async def test_sending_after_the_reader_went_away() -> None:
    with anyio.fail_after(DEADLINE):
        async with piped() as (transport, _, drain):
            os.close(drain)
            with pytest.raises((anyio.BrokenResourceError, OSError)):
                for _ in range(100):  # the first write may find out only when the loop sees the error
                    await transport.send(b"x" * 65536)
                    await anyio.sleep(0.001)


async def test_a_result_is_written_around_its_json_as_one_whole_frame() -> None:
    """`send_result` writes the envelope, the result JSON and the end of the frame one after the
    other (a large result is not copied into a frame first): what arrives is `encode_result`'s
    frame, whole, also when the pipe is full and the send waits, and the next frame follows it."""
    with anyio.fail_after(DEADLINE):
        async with piped() as (transport, _, drain):
            await transport.send_result(7, b'{"ok":true}')
            assert os.read(drain, 100) == jsonrpc.encode_result(7, b'{"ok":true}') + b"\n"
            body = b'{"text":"' + b"w" * (1 << 20) + b'"}'  # more than a pipe holds
            done = anyio.Event()

            async def send() -> None:
                await transport.send_result("big", body)
                await transport.send(b"next")
                done.set()

            async with anyio.create_task_group() as group:
                group.start_soon(send)
                received = b""
                while not received.endswith(b"next\n"):
                    await anyio.wait_readable(drain)
                    received += os.read(drain, 1 << 16)
                assert received == jsonrpc.encode_result("big", body) + b"\nnext\n"
                await done.wait()


async def test_sending_a_result_after_the_reader_went_away() -> None:
    with anyio.fail_after(DEADLINE):
        async with piped() as (transport, _, drain):
            os.close(drain)
            with pytest.raises((anyio.BrokenResourceError, OSError)):
                for number in range(100):
                    await transport.send_result(number, b'{"x":"' + b"x" * 65536 + b'"}')
                    await anyio.sleep(0.001)


async def test_every_sender_waiting_on_a_full_pipe_resumes() -> None:
    """Issue 28, item 1: concurrent answers larger than the pipe's buffer, read slowly. Each waiting
    sender must be resumed once the pipe drains; before the fix only the last one to wait was, and
    every other one stayed suspended for ever with its frame (the stdio memory leak)."""
    with anyio.fail_after(DEADLINE):
        async with piped() as (transport, _, drain):
            senders = 6
            frame_bytes = 1 << 18  # 256 KiB each: several times what a pipe holds
            finished: list[int] = []

            async def send(index: int) -> None:
                await transport.send(bytes([ord("a") + index]) * frame_bytes)
                finished.append(index)

            async with anyio.create_task_group() as group:
                for index in range(senders):
                    group.start_soon(send, index)
                await anyio.sleep(0.05)
                assert not finished  # all of them wait on the one full pipe
                received = 0
                while received < senders * (frame_bytes + 1):  # a slow reader
                    await anyio.wait_readable(drain)
                    received += len(os.read(drain, 1 << 14))
                    await anyio.sleep(0)
            assert sorted(finished) == list(range(senders))
            writer: Any = transport._writer  # pyright: ignore[reportPrivateUsage]
            assert writer.waiting == 0
