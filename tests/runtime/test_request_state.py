"""Sealed `requestState` (runtime/protocol/request_state.py): bound to its request and principal, expiring,
opaque, refused with -32602 naming `params.requestState` whatever is wrong with it.

Most tests drive a `ServerRuntime` directly (a 2026-07-28 server of our own, with a clock the test
moves); one runs the stateless multi-round flow through a typed in-memory client; the last two run
over real HTTP on 127.0.0.1 (the everything-server, and the bearer middleware for principals).
"""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import orjson
import pytest

from mcp_bindings.runtime.auth.resource_server import AccessToken, InvalidTokenError, require_bearer
from mcp_bindings.runtime.http.app import create_app
from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.protocol.request_state import MAX_INPUT_ROUNDS, RequestStateSealer
from mcp_bindings.runtime.rpc import jsonrpc
from mcp_bindings.runtime.rpc.errors import McpError
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.server.runtime import ServerRuntime
from mcp_bindings.v2026_07_28 import client as client_module
from mcp_bindings.v2026_07_28 import models as m
from mcp_bindings.v2026_07_28.server import Server
from tests.support.http import load_example, rpc, serve_in_thread, stateless, stateless_headers

pytestmark = pytest.mark.anyio

STATELESS = "2026-07-28"
DEADLINE = 20
META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientInfo": {"name": "pytest", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}
SECRET_STATE = "plan:transfer-1000-EUR-to-acct-DE89370400440532013000"
ANSWER = {"confirm": {"action": "accept", "content": {"ok": True}}}


def confirm() -> m.ElicitRequest:
    schema = m.ElicitRequestFormParamsRequestedSchema.model_validate(
        {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    )
    return m.ElicitRequest(
        method="elicitation/create", params=m.ElicitRequestFormParams(message="ok?", requested_schema=schema)
    )


class Stateful(Server):
    """Tools `alpha` and `beta`, a prompt and a resource: each asks once, with a state, then answers
    with the state it got back (so a test sees exactly what reached the handler)."""

    name = "stateful"
    version = "1.0.0"

    async def list_tools(self, params: Any, ctx: Any) -> m.ListToolsResult:
        schema = m.ToolInputSchema(type="object")
        return m.ListToolsResult(tools=[m.Tool(name=n, input_schema=schema) for n in ("alpha", "beta", "rounds")])

    async def call_tool(self, params: m.CallToolRequestParams, ctx: Any) -> m.CallToolResult | m.InputRequiredResult:
        if params.name == "rounds":  # one more round per answer, up to `arguments.rounds`
            done = int(params.request_state or "0")
            if done >= int((params.arguments or {}).get("rounds", 3)):
                return m.CallToolResult(content=[m.TextContent(text=f"rounds: {done}")])
            return m.InputRequiredResult(input_requests={"confirm": confirm()}, request_state=str(done + 1))
        if params.request_state is not None and params.input_responses:
            return m.CallToolResult(content=[m.TextContent(text=f"{params.name} got {params.request_state}")])
        return m.InputRequiredResult(
            input_requests={"confirm": confirm()}, request_state=f"{params.name}:{SECRET_STATE}"
        )

    async def list_prompts(self, params: Any, ctx: Any) -> m.ListPromptsResult:
        return m.ListPromptsResult(prompts=[m.Prompt(name="p1"), m.Prompt(name="p2")])

    async def get_prompt(self, params: m.GetPromptRequestParams, ctx: Any) -> m.GetPromptResult | m.InputRequiredResult:
        if params.request_state is not None:
            text = m.TextContent(text=f"{params.name} got {params.request_state}")
            return m.GetPromptResult(messages=[m.PromptMessage(role="user", content=text)])
        return m.InputRequiredResult(input_requests={"confirm": confirm()}, request_state=f"prompt:{params.name}")

    async def list_resources(self, params: Any, ctx: Any) -> m.ListResourcesResult:
        return m.ListResourcesResult(
            resources=[m.Resource(uri="test://a", name="a"), m.Resource(uri="test://b", name="b")]
        )

    async def read_resource(
        self, params: m.ReadResourceRequestParams, ctx: Any
    ) -> m.ReadResourceResult | m.InputRequiredResult:
        if params.request_state is not None:
            contents = m.TextResourceContents(uri=params.uri, text=f"got {params.request_state}")
            return m.ReadResourceResult(contents=[contents])
        return m.InputRequiredResult(input_requests={"confirm": confirm()}, request_state=f"resource:{params.uri}")


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


_ids = itertools.count(1)


class Wire:
    """A stateless client of one `ServerRuntime`, as the transport would drive it."""

    def __init__(self, server: Any = None, *, clock: Callable[[], float] | None = None, secret: bytes | None = None):
        self.server = server if server is not None else Stateful()
        sealer = RequestStateSealer(secret or type(self.server).request_state_secret, clock=clock or Clock())
        self.runtime = ServerRuntime(self.server, request_state=sealer)

    async def send(self, method: str, params: dict[str, Any], principal: str | None = None) -> dict[str, Any]:
        session = Session(None, self.runtime)  # type: ignore[arg-type]
        session.principal = principal  # what the HTTP transport sets from `scope["auth"]`
        request = jsonrpc.Request(next(_ids), method, {**params, "_meta": META}, {})
        try:
            return {"result": orjson.loads(await self.runtime.on_request(request, session))}
        except McpError as exc:
            return {"error": exc.to_error()}

    async def issue(self, method: str, params: dict[str, Any], principal: str | None = None) -> str:
        asked = (await self.send(method, params, principal))["result"]
        assert asked["resultType"] == "input_required", asked
        state = asked["requestState"]
        assert isinstance(state, str)
        return state

    async def retry(
        self, method: str, params: dict[str, Any], state: Any, principal: str | None = None
    ) -> dict[str, Any]:
        return await self.send(method, {**params, "inputResponses": ANSWER, "requestState": state}, principal)


def refused(reply: dict[str, Any], reason: str) -> str:
    """Asserts a -32602 naming params.requestState and `reason`; returns the message."""
    assert "error" in reply, reply
    error = reply["error"]
    assert error["code"] == -32602, error
    assert error["message"].startswith("Invalid params: params.requestState: "), error
    assert reason in error["message"], error
    assert error["data"]["errors"][0]["path"] == "params.requestState"
    return str(error["message"])


def text_of(reply: dict[str, Any]) -> str:
    result = reply["result"]
    if "content" in result:
        return str(result["content"][0]["text"])
    if "messages" in result:
        return str(result["messages"][0]["content"]["text"])
    return str(result["contents"][0]["text"])


ALPHA = {"name": "alpha", "arguments": {"amount": 1000, "to": "x"}}


# -- binding -------------------------------------------------------------------------------------


async def test_state_round_trips_for_its_own_request() -> None:
    wire = Wire()
    state = await wire.issue("tools/call", ALPHA)
    assert text_of(await wire.retry("tools/call", ALPHA, state)) == f"alpha got alpha:{SECRET_STATE}"
    # Key order and _meta are not part of the binding: the same request, written differently.
    reordered = {"arguments": {"to": "x", "amount": 1000}, "name": "alpha"}
    assert text_of(await wire.retry("tools/call", reordered, state)).startswith("alpha got")


async def test_state_of_one_tool_is_refused_by_another() -> None:
    wire = Wire()
    state = await wire.issue("tools/call", ALPHA)
    reply = await wire.retry("tools/call", {**ALPHA, "name": "beta"}, state)
    refused(reply, "issued for another request")


async def test_state_is_refused_with_other_arguments() -> None:
    wire = Wire()
    state = await wire.issue("tools/call", ALPHA)
    for arguments in ({"amount": 1001, "to": "x"}, {"amount": 1000}, {"amount": 1000, "to": "x", "more": 1}, {}):
        refused(await wire.retry("tools/call", {"name": "alpha", "arguments": arguments}, state), "another request")
    refused(await wire.retry("tools/call", {"name": "alpha"}, state), "another request")


async def test_state_is_bound_to_the_method_prompt_and_uri() -> None:
    wire = Wire()
    tool_state = await wire.issue("tools/call", ALPHA)
    refused(await wire.retry("prompts/get", {"name": "alpha"}, tool_state), "issued for another method")

    prompt_state = await wire.issue("prompts/get", {"name": "p1"})
    refused(await wire.retry("prompts/get", {"name": "p2"}, prompt_state), "another request")
    refused(await wire.retry("prompts/get", {"name": "p1", "arguments": {"a": "b"}}, prompt_state), "another request")
    assert text_of(await wire.retry("prompts/get", {"name": "p1"}, prompt_state)) == "p1 got prompt:p1"

    resource_state = await wire.issue("resources/read", {"uri": "test://a"})
    refused(await wire.retry("resources/read", {"uri": "test://b"}, resource_state), "another request")
    refused(await wire.retry("tools/call", ALPHA, resource_state), "another method")
    assert text_of(await wire.retry("resources/read", {"uri": "test://a"}, resource_state)) == "got resource:test://a"


async def test_state_is_bound_to_the_principal() -> None:
    wire = Wire()
    state = await wire.issue("tools/call", ALPHA, principal="alice")
    refused(await wire.retry("tools/call", ALPHA, state, principal="bob"), "issued to another principal")
    refused(await wire.retry("tools/call", ALPHA, state, principal=None), "another principal")
    anonymous = await wire.issue("tools/call", ALPHA)
    refused(await wire.retry("tools/call", ALPHA, anonymous, principal="alice"), "another principal")
    assert text_of(await wire.retry("tools/call", ALPHA, state, principal="alice")).startswith("alpha got")


# -- expiry --------------------------------------------------------------------------------------


async def test_state_expires_after_the_servers_ttl() -> None:
    clock = Clock()
    wire = Wire(clock=clock)
    assert Stateful.request_state_ttl_s == 600.0  # the default
    state = await wire.issue("tools/call", ALPHA)
    clock.now += 599
    assert text_of(await wire.retry("tools/call", ALPHA, state)).startswith("alpha got")
    clock.now += 1
    refused(await wire.retry("tools/call", ALPHA, state), "expired")

    class Brief(Stateful):
        request_state_ttl_s = 5.0

    clock = Clock()
    wire = Wire(Brief(), clock=clock)
    state = await wire.issue("tools/call", ALPHA)
    clock.now += 4.9
    fresh = await wire.issue("tools/call", ALPHA)  # a new round restarts the clock
    assert text_of(await wire.retry("tools/call", ALPHA, state)).startswith("alpha got")
    clock.now += 0.1
    refused(await wire.retry("tools/call", ALPHA, state), "expired")
    assert text_of(await wire.retry("tools/call", ALPHA, fresh)).startswith("alpha got")


# -- integrity and opacity -----------------------------------------------------------------------


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


async def test_tampered_or_garbage_state_is_refused_never_an_internal_error() -> None:
    wire = Wire()
    state = await wire.issue("tools/call", ALPHA)
    raw = bytearray(_unb64(state))
    variants: list[Any] = ["", "x", "round-1", state + "A", state[:-1], state[:-2], state + "!", " " + state]
    variants += [state.replace(state[5], "A" if state[5] != "A" else "B", 1), "é" * 40, "." * 64, "A" * 100_000]
    for index in (0, 1, 12, 13, len(raw) // 2, len(raw) - 1):  # version, nonce, ciphertext, tag
        flipped = bytearray(raw)
        flipped[index] ^= 0x01
        variants.append(base64.urlsafe_b64encode(bytes(flipped)).rstrip(b"=").decode())
    variants.append(base64.urlsafe_b64encode(b'{"m":"tools/call","r":1,"s":"forged"}').decode())
    for variant in variants:
        refused(await wire.retry("tools/call", ALPHA, variant), "not a state this server issued")
    # Sealed by another server object with another key (another worker without the shared secret).
    other = await Wire().issue("tools/call", ALPHA)
    refused(await wire.retry("tools/call", ALPHA, other), "not a state this server issued")
    # Not a string: the params' own validation (still -32602).
    reply = await wire.retry("tools/call", ALPHA, 12)
    assert reply["error"]["code"] == -32602
    # ... and the untouched state still works afterwards.
    assert text_of(await wire.retry("tools/call", ALPHA, state)).startswith("alpha got")


async def test_the_client_cannot_read_the_state() -> None:
    wire = Wire()
    state = await wire.issue("tools/call", ALPHA)
    decoded = _unb64(state)
    for secret in (SECRET_STATE, "transfer", "alpha", "tools/call"):
        assert secret not in state
        assert secret.encode() not in decoded
    assert b'"tools/call"' not in decoded and b'"arguments"' not in decoded  # no JSON inside, either
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(decoded)
    # Two issues of the same state differ (a fresh nonce each time).
    assert await wire.issue("tools/call", ALPHA) != state


async def test_workers_sharing_the_secret_accept_each_others_state() -> None:
    class Shared(Stateful):
        request_state_secret = b"0123456789abcdef0123456789abcdef"

    state = await Wire(Shared()).issue("tools/call", ALPHA, principal="alice")
    other_worker = Wire(Shared())
    assert text_of(await other_worker.retry("tools/call", ALPHA, state, principal="alice")).startswith("alpha got")
    refused(await other_worker.retry("tools/call", ALPHA, state, principal="bob"), "another principal")

    class Rotated(Stateful):
        request_state_secret = b"another secret, another key......"

    refused(await Wire(Rotated()).retry("tools/call", ALPHA, state, principal="alice"), "not a state this server")


# -- rounds --------------------------------------------------------------------------------------


async def test_multi_round_counts_rounds_and_replay_stays_in_its_request() -> None:
    wire = Wire()
    call = {"name": "rounds", "arguments": {"rounds": 3}}
    state = await wire.issue("tools/call", call)
    states = [state]
    for _ in range(2):
        asked = (await wire.retry("tools/call", call, states[-1]))["result"]
        assert asked["resultType"] == "input_required"
        states.append(asked["requestState"])
    assert text_of(await wire.retry("tools/call", call, states[-1])) == "rounds: 3"
    # A state sent again re-runs its own next round of its own request (documented in
    # request_state.py: no more than starting the same call over); never another request's.
    assert (await wire.retry("tools/call", call, states[0]))["result"]["resultType"] == "input_required"
    refused(await wire.retry("tools/call", {"name": "rounds", "arguments": {"rounds": 1}}, states[0]), "another")

    deep = {"name": "rounds", "arguments": {"rounds": MAX_INPUT_ROUNDS + 5}}
    state = await wire.issue("tools/call", deep)
    for _ in range(MAX_INPUT_ROUNDS - 1):
        state = (await wire.retry("tools/call", deep, state))["result"]["requestState"]
    too_many = await wire.retry("tools/call", deep, state)
    assert too_many["error"]["code"] == -32602 and "rounds of input requests" in too_many["error"]["message"]


async def test_a_handshake_client_cannot_hand_a_handler_round_state() -> None:
    """A 2025-11-25 client's `requestState` / `inputResponses` are not round state: a stateless-era
    handler never sees them (they would bypass the seal)."""
    runtime = ServerRuntime(Stateful())
    session = Session(None, runtime)  # type: ignore[arg-type]
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    await runtime.on_request(jsonrpc.Request(0, "initialize", init, {}), session)
    params = {"name": "alpha", "arguments": {}, "requestState": "alpha:forged", "inputResponses": ANSWER}
    with anyio.fail_after(DEADLINE):
        with pytest.raises(McpError) as raised:  # the handler asks anew (elicitation the client lacks)
            await runtime.on_request(jsonrpc.Request(1, "tools/call", params, {}), session)
    assert "forged" not in raised.value.message


async def test_multi_round_flow_through_a_typed_client() -> None:
    class Confirming(client_module.ClientHandlers):  # type: ignore[misc, name-defined]
        async def elicit(self, params: Any, ctx: Any) -> Any:
            return m.ElicitResult(action="accept", content={"ok": True})

    with anyio.fail_after(DEADLINE):
        async with connect_in_memory(Stateful(), client_module.Client, handlers=Confirming()) as client:
            texts: list[str] = []
            for name, arguments in (("rounds", {"rounds": 4}), ("alpha", {"amount": 1})):
                block = (await client.call_tool(name=name, arguments=arguments)).content[0]
                assert isinstance(block, m.TextContent)
                texts.append(block.text)
    assert texts == ["rounds: 4", f"alpha got alpha:{SECRET_STATE}"]


# -- over HTTP on 127.0.0.1 ----------------------------------------------------------------------


async def test_http_everything_server_refuses_foreign_state_with_400() -> None:
    """The everything-server's multi-round tool used to answer HTTP 500 / -32603 when handed another
    tool's state (its handler parsed it); now the runtime refuses it first."""
    module = load_example("everything_server")
    with serve_in_thread(create_app(module.EverythingServer())) as base:
        url = base + "/mcp"
        with anyio.fail_after(DEADLINE):
            async with httpx.AsyncClient(timeout=10) as client:
                donor = "test_input_required_result_tampered_state"
                issued = await client.post(
                    url,
                    json=rpc(1, "tools/call", stateless({"name": donor, "arguments": {}})),
                    headers=stateless_headers("tools/call", donor),
                )
                state = issued.json()["result"]["requestState"]
                victim = "test_input_required_result_multi_round"
                params = {"name": victim, "arguments": {}, "inputResponses": ANSWER, "requestState": state}
                reply = await client.post(
                    url, json=rpc(2, "tools/call", stateless(params)), headers=stateless_headers("tools/call", victim)
                )
                assert reply.status_code == 400, reply.text
                error = reply.json()["error"]
                assert reply.json()["id"] == 2 and error["code"] == -32602
                assert error["message"].startswith("Invalid params: params.requestState: issued for another request")
                # The server answers normally afterwards, and the state still works for its own tool.
                params = {"name": donor, "arguments": {}, "inputResponses": ANSWER, "requestState": state}
                good = await client.post(
                    url, json=rpc(3, "tools/call", stateless(params)), headers=stateless_headers("tools/call", donor)
                )
                assert good.status_code == 200 and good.json()["result"]["content"][0]["text"] == "state-ok: round-1"


class Tokens:
    """A verifier that knows two bearer tokens."""

    USERS = {"alice-token": "alice", "bob-token": "bob"}

    async def verify(self, token: str, *, resource: str) -> AccessToken:
        if token not in self.USERS:
            raise InvalidTokenError("unknown token")
        return AccessToken(scopes=("mcp",), client_id="cli", subject=self.USERS[token], issuer="https://as.example")


async def test_http_state_is_bound_to_the_bearer_principal() -> None:
    inner: Any = create_app(Stateful())  # starlette's ASGI types are wider than the middleware's
    app = require_bearer(inner, Tokens(), resource="http://127.0.0.1/mcp", authorization_servers=["https://as.example"])
    with serve_in_thread(app) as base:
        url = base + "/mcp"

        def headers(token: str) -> dict[str, str]:
            return {**stateless_headers("tools/call", "alpha"), "Authorization": f"Bearer {token}"}

        with anyio.fail_after(DEADLINE):
            async with httpx.AsyncClient(timeout=10) as client:
                first = rpc(1, "tools/call", {**ALPHA, "_meta": META})
                issued = await client.post(url, json=first, headers=headers("alice-token"))
                assert issued.status_code == 200, issued.text
                state = issued.json()["result"]["requestState"]
                retry = rpc(2, "tools/call", {**ALPHA, "_meta": META, "inputResponses": ANSWER, "requestState": state})
                stolen = await client.post(url, json=retry, headers=headers("bob-token"))
                assert stolen.status_code == 400, stolen.text
                assert stolen.json()["error"]["code"] == -32602
                assert "params.requestState: issued to another principal" in stolen.json()["error"]["message"]
                own = await client.post(url, json=retry, headers=headers("alice-token"))
                assert own.status_code == 200, own.text
                assert own.json()["result"]["content"][0]["text"] == f"alpha got alpha:{SECRET_STATE}"
                # Bob's own requests are served as usual.
                listing = await client.post(
                    url,
                    json=rpc(3, "tools/list", {"_meta": META}),
                    headers={**stateless_headers("tools/list"), "Authorization": "Bearer bob-token"},
                )
                assert listing.status_code == 200 and len(listing.json()["result"]["tools"]) == 3


def test_access_token_principal_names_issuer_subject_and_client() -> None:
    token = AccessToken(subject="alice", client_id="cli", issuer="https://as.example")
    assert json.loads(token.principal) == ["https://as.example", "alice", "cli"]
    assert token.principal != AccessToken(subject="alice", client_id="other", issuer="https://as.example").principal


# -- configured secrets and rotation (several workers) ----------------------------------------------

OLD_SECRET = b"o" * 32
NEW_SECRET = b"n" * 32


def test_a_rotated_secret_still_opens_states_of_the_previous_one_for_its_grace_period() -> None:
    now = [1_000.0]
    old = RequestStateSealer(OLD_SECRET, clock=lambda: now[0])
    token = old.seal("tools/call", "s", 1, params={"name": "alpha"})
    rotated = RequestStateSealer(NEW_SECRET, previous=OLD_SECRET, grace_s=60, clock=lambda: now[0])
    assert rotated.open("tools/call", token, params={"name": "alpha"}) == ("s", 1)
    fresh = rotated.seal("tools/call", "t", 1, params={"name": "alpha"})
    with pytest.raises(McpError, match="sealed with another key"):
        old.open("tools/call", fresh, params={"name": "alpha"})  # new states use the new secret only
    now[0] += 61
    with pytest.raises(McpError, match="sealed with another key"):
        rotated.open("tools/call", token, params={"name": "alpha"})  # grace period over
    assert rotated.open("tools/call", fresh, params={"name": "alpha"}) == ("t", 1)


def test_secrets_come_from_the_environment_and_must_be_long_enough() -> None:
    from mcp_bindings.runtime.protocol.request_state import SecretError, secrets_from_env

    env = {"MCP_REQUEST_STATE_SECRET": "n" * 32, "MCP_REQUEST_STATE_PREVIOUS_SECRET": "o" * 32}
    assert secrets_from_env(env) == (NEW_SECRET, OLD_SECRET)
    assert secrets_from_env({}) == (None, None)
    with pytest.raises(SecretError, match="MCP_REQUEST_STATE_PREVIOUS_SECRET is 5 bytes; use at least 32"):
        secrets_from_env({"MCP_REQUEST_STATE_PREVIOUS_SECRET": "short"})


def test_only_a_configured_secret_can_be_shared() -> None:
    from mcp_bindings.runtime.protocol.request_state import SecretError

    RequestStateSealer(NEW_SECRET).check_shareable()
    with pytest.raises(SecretError, match="several workers need one requestState secret"):
        RequestStateSealer().check_shareable()
