"""Repeating a request whose connection failed (client_retry.py, policy/retry.json): the policy
file against the pinned tables (a test per entry, failing when it goes stale), the decisions, and
the HTTP client transport's failures end to end against a scripted HTTP peer (httpx.MockTransport).
The same against real workers being killed: tests/scaleout/test_scaleout_retry.py."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import orjson
import pytest

from mcp_bindings.runtime.client import retry as client_retry
from mcp_bindings.runtime.client.http import StreamableHttpTransport, retry_after_seconds
from mcp_bindings.runtime.client.retry import (
    ATTEMPTS,
    MAX_RETRY_AFTER_S,
    MonotonicProgress,
    RetryMode,
    RetryPolicy,
    rules,
    send_with_retries,
    wants_new_connection,
)
from mcp_bindings.runtime.client.runtime import connect
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, DeliveryFailed, McpError, OutcomeUnknown
from mcp_bindings.v2026_07_28.client import Client

pytestmark = pytest.mark.anyio

STATELESS = registry.stateless_versions()
RULES = sorted(rules().values(), key=lambda rule: rule.method)


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_retry, "BACKOFF_S", (0.01, 0.02))


# -- the policy file against the pinned tables --------------------------------------------------


def test_there_is_a_stateless_version_to_check_the_policy_against() -> None:
    assert "2026-07-28" in STATELESS


@pytest.mark.parametrize("rule", RULES, ids=[rule.method for rule in RULES])
def test_a_policy_entry_names_a_request_of_every_stateless_version(rule: client_retry.Rule) -> None:
    assert rule.reason.strip(), f"{rule.method}: every entry says why"
    for version in STATELESS:
        assert rule.method in registry.protocol(version).client_requests, (
            f"policy/retry.json lists {rule.method}, which {version} no longer has: remove or rename the entry"
        )
    if rule.tool_hints:
        assert rule.method == "tools/call", "tool annotations decide only for tools/call"
        for version in STATELESS:
            models = registry.load_version(version).models
            aliases = {field.alias for field in models.ToolAnnotations.model_fields.values()}
            missing = set(rule.tool_hints) - aliases
            assert not missing, f"policy/retry.json names annotations {missing} that {version}'s ToolAnnotations lacks"


@pytest.mark.parametrize("version", STATELESS)
def test_every_client_request_of_a_stateless_version_is_decided(version: str) -> None:
    undecided = set(registry.protocol(version).client_requests) - set(rules())
    assert not undecided, (
        f"policy/retry.json says nothing of {sorted(undecided)} ({version}): add an entry with a reason"
    )


# -- the decisions --------------------------------------------------------------------------------


def listed(*tools: tuple[str, dict[str, Any] | None]) -> dict[str, Any]:
    return {
        "tools": [
            {"name": name, "inputSchema": {"type": "object"}, **({"annotations": a} if a is not None else {})}
            for name, a in tools
        ]
    }


def test_reads_are_repeatable_and_a_tool_call_only_when_its_annotations_say_so() -> None:
    policy = RetryPolicy()
    for method in ("tools/list", "resources/read", "prompts/get", "completion/complete", "server/discover"):
        assert policy.why_not_repeat(method, {}) is None
    assert "not safe to repeat" in (policy.why_not_repeat("subscriptions/listen", {}) or "")
    assert "does not list" in (policy.why_not_repeat("com.example/custom", {}) or "")
    call = {"name": "read"}
    assert "list the tools first" in (policy.why_not_repeat("tools/call", call) or "")
    policy.tools.remember_result(listed(("read", {"readOnlyHint": True}), ("put", {"idempotentHint": True})))
    policy.tools.remember_result(listed(("charge", {"readOnlyHint": False, "destructiveHint": True}), ("bare", None)))
    assert policy.why_not_repeat("tools/call", call) is None
    assert policy.why_not_repeat("tools/call", {"name": "put"}) is None
    for name in ("charge", "bare"):
        assert "not marked readOnlyHint or idempotentHint" in (
            policy.why_not_repeat("tools/call", {"name": name}) or ""
        )
    policy.tools.forget()  # the tool list changed: nothing is known to be safe until listed again
    assert "list the tools first" in (policy.why_not_repeat("tools/call", call) or "")


def test_an_unknown_mode_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="retry must be one of 'safe', 'always', 'never', not 'often'"):
        RetryPolicy("often")


class Script:
    """A `send` that fails with the given failures, then answers; records each attempt."""

    def __init__(self, *failures: DeliveryFailed) -> None:
        self.failures = list(failures)
        self.attempts: list[bool] = []  # per attempt: whether it asked for a new connection

    async def __call__(self) -> str:
        self.attempts.append(wants_new_connection())
        if self.failures:
            raise self.failures.pop(0)
        return "answer"


def cut() -> DeliveryFailed:
    return DeliveryFailed(INTERNAL_ERROR, "HTTP request failed: Server disconnected", stage="cut")


def refused(after: float | None = None) -> DeliveryFailed:
    return DeliveryFailed(INTERNAL_ERROR, "HTTP 503", stage="refused", retry_after=after)


def not_sent() -> DeliveryFailed:
    return DeliveryFailed(INTERNAL_ERROR, "HTTP request failed: Connection refused", stage="connect")


async def retried(policy: RetryPolicy, script: Script, method: str = "tools/call", stateless: bool = True) -> str:
    send: Callable[[], Awaitable[str]] = script
    return await send_with_retries(policy, method, {"name": "charge"}, send, stateless=stateless)


async def test_a_request_that_never_left_is_repeated_on_new_connections_up_to_the_bound() -> None:
    script = Script(not_sent(), refused())
    assert await retried(RetryPolicy(), script) == "answer"
    assert script.attempts == [False, True, True]  # the repeats asked for new connections
    script = Script(*(not_sent() for _ in range(ATTEMPTS)))
    with pytest.raises(DeliveryFailed, match=f"Connection refused; gave up after {ATTEMPTS} attempts") as caught:
        await retried(RetryPolicy(), script)
    assert len(script.attempts) == ATTEMPTS and caught.value.stage == "connect"


async def test_a_call_that_may_have_run_is_repeated_only_when_safe_or_always() -> None:
    script = Script(cut())
    with pytest.raises(OutcomeUnknown) as caught:
        await retried(RetryPolicy(), script)
    assert len(script.attempts) == 1  # never silently run a second time
    message = caught.value.message
    assert message.startswith("tools/call of tool 'charge' may or may not have run: HTTP request failed")
    assert "list the tools first" in message and "retry='always'" in message
    assert caught.value.method == "tools/call"

    safe = RetryPolicy()
    safe.tools.remember_result(listed(("charge", {"idempotentHint": True})))
    assert await retried(safe, Script(cut())) == "answer"
    assert await retried(RetryPolicy(), Script(cut(), cut()), method="tools/list") == "answer"
    assert await retried(RetryPolicy("always"), Script(cut(), cut())) == "answer"


async def test_never_repeats_nothing_and_handshake_sessions_only_what_never_left() -> None:
    for failure in (not_sent(), refused(), cut()):
        script = Script(failure)
        with pytest.raises(DeliveryFailed) as caught:
            await retried(RetryPolicy("never"), script)
        assert caught.value is failure and len(script.attempts) == 1
    assert await retried(RetryPolicy(), Script(not_sent()), method="tools/list", stateless=False) == "answer"
    for failure in (refused(), cut()):  # the session lives on its worker: not repeated elsewhere
        script = Script(failure)
        with pytest.raises(DeliveryFailed) as caught:
            await retried(RetryPolicy("always"), script, method="tools/list", stateless=False)
        assert caught.value is failure and len(script.attempts) == 1


async def test_retry_after_is_honoured_within_the_bound() -> None:
    started = time.monotonic()
    assert await retried(RetryPolicy(), Script(refused(0.3))) == "answer"
    assert time.monotonic() - started >= 0.3
    script = Script(refused(MAX_RETRY_AFTER_S + 50))
    with pytest.raises(DeliveryFailed, match="the server asked to wait 60 s") as caught:
        await retried(RetryPolicy(), script)
    assert len(script.attempts) == 1 and caught.value.retry_after == MAX_RETRY_AFTER_S + 50


def test_retry_after_values() -> None:
    assert retry_after_seconds("2") == 2.0
    assert (
        retry_after_seconds(None) is None and retry_after_seconds("soon") is None and retry_after_seconds("-1") is None
    )
    when = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    assert 25 < (retry_after_seconds(when) or 0) <= 30
    assert retry_after_seconds("Mon, 01 Jan 2001 00:00:00 GMT") == 0.0  # in the past: no wait


async def test_progress_of_a_repeated_attempt_never_goes_backwards() -> None:
    seen: list[float] = []

    async def record(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    progress = MonotonicProgress(record)
    for value in (1, 2, 1, 2, 3):  # the first attempt got to 2, the second starts again
        await progress(value, 3, None)
    assert seen == [1, 2, 3]


# -- the HTTP client transport end to end, against a scripted peer ---------------------------------

TOOLS = listed(("read", {"readOnlyHint": True}), ("charge", {"destructiveHint": True}))


class Peer:
    """Answers each POST from a script of statuses (then a JSON-RPC result), recording the ids."""

    def __init__(self, *statuses: int, retry_after: str | None = None) -> None:
        self.statuses = list(statuses)
        self.retry_after = retry_after
        self.posts: list[tuple[str, Any]] = []  # (method, id)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        message = orjson.loads(request.content)
        self.posts.append((message["method"], message["id"]))
        if self.statuses and message["method"] != "tools/list":
            status = self.statuses.pop(0)
            if status == 0:
                raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
            headers = {"Retry-After": self.retry_after} if self.retry_after else {}
            return httpx.Response(status, text="upstream gone", headers=headers)
        result = TOOLS if message["method"] == "tools/list" else {"content": [{"type": "text", "text": "done"}]}
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": message["id"], "result": result})


async def calls_with(peer: Peer, tool: str, retry: RetryMode = "safe") -> Any:
    http = httpx.AsyncClient(transport=httpx.MockTransport(peer))
    async with StreamableHttpTransport("http://127.0.0.1:9/mcp", client=http) as transport:
        async with connect(transport, Client, protocol_version="2026-07-28", retry=retry) as client:
            await client.list_tools()
            with anyio.fail_after(10):
                return await client.call_tool(name=tool, arguments={})


async def test_gateway_failures_and_cut_connections_over_http() -> None:
    peer = Peer(503, 502, retry_after="0")
    result = await calls_with(peer, "read")
    assert result.content[0].text == "done"  # pyright: ignore[reportAttributeAccessIssue]
    ids = [request_id for method, request_id in peer.posts if method == "tools/call"]
    assert len(ids) == 3 and len(set(ids)) == 3  # a new JSON-RPC id per attempt

    peer = Peer(0)  # the connection closed before any answer: the destructive tool is not repeated
    with pytest.raises(OutcomeUnknown, match=r"tool 'charge' may or may not have run.*Server disconnected"):
        await calls_with(peer, "charge")
    assert [m for m, _ in peer.posts].count("tools/call") == 1
    assert (await calls_with(Peer(0), "charge", retry="always")).content[0].text == "done"  # pyright: ignore[reportAttributeAccessIssue]

    peer = Peer(503)  # refused: it did not run, so even the destructive tool goes again
    assert (await calls_with(peer, "charge")).content[0].text == "done"  # pyright: ignore[reportAttributeAccessIssue]

    peer = Peer(504, 504, 504)
    with pytest.raises(OutcomeUnknown, match="HTTP 504: upstream gone"):
        await calls_with(peer, "charge")
    with pytest.raises(DeliveryFailed, match="HTTP 504: upstream gone; gave up after 3 attempts"):
        await calls_with(Peer(504, 504, 504), "read")


async def test_a_json_rpc_error_in_a_503_keeps_its_code_and_message() -> None:
    def busy(request: httpx.Request) -> httpx.Response:
        error = {"code": -32000, "message": "Service Unavailable: too busy"}
        return httpx.Response(503, json={"jsonrpc": "2.0", "id": None, "error": error})

    http = httpx.AsyncClient(transport=httpx.MockTransport(busy))
    async with StreamableHttpTransport("http://127.0.0.1:9/mcp", client=http) as transport:
        async with connect(transport, Client, protocol_version="2026-07-28", retry="never") as client:
            with pytest.raises(McpError) as caught:
                await client.list_tools()
    assert (caught.value.code, caught.value.message) == (-32000, "Service Unavailable: too busy")


async def test_a_tool_list_change_forgets_which_tools_are_safe_to_repeat() -> None:
    from mcp_bindings.runtime.client.runtime import ClientRuntime
    from mcp_bindings.runtime.rpc.jsonrpc import Notification

    runtime = ClientRuntime(Client, retry="safe")
    runtime.tools.remember_result(TOOLS)
    assert runtime.retry.why_not_repeat("tools/call", {"name": "read"}) is None
    changed = "notifications/tools/list_changed"
    await runtime.on_notification(Notification(changed, None, {"method": changed}), None)  # pyright: ignore[reportArgumentType]
    assert "list the tools first" in (runtime.retry.why_not_repeat("tools/call", {"name": "read"}) or "")
    with pytest.raises(ValueError, match="retry must be one of"):
        ClientRuntime(Client, retry="sometimes")  # pyright: ignore[reportArgumentType]
