"""The resource subscriptions the server host keeps for both eras (`server.subscriptions`, issue 32)
and their hook, `host.subscriptions.watch(watcher)`: told `(uri, holders)` whenever a connection
subscribes (`resources/subscribe`) or a listen stream opens with `resourceSubscriptions`, and when
either lets go (unsubscribe, stream closed, connection ended), whatever serves the requests."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.server.host import host_for
from mcp_bindings.v2026_07_28 import client as client_26

pytestmark = pytest.mark.anyio


def _app() -> App:
    app = App("subscribable")

    @app.resource("res://x")
    def x() -> str:
        return "x"

    @app.resource("res://y")
    def y() -> str:
        return "y"

    return app


async def test_both_eras_reach_one_record_and_its_watchers() -> None:
    server = _app().server
    seen: list[tuple[str, int]] = []
    host_for(server).subscriptions.watch(lambda uri, holders: seen.append((uri, holders)))
    with anyio.fail_after(10):
        async with connect_in_memory(server, client_26.Client, protocol_version="2025-11-25") as old:
            await old.subscribe_resource(uri="res://x")
            await old.subscribe_resource(uri="res://x")  # the same connection again: held once
            assert seen == [("res://x", 1)]
            async with connect_in_memory(server, client_26.Client, protocol_version="2026-07-28") as new:
                async with new.listen({"resourceSubscriptions": ["res://x", "res://y"]}) as stream:
                    assert getattr(stream, "agreed", None) == {"resourceSubscriptions": ["res://x", "res://y"]}
                    assert seen[1:] == [("res://x", 2), ("res://y", 1)]
                    late: list[tuple[str, int]] = []
                    stop = host_for(server).subscriptions.watch(lambda uri, holders: late.append((uri, holders)))
                    assert sorted(late) == [("res://x", 2), ("res://y", 1)]  # told what is held at once
                    stop()
                assert seen[3:] == [("res://x", 1), ("res://y", 0)]  # the stream closed
                await old.unsubscribe_resource(uri="res://y")  # never held: nothing changes
                assert len(seen) == 5
            await old.subscribe_resource(uri="res://y")
        # the connection ended without unsubscribing: its URIs let go
    assert seen[5:] == [("res://y", 1), ("res://x", 0), ("res://y", 0)]
    assert late == [("res://x", 2), ("res://y", 1)]  # stopped: no more


async def test_a_failing_watcher_does_not_fail_the_request(caplog: pytest.LogCaptureFixture) -> None:
    server = _app().server

    def broken(uri: str, holders: int) -> Any:
        raise RuntimeError("watcher bug")

    host_for(server).subscriptions.watch(broken)
    with anyio.fail_after(10), caplog.at_level(logging.ERROR):
        async with connect_in_memory(server, client_26.Client, protocol_version="2025-11-25") as client:
            await client.subscribe_resource(uri="res://x")
            assert host_for(server).subscriptions.holders("res://x") == 1
    assert "subscription watcher failed on res://x" in caplog.text
