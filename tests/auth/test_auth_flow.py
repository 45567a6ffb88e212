"""OAuth end to end on 127.0.0.1: our `connect_http` client with `OAuthClientAuth` -> 401 -> discovery ->
registration -> authorization (headless) -> token -> the MCP call succeeds against the echo example
behind `require_bearer`; and the ways it must fail (wrong issuer, resource mismatch, tampered state,
refused registration, step-up limit) or recover (expired token refresh, authorization-server migration).

Failure paths also run through a plain `httpx.AsyncClient(auth=...)`, where the exact exception type
is visible (the MCP transports turn it into a failed request)."""

from __future__ import annotations

import base64
import json
import socket
from pathlib import Path
from urllib.parse import quote_plus

import anyio
import httpx
import pytest
from starlette.responses import JSONResponse

from mcp_bindings.runtime.auth import (
    AuthorizationDeniedError,
    AuthorizationLimitError,
    ClientCredentials,
    HeadlessAuthorizationHandler,
    InMemoryTokenStorage,
    IssuerMismatchError,
    IssuerParameterError,
    JsonFileTokenStorage,
    JWTVerifier,
    LoopbackAuthorizationHandler,
    OAuthClientAuth,
    RegistrationError,
    ResourceMismatchError,
    StateMismatchError,
)
from mcp_bindings.runtime.client.http import connect_http, connect_sse
from mcp_bindings.runtime.rpc.errors import McpError
from tests.peers.auth_harness import READ, WRITE, bind_local, oauth_stack, read_write_policy, serve
from tests.peers.auth_server import AuthServerOptions
from tests.peers.harness import client_module
from tests.support.auth import STATELESS_BODY, STATELESS_HEADERS, VERSIONS, call_echo, raw_list_tools

pytestmark = pytest.mark.anyio
LIMIT = 30  # seconds any one test may take


def mcp_failure(exc: BaseException) -> McpError:
    """What `connect_http` raised, which must be the McpError itself (never an exception group)."""
    assert isinstance(exc, McpError), repr(exc)
    return exc


def scopes(params: dict[str, str]) -> list[str]:
    return params.get("scope", "").split()


# -- the happy path --------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
async def test_happy_path_end_to_end(version: str) -> None:
    headers_seen: list[list[tuple[bytes, bytes]]] = []
    storage = InMemoryTokenStorage()
    with anyio.fail_after(LIMIT):
        async with oauth_stack(headers_seen=headers_seen, stub=version) as stack:
            auth = OAuthClientAuth(storage=storage, client_name="test client")
            async with connect_http(stack.mcp_url, client_module(version).Client, auth=auth) as client:
                tools = await client.list_tools()
                assert [t.name for t in tools.tools] == ["echo"]
                result = await client.call_tool(name="echo", arguments={"text": "hello"})
                assert result.content[0].text == "hello"
    a = stack.auth
    assert [r.method + " " + r.path for r in a.requests[:4]] == [
        "GET /.well-known/oauth-authorization-server",
        "POST /register",
        "GET /authorize",
        "POST /token",
    ]
    registration = a.of("/register")[0].params
    assert registration["application_type"] == "native"
    assert "refresh_token" in json.loads(registration["grant_types"])
    assert json.loads(registration["redirect_uris"]) == [auth.handler.redirect_uri]
    authorize = a.of("/authorize")[0].params
    assert authorize["code_challenge_method"] == "S256" and authorize["code_challenge"]
    assert authorize["resource"] == stack.mcp_url
    assert scopes(authorize) == [READ]  # the challenge's scope, exactly
    assert len(authorize["state"]) >= 32
    token = a.of("/token")[0].params
    assert token["grant_type"] == "authorization_code" and token["resource"] == stack.mcp_url
    assert len(token["code_verifier"]) >= 43
    assert len(a.of("/authorize")) == 1  # one authorization served every request
    # The MCP app saw the verified token's claims, never the token itself.
    assert stack.seen and all(info.audience == (stack.mcp_url,) and READ in info.scopes for info in stack.seen)
    assert headers_seen and all(b"authorization" not in dict(h) for h in headers_seen)
    stored = await storage.get_tokens(stack.mcp_url)
    assert stored is not None and stored.issuer == a.issuer and stored.refresh_token
    assert await storage.get_client(a.issuer) is not None


async def test_concurrent_requests_share_one_authorization() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack() as stack:
            auth = OAuthClientAuth()
            async with connect_http(stack.mcp_url, client_module("2026-07-28").Client, auth=auth) as client:
                texts: list[str] = []

                async def one(i: int) -> None:
                    result = await client.call_tool(name="echo", arguments={"text": str(i)})
                    texts.append(result.content[0].text)

                async with anyio.create_task_group() as group:
                    for i in range(8):
                        group.start_soon(one, i)
    assert sorted(texts) == sorted(str(i) for i in range(8))
    assert len(stack.auth.of("/authorize")) == 1
    assert len(stack.auth.of("/register")) == 1


async def test_persistent_storage_reuses_registration_and_token(tmp_path: Path) -> None:
    path = tmp_path / "oauth.json"
    with anyio.fail_after(LIMIT):
        async with oauth_stack() as stack:
            assert await call_echo(stack, OAuthClientAuth(storage=JsonFileTokenStorage(path))) == "hi"
            again = await call_echo(stack, OAuthClientAuth(storage=JsonFileTokenStorage(path)), text="again")
    assert again == "again"
    assert len(stack.auth.of("/register")) == 1 and len(stack.auth.of("/authorize")) == 1
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    data = json.loads(path.read_text())
    assert list(data["clients"]) == [stack.auth.issuer] and list(data["tokens"]) == [stack.mcp_url]


async def test_legacy_sse_transport_with_auth() -> None:
    """HTTP+SSE (2024-11-05): the GET stream and the POSTs carry the token; the resource is the origin."""
    with anyio.fail_after(LIMIT):
        async with oauth_stack(resource_path="", stub="2024-11-05") as stack:
            auth = OAuthClientAuth()
            async with connect_sse(stack.rs_base + "/sse", client_module("2024-11-05").Client, auth=auth) as client:
                result = await client.call_tool(name="echo", arguments={"text": "sse"})
                assert result.content[0].text == "sse"
    assert stack.auth.of("/authorize")[0].params["resource"] == stack.rs_base
    assert len(stack.auth.of("/authorize")) == 1


async def test_loopback_handler_receives_the_redirect() -> None:
    """The browser handler: a one-shot listener on 127.0.0.1 gets the redirect (the "browser" here is
    httpx following the authorization server's redirect)."""
    opened: list[str] = []

    async def browser(url: str) -> None:
        opened.append(url)
        async with httpx.AsyncClient(follow_redirects=True, timeout=10) as http:
            page = await http.get(url)
            assert page.status_code == 200 and b"Authorization complete" in page.content

    handler = LoopbackAuthorizationHandler(open_browser=browser, timeout=20)
    with anyio.fail_after(LIMIT):
        async with oauth_stack() as stack:
            assert await call_echo(stack, OAuthClientAuth(handler)) == "hi"
    assert len(opened) == 1
    assert stack.auth.of("/authorize")[0].params["redirect_uri"] == handler.redirect_uri


async def test_loopback_handler_binds_its_port_once() -> None:
    """The handler binds its port at construction and keeps it: no other socket can take it between
    two authorizations, and both come back to the same redirect URI (what was registered)."""
    seen: list[str] = []

    async def browser(url: str) -> None:
        async with httpx.AsyncClient(follow_redirects=True, timeout=10) as http:
            await http.get(url)
        seen.append(url)

    def bind_again(port: int) -> None:  # as a server would (SO_REUSEADDR: TIME_WAIT is no obstacle)
        with socket.socket() as other:
            other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            other.bind(("127.0.0.1", port))

    with LoopbackAuthorizationHandler(open_browser=browser, timeout=20) as handler:
        with pytest.raises(OSError):
            bind_again(handler.port)
        redirect = handler.redirect_uri
        with anyio.fail_after(LIMIT):
            async with oauth_stack() as stack:
                assert await call_echo(stack, OAuthClientAuth(handler)) == "hi"
            async with oauth_stack() as stack:
                assert await call_echo(stack, OAuthClientAuth(handler)) == "hi"
        assert handler.redirect_uri == redirect and len(seen) == 2
        with pytest.raises(OSError):
            bind_again(handler.port)
    bind_again(handler.port)  # close() released it


async def test_loopback_handler_takes_a_bound_socket() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    with LoopbackAuthorizationHandler(sock=sock) as handler:
        assert handler.redirect_uri == f"http://127.0.0.1:{sock.getsockname()[1]}/callback"
    assert sock.fileno() == -1  # the handler owned it


# -- registration choices and token endpoint authentication -----------------------------------


async def test_preregistered_client_with_basic_auth_and_no_dcr() -> None:
    options = AuthServerOptions(
        registration="disabled",
        token_auth_methods=("client_secret_basic",),
        preregistered={
            "pre-client": {
                "client_id": "pre-client",
                "client_secret": "s3cret/+ x",
                "redirect_uris": ["http://127.0.0.1:33418/callback"],
                "token_endpoint_auth_method": "client_secret_basic",
            }
        },
    )
    with anyio.fail_after(LIMIT):
        async with oauth_stack(options) as stack:
            auth = OAuthClientAuth(client=ClientCredentials(client_id="pre-client", client_secret="s3cret/+ x"))
            assert await call_echo(stack, auth) == "hi"
    assert not stack.auth.of("/register")
    token = stack.auth.of("/token")[0]
    assert token.headers["authorization"].startswith("Basic ") and "client_secret" not in token.params


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post", "none"])
async def test_token_endpoint_auth_method_as_advertised(method: str) -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(AuthServerOptions(token_auth_methods=(method,))) as stack:
            assert await call_echo(stack, OAuthClientAuth()) == "hi"
    token = stack.auth.of("/token")[0]
    used = (
        "client_secret_basic"
        if token.headers.get("authorization", "").startswith("Basic ")
        else "client_secret_post"
        if "client_secret" in token.params
        else "none"
    )
    assert used == method
    assert json.loads(json.dumps(stack.auth.of("/register")[0].params["token_endpoint_auth_method"])) == method


async def test_client_id_metadata_document_instead_of_dcr() -> None:
    url = "https://client.example.com/mcp-client.json"
    auth = OAuthClientAuth(client_metadata_url=url)
    options = AuthServerOptions(cimd_supported=True, cimd_documents={url: auth.client_metadata_document()})
    with anyio.fail_after(LIMIT):
        async with oauth_stack(options) as stack:
            assert await call_echo(stack, auth) == "hi"
    assert not stack.auth.of("/register")
    assert stack.auth.of("/authorize")[0].params["client_id"] == url
    assert stack.auth.of("/token")[0].params["client_id"] == url


async def test_registration_refused() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(AuthServerOptions(registration="refuse")) as stack:
            with pytest.raises(RegistrationError, match="registration refused: HTTP 400 invalid_client_metadata"):
                await raw_list_tools(stack, OAuthClientAuth())
            with pytest.raises(BaseException) as caught:
                await call_echo(stack, OAuthClientAuth())
    assert "registration refused" in mcp_failure(caught.value).message
    assert len(stack.auth.of("/register")) == 2 and not stack.auth.of("/authorize")


async def test_no_way_to_register() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(AuthServerOptions(registration="disabled")) as stack:
            with pytest.raises(RegistrationError, match="no way to register"):
                await raw_list_tools(stack, OAuthClientAuth())
    assert not stack.auth.of("/authorize")


# -- scopes ----------------------------------------------------------------------------------


async def test_scopes_supported_when_the_challenge_has_none() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(required_scopes=()) as stack:
            assert await call_echo(stack, OAuthClientAuth()) == "hi"
    assert scopes(stack.auth.of("/authorize")[0].params) == [READ, WRITE]


async def test_scope_omitted_when_nothing_is_known() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(required_scopes=(), scopes_supported=None) as stack:
            assert await call_echo(stack, OAuthClientAuth()) == "hi"
    assert "scope" not in stack.auth.of("/authorize")[0].params


@pytest.mark.parametrize("offered", [True, False])
async def test_offline_access_only_when_offered(offered: bool) -> None:
    options = AuthServerOptions(scopes_supported=(READ, WRITE, "offline_access") if offered else (READ, WRITE))
    with anyio.fail_after(LIMIT):
        async with oauth_stack(options) as stack:
            assert await call_echo(stack, OAuthClientAuth()) == "hi"
    assert scopes(stack.auth.of("/authorize")[0].params) == ([READ, "offline_access"] if offered else [READ])


async def test_step_up_on_insufficient_scope() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(required_scopes=read_write_policy) as stack:
            auth = OAuthClientAuth()
            async with connect_http(stack.mcp_url, client_module("2026-07-28").Client, auth=auth) as client:
                await client.list_tools()
                result = await client.call_tool(name="echo", arguments={"text": "write"})
                assert result.content[0].text == "write"
                await client.list_tools()
    authorizations = stack.auth.of("/authorize")
    assert [scopes(a.params) for a in authorizations] == [[READ], [READ, WRITE]]
    assert auth.tokens is not None and auth.tokens.scope == f"{READ} {WRITE}"


async def test_step_up_gives_up_after_three_authorizations() -> None:
    options = AuthServerOptions(grant_scopes=(READ,))  # the user never grants mcp:write
    with anyio.fail_after(LIMIT):
        async with oauth_stack(options, required_scopes=read_write_policy) as stack:
            auth = OAuthClientAuth()
            async with connect_http(stack.mcp_url, client_module("2026-07-28").Client, auth=auth) as client:
                await client.list_tools()  # one authorization, and the request gets through
                for _ in range(2):
                    with pytest.raises(McpError, match="403 insufficient_scope"):
                        await client.call_tool(name="echo", arguments={"text": "write"})
    step_ups = stack.auth.of("/authorize")[1:]
    assert len(step_ups) == 3  # bounded, and not repeated for the second call
    assert all(scopes(a.params) == [READ, WRITE] for a in step_ups)


async def test_access_denied_is_reported() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(AuthServerOptions(deny_scopes=(READ,))) as stack:
            with pytest.raises(AuthorizationDeniedError, match="access_denied"):
                await raw_list_tools(stack, OAuthClientAuth())
    assert not stack.auth.of("/token")


# -- issuer checks (RFC 8414 §3.3, RFC 9207) -------------------------------------------------


async def test_metadata_issuer_mismatch_is_rejected() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(AuthServerOptions(metadata_issuer="https://attacker.example.com")) as stack:
            with pytest.raises(IssuerMismatchError):
                await raw_list_tools(stack, OAuthClientAuth())
            with pytest.raises(BaseException) as caught:
                await call_echo(stack, OAuthClientAuth(), version="2025-11-25")
    assert "names issuer 'https://attacker.example.com'" in mcp_failure(caught.value).message
    assert stack.auth.of("/.well-known/oauth-authorization-server") or stack.auth.requests
    assert not (stack.auth.of("/register") or stack.auth.of("/authorize") or stack.auth.of("/token"))


@pytest.mark.parametrize(
    ("iss_supported", "iss_in_redirect"),
    [(True, "wrong"), (True, "normalized"), (True, "omit"), (None, "wrong")],
    ids=["wrong-issuer", "normalized", "advertised-but-missing", "unexpected"],
)
async def test_authorization_response_iss_is_rejected(iss_supported: bool | None, iss_in_redirect: str) -> None:
    options = AuthServerOptions(iss_supported=iss_supported, iss_in_redirect=iss_in_redirect)
    with anyio.fail_after(LIMIT):
        async with oauth_stack(options) as stack:
            with pytest.raises(IssuerParameterError):
                await raw_list_tools(stack, OAuthClientAuth())
    assert len(stack.auth.of("/authorize")) == 1 and not stack.auth.of("/token")


@pytest.mark.parametrize(("iss_supported", "iss_in_redirect"), [(True, "correct"), (None, "omit"), (False, "omit")])
async def test_authorization_response_iss_is_accepted(iss_supported: bool | None, iss_in_redirect: str) -> None:
    options = AuthServerOptions(iss_supported=iss_supported, iss_in_redirect=iss_in_redirect)
    with anyio.fail_after(LIMIT):
        async with oauth_stack(options) as stack:
            assert await call_echo(stack, OAuthClientAuth()) == "hi"
    assert len(stack.auth.of("/token")) == 1


async def test_tampered_state_is_rejected() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(AuthServerOptions(tamper_state=True)) as stack:
            with pytest.raises(StateMismatchError):
                await raw_list_tools(stack, OAuthClientAuth())
            with pytest.raises(BaseException) as caught:
                await call_echo(stack, OAuthClientAuth())
    assert "state does not match" in mcp_failure(caught.value).message
    assert len(stack.auth.of("/authorize")) == 2 and not stack.auth.of("/token")


# -- resource binding ------------------------------------------------------------------------


async def test_resource_mismatch_is_rejected() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack() as stack:
            stack.app.metadata["resource"] = "https://evil.example.com/mcp"
            stack.app.set_authorization_servers([stack.auth.issuer])  # re-serialise the PRM
            with pytest.raises(ResourceMismatchError):
                await raw_list_tools(stack, OAuthClientAuth())
            with pytest.raises(BaseException) as caught:
                await call_echo(stack, OAuthClientAuth(), version="2025-11-25")
    assert "evil.example.com" in mcp_failure(caught.value).message
    assert not stack.auth.requests  # the authorization server was never contacted


async def test_token_for_another_resource_is_refused_by_the_server() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack() as stack:
            foreign = stack.auth.mint(resource="http://127.0.0.1:1/other", scope=READ, client_id="x")
            async with httpx.AsyncClient(timeout=10) as http:
                response = await http.post(
                    stack.mcp_url,
                    json=STATELESS_BODY,
                    headers={**STATELESS_HEADERS, "Authorization": f"Bearer {foreign}"},
                )
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert not stack.seen


# -- refresh ---------------------------------------------------------------------------------


async def test_expired_token_is_refreshed_after_a_401() -> None:
    """The server rejects the expired token; the client, unaware of the lifetime, refreshes then."""
    options = AuthServerOptions(access_token_lifetime=2, report_expires_in=False)
    with anyio.fail_after(LIMIT):
        async with oauth_stack(options) as stack:
            auth = OAuthClientAuth()
            assert await call_echo(stack, auth, text="one") == "one"
            first = auth.tokens
            await anyio.sleep(3.1)  # past the token's exp (at most 3 s away)
            assert await call_echo(stack, auth, text="two") == "two"
    assert first is not None and auth.tokens is not None
    assert auth.tokens.access_token != first.access_token and auth.tokens.refresh_token != first.refresh_token
    grants = [r.params["grant_type"] for r in stack.auth.of("/token")]
    assert grants == ["authorization_code", "refresh_token"]
    assert stack.auth.of("/token")[1].params["resource"] == stack.mcp_url
    assert len(stack.auth.of("/authorize")) == 1


async def test_expired_token_is_refreshed_before_sending() -> None:
    options = AuthServerOptions(access_token_lifetime=2)
    with anyio.fail_after(LIMIT):
        async with oauth_stack(options) as stack:
            auth = OAuthClientAuth(refresh_skew=0)
            assert await call_echo(stack, auth, text="one") == "one"
            await anyio.sleep(2.1)  # past expires_in as the client knows it
            denied_before = stack.statuses.count(401)
            assert await call_echo(stack, auth, text="two") == "two"
            assert stack.statuses.count(401) == denied_before  # refreshed before sending: never refused
    assert [r.params["grant_type"] for r in stack.auth.of("/token")] == ["authorization_code", "refresh_token"]


async def test_failed_refresh_falls_back_to_authorization() -> None:
    options = AuthServerOptions(access_token_lifetime=2, report_expires_in=False)
    with anyio.fail_after(LIMIT):
        async with oauth_stack(options) as stack:
            auth = OAuthClientAuth()
            assert await call_echo(stack, auth) == "hi"
            stack.auth.refresh.clear()  # the authorization server forgot every refresh token
            await anyio.sleep(3.1)
            assert await call_echo(stack, auth) == "hi"
    assert [r.params["grant_type"] for r in stack.auth.of("/token")] == [
        "authorization_code",
        "refresh_token",
        "authorization_code",
    ]
    assert len(stack.auth.of("/authorize")) == 2


async def test_rejected_fresh_tokens_end_in_authorization_limit() -> None:
    """A server that rejects every token: three authorizations, then AuthorizationLimitError."""
    with anyio.fail_after(LIMIT):
        async with oauth_stack() as stack:
            stack.verifier.current = JWTVerifier(issuer="https://nobody.example.com", jwks={"keys": []})
            with pytest.raises(AuthorizationLimitError):
                await raw_list_tools(stack, OAuthClientAuth())
    assert len(stack.auth.of("/authorize")) == 3


# -- authorization-server migration (SEP-2352) -----------------------------------------------


async def test_authorization_server_migration_reregisters() -> None:
    storage = InMemoryTokenStorage()
    with anyio.fail_after(LIMIT):
        async with oauth_stack() as stack:
            auth = OAuthClientAuth(storage=storage)
            assert await call_echo(stack, auth, text="before") == "before"
            old_client = await storage.get_client(stack.auth.issuer)
            assert old_client is not None
            new = await stack.add_auth_server()
            stack.app.set_authorization_servers([new.issuer])
            stack.verifier.current = JWTVerifier(issuer=new.issuer, jwks_uri=new.jwks_uri, leeway=0)
            assert await call_echo(stack, auth, text="after") == "after"
    assert len(new.of("/register")) == 1
    presented = [r.params.get("client_id") for r in new.of("/authorize") + new.of("/token")]
    assert old_client.client_id not in presented
    assert auth.tokens is not None and auth.tokens.issuer == new.issuer
    assert not stack.auth.of("/token")[1:]  # no refresh attempted at the old server either
    assert (await storage.get_client(new.issuer)) is not None
    assert (await storage.get_client(stack.auth.issuer)) == old_client  # kept, bound to its own issuer


async def test_preregistered_credentials_are_not_used_with_another_issuer() -> None:
    options = AuthServerOptions(registration="disabled")
    with anyio.fail_after(LIMIT):
        async with oauth_stack(options) as stack:
            pre = ClientCredentials(client_id="pre", client_secret="x", issuer="https://other-as.example.com")
            with pytest.raises(RegistrationError, match=r"pre-registered client is for https://other-as\.example\.com"):
                await raw_list_tools(stack, OAuthClientAuth(client=pre))
    assert not stack.auth.of("/authorize")


PRE = ClientCredentials(client_id="pre-client", client_secret="s3cret/+ x")
PRE_RECORD = {
    "client_id": PRE.client_id,
    "client_secret": PRE.client_secret,
    "redirect_uris": ["http://127.0.0.1:33418/callback"],
    "token_endpoint_auth_method": "client_secret_basic",
}


@pytest.mark.parametrize("client", ["registered", "preregistered"])
async def test_credentials_never_reach_an_authorization_server_another_origin_names(client: str) -> None:
    """GHSA-6qxp-vccf-f47h (TypeScript SDK), its exact case: a client holding a refresh token and a
    client secret (registered, or given to it) meets a 401 whose `WWW-Authenticate` names a
    `resource_metadata` URL on another origin; that document keeps this server as its `resource` but
    names another authorization server. The vulnerable client refreshed there, sending the refresh
    token and the secret. Ours may sign in there anew (the server asked it to), but with nothing the
    first authorization server gave it or it was configured with for that one."""
    basic = ("client_secret_basic",)  # a confidential client
    if client == "registered":
        options = AuthServerOptions(token_auth_methods=basic)
    else:
        preregistered = {PRE.client_id: PRE_RECORD}
        options = AuthServerOptions(token_auth_methods=basic, registration="disabled", preregistered=preregistered)
    storage = InMemoryTokenStorage()
    with anyio.fail_after(LIMIT):
        async with oauth_stack(options) as stack:
            auth = OAuthClientAuth(storage=storage, client=PRE if client == "preregistered" else None)
            assert await call_echo(stack, auth, text="before") == "before"
            first = PRE if client == "preregistered" else await storage.get_client(stack.auth.issuer)
            assert first is not None and first.client_secret and auth.tokens is not None
            refresh_token = auth.tokens.refresh_token
            assert refresh_token
            evil = await stack.add_auth_server()
            sock, prm_origin = bind_local()  # the other origin, serving a PRM that names `evil`
            document = {"resource": stack.mcp_url, "authorization_servers": [evil.issuer]}
            assert stack.exits is not None
            await stack.exits.enter_async_context(serve(JSONResponse(document), sock))
            stack.app.metadata_url = prm_origin + "/.well-known/oauth-protected-resource"  # the 401 names it
            stack.verifier.current = JWTVerifier(issuer=evil.issuer, jwks_uri=evil.jwks_uri, leeway=0)
            try:
                after: str | McpError = await call_echo(stack, auth, text="after")
            except McpError as exc:  # (what was sent where is checked first)
                after = exc
    pairs = [(first.client_id, first.client_secret), (quote_plus(first.client_id), quote_plus(first.client_secret))]
    basics = {"Basic " + base64.b64encode(f"{i}:{secret}".encode()).decode() for i, secret in pairs}  # RFC 6749 2.3.1
    assert evil.requests, "the client did not go to the other authorization server at all"
    for request in evil.requests:
        sent = [*request.params.values(), *request.headers.values()]
        assert not [v for v in sent if refresh_token in v or first.client_secret in v or v in basics], request
        assert request.params.get("client_id") != first.client_id, request
    assert not [r for r in evil.of("/token") if r.params.get("grant_type") == "refresh_token"]
    assert not [r for r in stack.auth.of("/token") if r.params.get("grant_type") == "refresh_token"]
    assert after == "after"  # signed in at the other server, as a new client


# -- the headless handler ----------------------------------------------------------------------


async def test_headless_handler_fails_on_a_login_page() -> None:
    async def login_page(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, html="<form>log in</form>")

    handler = HeadlessAuthorizationHandler(http_client=httpx.AsyncClient(transport=httpx.MockTransport(login_page)))
    from mcp_bindings.runtime.auth import AuthorizationError

    with anyio.fail_after(LIMIT), pytest.raises(AuthorizationError, match="cannot log in"):
        await handler.authorize("https://as.example.com/authorize?x=1")


async def test_headless_handler_follows_the_servers_own_redirects() -> None:
    async def server(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/authorize":
            return httpx.Response(302, headers={"Location": "/login?step=2"})
        assert request.url.path == "/login"
        return httpx.Response(302, headers={"Location": "http://127.0.0.1:33418/callback?code=c&state=s&iss=x"})

    handler = HeadlessAuthorizationHandler(http_client=httpx.AsyncClient(transport=httpx.MockTransport(server)))
    with anyio.fail_after(LIMIT):
        response = await handler.authorize("https://as.example.com/authorize")
    assert (response.code, response.state, response.iss) == ("c", "s", "x")
    assert handler.visited == ["https://as.example.com/authorize", "https://as.example.com/login?step=2"]
