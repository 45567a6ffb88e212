"""Issue 48 items 3 and 4: the typed principal (`ctx.principal`, middleware's `call.principal`) and
per-user visibility (`scopes=[...]`, `allow=` on tools, resources, templates and prompts).

Over real HTTP on 127.0.0.1: the app behind `App(auth=...)`, tokens from the test authorization
server (tests/peers/auth_server.py), our client stepping up on the 403 `insufficient_scope`
challenge, at 2025-11-25 (one session across the step-up) and 2026-07-28. On stdio: the app in its
own process, refusals as JSON-RPC errors naming the missing scope."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import FrozenInstanceError, dataclass
from typing import Any

import anyio
import httpx
import pytest

from mcp_bindings.runtime.app import App, AppDefinitionError, Auth, Context, Principal
from mcp_bindings.runtime.auth import OAuthClientAuth
from mcp_bindings.runtime.auth.challenge import parse_challenges
from mcp_bindings.runtime.auth.verifiers import AccessToken
from mcp_bindings.runtime.client.http import connect_http, connect_sse
from mcp_bindings.runtime.client.task_handle import TaskHandle
from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.middleware.chain import Call, Next
from mcp_bindings.runtime.protocol.principal import PrincipalKey, principal_of
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError
from mcp_bindings.runtime.stdio.connect import connect_stdio
from tests.auth.conftest import ADMIN, READ, WRITE, guarded_app
from tests.peers.auth_harness import bind_local, serve
from tests.peers.auth_server import AuthServer
from tests.peers.harness import client_module
from tests.support import REPO_ROOT

pytestmark = pytest.mark.anyio

LIMIT = 60  # seconds any one test may take
VERSIONS = ["2025-11-25", "2026-07-28"]


@dataclass
class Served:
    auth: AuthServer
    url: str  # the MCP endpoint (the resource)
    seen: list[Principal | None]  # `call.principal` of every request the app's middleware saw


@asynccontextmanager
async def guarded_server(with_task: bool = False) -> AsyncIterator[Served]:
    """The authorization server and the guarded app behind `App(auth=...)` (mcp:read for every
    request); `with_task`: and a tool run as a task answering its principal's scopes."""
    as_sock, as_url = bind_local()
    rs_sock, rs_url = bind_local()
    auth = AuthServer(as_url)
    url = rs_url + "/mcp"
    settings = Auth(resource=url, issuer=auth.issuer, jwks_uri=auth.jwks_uri, scopes=[READ])
    app = guarded_app(settings, "2025-11-25" if with_task else None)  # (a task: the 2025-11-25 way)
    if with_task:

        @app.tool(task=True)
        async def scopes_later(ctx: Context) -> str:
            await anyio.sleep(0.1)
            return " ".join(sorted(ctx.principal.scopes)) if ctx.principal else "nobody"

    seen: list[Principal | None] = []

    @app.middleware
    async def record(call: Call, call_next: Next) -> Any:
        seen.append(call.principal)
        return await call_next(call)

    async with AsyncExitStack() as exits:
        await exits.enter_async_context(serve(auth.app, as_sock))
        await exits.enter_async_context(serve(app.asgi(), rs_sock))
        yield Served(auth, url, seen)


def authorized_scopes(auth: AuthServer) -> list[list[str]]:
    return [sorted(a.params.get("scope", "").split()) for a in auth.of("/authorize")]


def tool_names(result: Any) -> list[str]:
    return sorted(tool.name for tool in result.tools)


@pytest.mark.parametrize("version", VERSIONS)
async def test_entries_are_listed_to_who_may_use_them_and_the_client_steps_up(version: str) -> None:
    with anyio.fail_after(LIMIT):
        async with guarded_server() as served:
            client_cls = client_module(version).Client
            async with connect_http(served.url, client_cls, auth=OAuthClientAuth(), protocol_version=version) as client:
                assert tool_names(await client.list_tools()) == ["notes", "whoami"]  # mcp:read only
                assert (await client.list_prompts()).prompts == []
                assert [r.uri for r in (await client.list_resources()).resources] == ["notes://public"]
                assert (await client.list_resource_templates()).resource_templates == []
                before = (await client.call_tool(name="whoami")).structured_content
                # The call needs mcp:write: 403 insufficient_scope, a new authorization, the call again.
                added = await client.call_tool(name="add_note", arguments={"text": "x"})
                assert added.content[0].text == "added x"
                # The same client (the same session at 2025-11-25) sees what its new token allows.
                assert tool_names(await client.list_tools()) == ["add_note", "notes", "whoami"]
                assert [p.name for p in (await client.list_prompts()).prompts] == ["draft"]
                after = (await client.call_tool(name="whoami")).structured_content
    assert authorized_scopes(served.auth) == [[READ], sorted([READ, WRITE])]
    assert before is not None and after is not None
    assert before["scopes"] == [READ] and after["scopes"] == sorted([READ, WRITE])
    key = json.dumps([served.auth.issuer, "user-1", before["client_id"]], separators=(",", ":"))
    assert before["key"] == after["key"] == key
    assert after["issuer"] == served.auth.issuer and after["subject"] == "user-1" and after["client_id"]
    assert isinstance(after["expires_at"], float) and after["jti"] != before["jti"]  # each its own token's
    typed = [p for p in served.seen if p is not None]
    assert typed and len(typed) == len(served.seen)  # the middleware's call.principal: typed, every time
    assert {p.key for p in typed} == {after["key"]}


async def test_the_legacy_sse_transport_carries_the_principal() -> None:
    """2024-11-05 HTTP+SSE behind `App(auth=...)`: each POST's token is the principal of what it
    carries (its session is bound to the token's key), so a token with mcp:write sees and calls
    add_note there too."""
    with anyio.fail_after(LIMIT):
        async with guarded_server() as served:
            writer = served.auth.mint(resource=served.url, scope=f"{READ} {WRITE}", client_id="c")
            sse = served.url.removesuffix("/mcp") + "/sse"
            headers = {"Authorization": f"Bearer {writer}"}
            async with connect_sse(sse, client_module("2024-11-05").Client, headers=headers) as client:
                assert tool_names(await client.list_tools()) == ["add_note", "notes", "whoami"]
                assert (await client.call_tool(name="add_note", arguments={"text": "y"})).content[0].text == "added y"
                whoami = (await client.call_tool(name="whoami")).content[0].text
    assert json.loads(whoami)["scopes"] == sorted([READ, WRITE])


async def test_a_task_reads_the_principal_of_the_request_that_started_it() -> None:
    with anyio.fail_after(LIMIT):
        async with guarded_server(with_task=True) as served:
            reader = served.auth.mint(resource=served.url, scope=READ, client_id="c")
            headers = {"Authorization": f"Bearer {reader}"}
            async with connect_http(served.url, client_module("2025-11-25").Client, headers=headers) as client:
                handle = await client.call_tool(name="scopes_later", task={"ttl": 60_000})
                assert isinstance(handle, TaskHandle)
                result = await handle.result()
    assert result.content[0].text == READ


async def test_a_call_outside_the_token_scopes_gets_the_step_up_challenge() -> None:
    """What a client sees on the wire for each kind of entry: 403, `WWW-Authenticate: Bearer
    error="insufficient_scope"` naming every scope the request needs, and the metadata URL."""
    requests = {
        "tools/call": {"name": "add_note", "arguments": {"text": "x"}},
        "prompts/get": {"name": "draft", "arguments": {"topic": "x"}},
        "resources/read": {"uri": "notes://audit"},
        "completion/complete": {"ref": {"type": "ref/resource", "uri": "notes://by/{author}"}, "argument": {}},
    }
    needs = {"tools/call": WRITE, "prompts/get": WRITE, "resources/read": ADMIN, "completion/complete": ADMIN}
    with anyio.fail_after(LIMIT):
        async with guarded_server() as served, httpx.AsyncClient(timeout=10) as http:
            reader = served.auth.mint(resource=served.url, scope=READ, client_id="c")
            template = {"jsonrpc": "2.0", "id": 1, "method": "", "params": {}}
            for method, params in requests.items():
                body = {**template, "method": method, "params": params}
                headers = {"Authorization": f"Bearer {reader}", "Accept": "application/json, text/event-stream"}
                response = await http.post(served.url, json=body, headers=headers)
                assert response.status_code == 403, method
                (challenge,) = parse_challenges(response.headers["www-authenticate"])
                assert challenge.scheme.lower() == "bearer" and challenge.error == "insufficient_scope"
                assert challenge.scopes == [READ, needs[method]], method
                assert challenge.params["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
            metadata = (await http.get(served.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"))).json()
            assert metadata["scopes_supported"] == [READ, WRITE, ADMIN]


async def test_an_allow_predicate_reads_the_verified_claims() -> None:
    with anyio.fail_after(LIMIT):
        async with guarded_server() as served:
            client_cls = client_module("2026-07-28").Client
            seen: dict[str, list[str]] = {}
            for org in ("acme", "other"):
                bearer = served.auth.mint(resource=served.url, scope=READ, client_id="c", subject=f"{org}-user")
                headers = {"Authorization": f"Bearer {bearer}"}
                async with connect_http(served.url, client_cls, headers=headers) as client:
                    seen[org] = tool_names(await client.list_tools())
                    if org == "acme":
                        assert (await client.call_tool(name="acme_report")).content[0].text == "acme only"
                    else:
                        with pytest.raises(McpError, match="Unknown tool: acme_report") as refused:
                            await client.call_tool(name="acme_report")
                        assert refused.value.code == INVALID_PARAMS
    assert seen == {"acme": ["acme_report", "notes", "whoami"], "other": ["notes", "whoami"]}


async def test_on_stdio_a_refusal_names_the_missing_scope() -> None:
    """No transport authentication: nobody, so scoped entries are hidden, and a call gets -32602
    naming the scope (its data: `error`, `scope`, `missing`)."""
    command = [sys.executable, "-m", "tests.auth.conftest"]
    client_cls = client_module("2025-11-25").Client
    with anyio.fail_after(LIMIT):
        async with connect_stdio(command, client_cls, cwd=str(REPO_ROOT)) as client:
            assert tool_names(await client.list_tools()) == ["notes", "whoami"]
            with pytest.raises(McpError) as refused:
                await client.call_tool(name="add_note", arguments={"text": "x"})
            with pytest.raises(McpError) as unread:
                await client.read_resource(uri="notes://by/bob")
            whoami = (await client.call_tool(name="whoami")).structured_content
    assert refused.value.code == INVALID_PARAMS
    assert refused.value.message == (
        "tools/call refused: 'add_note' needs the scope mcp:write, which an unauthenticated caller was not "
        "granted (insufficient_scope)"
    )
    assert refused.value.data == {"error": "insufficient_scope", "scope": WRITE, "missing": [WRITE]}
    assert "'notes://by/bob' needs the scope notes:admin" in unread.value.message
    assert whoami == {"nobody": True}


def test_the_principal_is_typed_and_immutable_and_keeps_its_key() -> None:
    token = AccessToken(
        scopes=("a", "b"), client_id="cli", subject="alice", issuer="https://as", expires_at=5.0, claims={"org": "x"}
    )
    key = token.principal
    assert isinstance(key, PrincipalKey) and key == '["https://as","alice","cli"]'  # what sessions bind to
    principal = principal_of(key)
    assert principal == Principal("https://as", "alice", "cli", frozenset({"a", "b"}), 5.0)
    assert principal is not None and principal.key == key and principal.claims["org"] == "x"
    assert principal.has("a") and principal.missing(["a", "c"]) == ("c",)
    with pytest.raises(FrozenInstanceError):
        principal.subject = "mallory"  # type: ignore[misc]
    with pytest.raises(TypeError):
        principal.claims["org"] = "y"  # type: ignore[index]
    with pytest.raises(AttributeError):
        key.principal = principal  # type: ignore[misc]
    plain = principal_of("alice")  # a key that is no issuer-subject-client array (a test's)
    assert plain is not None and plain.subject == "alice" and plain.key == "alice"
    assert principal_of(None) is None


def test_allow_and_scopes_are_checked_at_registration() -> None:
    app = App("x")

    def ping() -> str:
        return "pong"

    with pytest.raises(AppDefinitionError, match="allow='yes' is not callable"):
        app.tool(allow="yes")(ping)  # pyright: ignore[reportArgumentType]
    with pytest.raises(AppDefinitionError, match=r"scopes='mcp:write' is one string; give a list"):
        app.prompt(scopes="mcp:write")(ping)


async def test_each_table_knows_its_guarded_entries_as_they_come_and_go() -> None:
    """`Table.guarded` (what a list reads instead of every entry's rule) follows registration and
    removal; what a caller is listed does not change with it."""
    app = guarded_app()
    tables = app.registries
    assert (tables.tools.guarded, tables.prompts.guarded) == ({"add_note", "acme_report"}, {"draft"})
    assert (tables.resources.guarded, tables.templates.guarded) == (
        {"notes://audit", "notes://acme"},
        {"notes://by/{author}"},
    )
    async with connect_in_memory(app.server, client_module("2025-11-25").Client) as client:
        before = tool_names(await client.list_tools())
        app.remove_tool("add_note")
        app.remove_tool("acme_report")
        assert not tables.tools.guarded
        unguarded = tool_names(await client.list_tools())

        def add_again() -> str:
            return "again"

        app.tool(scopes=[WRITE])(add_again)
        assert tables.tools.guarded == {"add_again"}
        again = tool_names(await client.list_tools())
    assert before == unguarded == again == ["notes", "whoami"]
    assert tables.tools.keys() == {"notes", "whoami", "add_again"}


async def test_the_health_probes_answer_without_a_token_and_nothing_else_does() -> None:
    """A load balancer's or Kubernetes' probe carries no credentials: `/healthz` and `/readyz` answer
    behind `App(auth=...)` (they said 401 before, so a protected app could not be health-checked),
    while the MCP endpoint and any other path still need the token."""
    with anyio.fail_after(LIMIT):
        async with guarded_server() as served:
            base = served.url.removesuffix("/mcp")
            async with httpx.AsyncClient() as http:
                health = await http.get(base + "/healthz")
                ready = await http.get(base + "/readyz/")
                posted = await http.post(base + "/healthz", content=b"{}")
                endpoint = await http.get(served.url, headers={"Accept": "text/event-stream"})
    assert (health.status_code, health.text) == (200, "ok\n")
    assert (ready.status_code, ready.text) == (200, "ready\n")
    assert posted.status_code == 401 and endpoint.status_code == 401


async def test_a_call_in_an_app_without_rules_looks_nothing_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every `tools/call` passes the access guard: where no entry of any table has a rule it goes
    straight on (the lookup of the entry it names was 8-10% of the app layer's time per call), and
    once one has a rule the lookup comes back."""
    from mcp_bindings.runtime.app import access

    looked: list[str] = []
    lookup = access.target
    monkeypatch.setattr(access, "target", lambda r, m, p: looked.append(m) or lookup(r, m, p))
    app = App("plain")

    @app.tool()
    def echo(text: str) -> str:
        return text

    async with connect_in_memory(app.server, client_module("2025-11-25").Client) as client:
        await client.call_tool(name="echo", arguments={"text": "a"})
        assert looked == []

        @app.tool(scopes=[WRITE])
        def write() -> str:
            return "w"

        await client.call_tool(name="echo", arguments={"text": "b"})
    assert looked == ["tools/call"]
