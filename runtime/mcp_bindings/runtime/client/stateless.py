"""One stateless (2026-07-28) request from the client: its `_meta`, the multi-round-trip retries
an `InputRequiredResult` asks for, the move to another version when the server answers that it
does not support the one requested, and sending a round again when its connection failed
(`client_retry`: a new id, a new connection, the same `requestState`, which any worker opens)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from mcp_bindings.runtime.client.handling import answer_input_requests
from mcp_bindings.runtime.client.retry import monotonic, send_with_retries
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.protocol.request_state import MAX_INPUT_ROUNDS
from mcp_bindings.runtime.protocol.spec import INPUT_REQUIRED, MethodSpec
from mcp_bindings.runtime.rpc.calls import ProgressCallback
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, McpError

if TYPE_CHECKING:
    from mcp_bindings.runtime.client.runtime import ClientRuntime


def with_meta(runtime: ClientRuntime, data: Any) -> dict[str, Any]:
    """A stateless-era request's params: `data` with the `_meta` of the negotiated version
    (`ClientRuntime.request_meta`) under what `data` already has there."""
    params = dict(data or {})
    params["_meta"] = {**runtime.request_meta(), **(params.get("_meta") or {})}
    return params


async def stateless_request(
    runtime: ClientRuntime,
    spec: MethodSpec,
    data: Any,
    on_progress: ProgressCallback | None,
    *,
    timeout: float | None = None,
) -> Any:
    """Send the request, answer `InputRequiredResult` rounds through the handlers and retry (a new
    id, the same requestState), and switch to a version the server supports once, on its
    unsupported-version error. `data`: the params with the request's `_meta` (`with_meta`). Returns
    the final result as decoded JSON."""
    session = runtime.session
    assert session is not None and runtime.protocol is not None
    params = dict(data or {})  # with its `_meta` (`with_meta`)
    # Over HTTP, closing the POST's response stream (the transport does it when the caller is
    # cancelled or times out) is the cancellation signal: no `notifications/cancelled` is expected.
    notify_cancel = not runtime.mirrors_headers
    switched = False
    limit = timeout if timeout is not None else runtime.request_timeout
    for _ in range(MAX_INPUT_ROUNDS + 1):
        progress = monotonic(on_progress)  # a repeated attempt's progress never goes backwards
        attempt = partial(
            session.request, spec.method, params, timeout=limit, on_progress=progress, cancellable=notify_cancel
        )
        try:
            raw = await send_with_retries(runtime.retry, spec.method, params, attempt, stateless=True)
        except McpError as exc:
            choice = _other_version(runtime, exc) if not switched else None
            if choice is None:
                raise
            switched = True
            runtime.protocol, runtime.version = registry.protocol(choice, own=runtime.stub), choice
            runtime.use_version(session, choice)
            params["_meta"] = {**params["_meta"], **runtime.request_meta()}
            continue
        if not (isinstance(raw, dict) and raw.get("resultType") == INPUT_REQUIRED):
            return raw
        params = {key: value for key, value in params.items() if key not in ("inputResponses", "requestState")}
        params["inputResponses"] = await answer_input_requests(runtime, raw.get("inputRequests") or {})
        if isinstance(raw.get("requestState"), str):
            params["requestState"] = raw["requestState"]
    raise McpError(
        INTERNAL_ERROR,
        f"{spec.method}: the server still asked for input after {MAX_INPUT_ROUNDS} rounds; gave up (no result)",
    )


def _other_version(runtime: ClientRuntime, error: McpError) -> str | None:
    """The newest version this client speaks among those an unsupported-version error lists."""
    assert runtime.protocol is not None
    if error.code != runtime.protocol.error_codes.unsupported_protocol_version:
        return None
    supported = error.data.get("supported") if isinstance(error.data, dict) else None
    if not isinstance(supported, list):
        return None
    return next((v for v in reversed(runtime.stateless_supported) if v in supported), None)
