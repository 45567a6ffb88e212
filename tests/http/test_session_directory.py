"""The session directory of the Streamable HTTP transport is narrow (issue 47, item 4): a directory
with only `SessionDirectory`'s core operations serves handshake sessions end to end on a real socket
(initialize, a request, the GET stream with its one-per-session rule, DELETE); what crosses workers
(`route_responses`, `sending`, `claim_stream`, `release_stream`, `still_used`) is `SharedStreams`,
asked for only where the directory has it. The shared directory holds a local one, not a subclass."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from starlette.responses import Response

from benchmarks.load_server import LoadServer
from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.http.sessions import HttpSession, LocalSessions, SharedStreams
from mcp_bindings.runtime.scaleout.shared_sessions import SharedSessions
from tests.support.http import open_session, rpc, serve_in_thread

pytestmark = pytest.mark.anyio


class CoreOnly:
    """A directory with `SessionDirectory`'s members and nothing else, over a `LocalSessions`."""

    def __init__(self, local: LocalSessions) -> None:
        self._local = local
        self.calls: list[str] = []

    @property
    def sessions(self) -> dict[str, HttpSession]:
        return self._local.sessions

    async def find(self, session_id: str, principal: str | None) -> HttpSession | Response | None:
        self.calls.append("find")
        return await self._local.find(session_id, principal)

    def room(self) -> bool:
        return self._local.room()

    def open(self, session_id: str, principal: str | None, init_params: Any) -> HttpSession:
        self.calls.append("open")
        return self._local.open(session_id, principal, init_params)

    def add(self, http_session: HttpSession) -> None:
        self._local.add(http_session)

    async def resume(
        self, found: HttpSession | None, session_id: str, principal: str | None, last_event_id: str
    ) -> Response | None:
        return await self._local.resume(found, session_id, principal, last_event_id)

    async def close(self, session_id: str | None, principal: str | None) -> Response:
        self.calls.append("close")
        return await self._local.close(session_id, principal)

    def end(self, http_session: HttpSession, *, shutdown: bool = False) -> None:
        self._local.end(http_session, shutdown=shutdown)

    def expire_idle(self) -> None:
        self._local.expire_idle()

    def drain(self) -> None:
        self._local.drain()

    def close_all(self) -> None:
        self._local.close_all()


async def test_a_directory_with_only_the_core_operations_serves_sessions() -> None:
    app = create_app(LoadServer())
    local = app.streamable.directory
    assert isinstance(local, LocalSessions) and not isinstance(local, SharedStreams)
    directory = CoreOnly(local)
    app.streamable.directory = directory  # typed SessionDirectory: checked to be one
    with serve_in_thread(app) as base, anyio.fail_after(60):
        url = base + "/mcp"
        async with httpx.AsyncClient(timeout=20) as client:
            session = await open_session(client, url)
            ping = await client.post(url, json=rpc(2, "ping"), headers=session)
            assert ping.status_code == 200, ping.text
            assert ping.json() == {"jsonrpc": "2.0", "id": 2, "result": {}}
            get = {**session, "Accept": "text/event-stream"}
            async with client.stream("GET", url, headers=get) as stream:
                assert stream.status_code == 200
                assert stream.headers["content-type"].startswith("text/event-stream")
                second = await client.get(url, headers=get)
                assert second.status_code == 409, second.text  # one GET stream per session
            deleted = await client.delete(url, headers=session)
            assert deleted.status_code == 200
            gone = await client.post(url, json=rpc(3, "ping"), headers=session)
            assert gone.status_code == 404
    assert {"open", "find", "close"} <= set(directory.calls)


def test_the_shared_directory_holds_a_local_one_and_adds_shared_streams() -> None:
    assert not issubclass(SharedSessions, LocalSessions)
    for member in ("route_responses", "sending", "claim_stream", "release_stream", "still_used"):
        assert callable(getattr(SharedSessions, member)), member
        assert not hasattr(LocalSessions, member), member
