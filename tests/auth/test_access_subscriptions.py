"""Issue 48: resource subscriptions follow per-user visibility as `resources/read` does.

A `resources/subscribe` / `resources/unsubscribe` (2025-11-25) or a `subscriptions/listen` whose
`resourceSubscriptions` (2026-07-28) names a resource the token lacks the scopes of gets the 403
`insufficient_scope` step-up challenge over real HTTP on 127.0.0.1, and -32602 naming the scope on
stdio and in memory, whichever stub serves the request; a resource an `allow=` predicate hides is
answered as an unknown one is (accepted), and its `notifications/resources/updated` never reaches
that caller, while it reaches those who may see it."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest

from mcp_bindings.runtime.app import App, Auth
from mcp_bindings.runtime.auth.challenge import parse_challenges
from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError
from mcp_bindings.runtime.stdio.connect import connect_stdio
from mcp_bindings.v2025_11_25.client import ClientHandlers
from tests.auth.conftest import ADMIN, READ, guarded_app
from tests.peers.auth_harness import bind_local, serve
from tests.peers.auth_server import AuthServer
from tests.peers.harness import client_module
from tests.support import REPO_ROOT
from tests.support.http import open_session, rpc, stateless, stateless_headers

pytestmark = pytest.mark.anyio

LIMIT = 60  # seconds any one test may take
UPDATED = "notifications/resources/updated"


@dataclass
class Served:
    app: App
    auth: AuthServer
    url: str

    def bearer(self, subject: str = "user-1") -> str:
        """A token with mcp:read only (not notes:admin) for `subject` (acme-...: the predicate's)."""
        return self.auth.mint(resource=self.url, scope=READ, client_id="c", subject=subject)


@asynccontextmanager
async def guarded_server() -> AsyncIterator[Served]:
    as_sock, as_url = bind_local()
    rs_sock, rs_url = bind_local()
    auth = AuthServer(as_url)
    url = rs_url + "/mcp"
    app = guarded_app(Auth(resource=url, issuer=auth.issuer, jwks_uri=auth.jwks_uri, scopes=[READ]))
    async with AsyncExitStack() as exits:
        await exits.enter_async_context(serve(auth.app, as_sock))
        await exits.enter_async_context(serve(app.asgi(), rs_sock))
        yield Served(app, auth, url)


def assert_step_up(response: httpx.Response, what: str) -> None:
    assert response.status_code == 403, (what, response.status_code, response.text[:200])
    (challenge,) = parse_challenges(response.headers["www-authenticate"])
    assert challenge.error == "insufficient_scope" and challenge.scopes == [READ, ADMIN], what


async def test_subscribing_to_a_resource_outside_the_token_gets_the_step_up_challenge() -> None:
    with anyio.fail_after(LIMIT):
        async with guarded_server() as served, httpx.AsyncClient(timeout=10) as http:
            http.headers["Authorization"] = f"Bearer {served.bearer()}"
            # 2025-11-25: a session, then (un)subscribe to a scoped resource and a scoped template's URI
            session = await open_session(http, served.url)
            for method in ("resources/subscribe", "resources/unsubscribe"):
                for uri in ("notes://audit", "notes://by/bob"):
                    response = await http.post(served.url, json=rpc(2, method, {"uri": uri}), headers=session)
                    assert_step_up(response, f"{method} {uri}")
            allowed = await http.post(
                served.url, json=rpc(3, "resources/subscribe", {"uri": "notes://public"}), headers=session
            )
            assert allowed.status_code == 200 and '"result":{}' in allowed.text.replace(" ", "")
            # 2026-07-28: a listen stream asking the updates of a scoped resource, among others
            asked = {"notifications": {"resourceSubscriptions": ["notes://public", "notes://audit"]}}
            body = rpc(4, "subscriptions/listen", stateless(asked))
            async with http.stream(
                "POST", served.url, json=body, headers=stateless_headers("subscriptions/listen")
            ) as listen:
                assert_step_up(listen, "subscriptions/listen")


class Updates(ClientHandlers):
    """The resource updates a 2025-11-25 client was told of."""

    def __init__(self) -> None:
        super().__init__()
        self.uris: list[str] = []

    async def on_resource_updated(self, params: Any, ctx: Any) -> None:
        self.uris.append(params.uri)


async def test_a_hidden_resources_updates_never_reach_who_may_not_see_it_2025_11_25() -> None:
    """user-1 (not acme's) subscribes to notes://acme, hidden from it by `allow=`: accepted, as for a
    resource that does not exist; its updates reach acme's user only."""
    client_cls = client_module("2025-11-25").Client
    with anyio.fail_after(LIMIT):
        async with guarded_server() as served, AsyncExitStack() as clients:
            updates = {subject: Updates() for subject in ("user-1", "acme-user")}

            async def connect(subject: str) -> Any:
                headers = {"Authorization": f"Bearer {served.bearer(subject)}"}
                return await clients.enter_async_context(
                    connect_http(served.url, client_cls, headers=headers, handlers=updates[subject])
                )

            outsider = await connect("user-1")
            hidden = await outsider.subscribe_resource(uri="notes://acme")
            unknown = await outsider.subscribe_resource(uri="notes://nowhere")
            assert hidden.model_dump() == unknown.model_dump()
            await outsider.subscribe_resource(uri="notes://public")
            assert await served.app.resource_updated("notes://acme") == 0  # nobody who may see it holds it
            insider = await connect("acme-user")
            await insider.subscribe_resource(uri="notes://acme")
            assert await served.app.resource_updated("notes://acme") == 1
            assert await served.app.resource_updated("notes://public") == 1
            while not updates["acme-user"].uris or not updates["user-1"].uris:
                await anyio.sleep(0.01)
    assert updates["acme-user"].uris == ["notes://acme"]
    assert updates["user-1"].uris == ["notes://public"]  # sent after notes://acme's updates, on the same stream


async def test_a_hidden_resources_updates_never_reach_who_may_not_see_it_2026_07_28() -> None:
    """The same on `subscriptions/listen` streams: the filter is acknowledged as asked (as for a
    resource that does not exist), and the stream gets the updates of what its caller may see."""
    client_cls = client_module("2026-07-28").Client
    wanted = {"resourceSubscriptions": ["notes://acme", "notes://public"]}
    with anyio.fail_after(LIMIT):
        async with guarded_server() as served, AsyncExitStack() as exits:
            streams: dict[str, Any] = {}
            for subject in ("user-1", "acme-user"):
                headers = {"Authorization": f"Bearer {served.bearer(subject)}"}
                client = await exits.enter_async_context(connect_http(served.url, client_cls, headers=headers))
                streams[subject] = await exits.enter_async_context(client.session.listen(wanted))
                assert streams[subject].agreed == wanted
            assert await served.app.resource_updated("notes://acme") == 1
            assert await served.app.resource_updated("notes://public") == 2
            told = {subject: [(await anext(stream)).params.uri] for subject, stream in streams.items()}
            told["acme-user"].append((await anext(streams["acme-user"])).params.uri)
    assert told == {"user-1": ["notes://public"], "acme-user": ["notes://acme", "notes://public"]}


async def test_on_stdio_a_subscription_outside_the_scopes_is_refused_naming_it() -> None:
    """The app on its default (2026-07-28) stub, a 2025-11-25 client: the runtime serves the
    subscription requests itself, and they are refused all the same."""
    command = [sys.executable, "-m", "tests.auth.conftest"]
    with anyio.fail_after(LIMIT):
        async with connect_stdio(command, client_module("2025-11-25").Client, cwd=str(REPO_ROOT)) as client:
            refused: list[McpError] = []
            for call in (client.subscribe_resource, client.unsubscribe_resource):
                with pytest.raises(McpError) as raised:
                    await call(uri="notes://audit")
                refused.append(raised.value)
            hidden = await client.subscribe_resource(uri="notes://acme")  # (nobody is not acme's)
    assert [(e.code, e.data) for e in refused] == [
        (INVALID_PARAMS, {"error": "insufficient_scope", "scope": ADMIN, "missing": [ADMIN]})
    ] * 2
    assert refused[0].message == (
        "resources/subscribe refused: 'notes://audit' needs the scope notes:admin, which an unauthenticated "
        "caller was not granted (insufficient_scope)"
    )
    assert refused[1].message.startswith("resources/unsubscribe refused: 'notes://audit' needs the scope")
    assert hidden.model_dump() == {"_meta": None}  # `{}`, as for any URI


@pytest.mark.parametrize("stub", ["2025-11-25", "2026-07-28"])
async def test_in_memory_either_stubs_subscriptions_are_refused(stub: str) -> None:
    """The app's own subscribe handler (a 2025-11-25 stub) or the runtime's (a 2026-07-28 stub)."""
    app = guarded_app(protocol=stub)
    async with connect_in_memory(app.server, client_module("2025-11-25").Client) as client:
        with pytest.raises(McpError, match="resources/subscribe refused: 'notes://by/bob' needs the scope notes:admin"):
            await client.subscribe_resource(uri="notes://by/bob")
        await client.subscribe_resource(uri="notes://public")
        assert await app.resource_updated("notes://by/bob") == 0
        assert await app.resource_updated("notes://public") == 1


async def test_in_memory_a_listen_stream_naming_a_scoped_resource_is_refused() -> None:
    app = guarded_app()
    async with connect_in_memory(app.server, client_module("2026-07-28").Client) as client:
        wanted = {"resourceSubscriptions": ["notes://public", "notes://by/bob"]}
        with pytest.raises(McpError) as refused:  # the refusal itself, not an exception group around it
            async with client.listen(wanted):
                pass
    assert refused.value.code == INVALID_PARAMS
    assert refused.value.message == (
        "subscriptions/listen refused: 'notes://by/bob' needs the scope notes:admin, which an unauthenticated "
        "caller was not granted (insufficient_scope)"
    )
