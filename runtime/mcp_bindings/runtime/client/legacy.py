"""A client pinned to a stateless version that meets a legacy server (one that only knows the
`initialize` handshake): said once, clearly, as `LegacyServerError`.

Over stdio and in memory the pinned client asks with `server/discover` before anything else
(`ClientRuntime.start`). Over Streamable HTTP it sends no probe (each answer says whether the server
speaks the version), so the `LegacyCheck` hook (`client.seam`) looks at the first failures instead:
a request answered by HTTP 4xx without a JSON-RPC answer (a legacy server's "Bad Request: Missing
session ID"), or by an unsupported-version error that lists no stateless version. The first such
answer, before any success, gets one `server/discover` to confirm; if that fails too the server is
legacy, and every request from then on raises the same `LegacyServerError` without being sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_bindings.runtime.client.seam import OutgoingCall, Send
from mcp_bindings.runtime.client.stateless import stateless_request, with_meta
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.protocol.spec import MethodSpec
from mcp_bindings.runtime.rpc.errors import INVALID_REQUEST, McpError
from mcp_bindings.v2026_07_28 import names as v2026

if TYPE_CHECKING:
    from mcp_bindings.runtime.client.runtime import ClientRuntime

DISCOVER = v2026.SERVER_DISCOVER
HTTP_STATUS = "httpStatus"  # the error data of a request whose HTTP answer was no JSON-RPC answer (client.http)


class LegacyServerError(McpError):
    """A client pinned to a stateless version found no stateless server: `server/discover` failed
    or went unanswered, as it does on a server that only knows the `initialize` handshake."""

    def __init__(self, version: str, why: str) -> None:
        super().__init__(
            INVALID_REQUEST,
            f"the server does not speak MCP {version} ({why}); it may be a legacy server: connect with "
            "protocol_version='auto' to fall back to initialize, or pin a handshake version",
        )
        self.version = version


class LegacyCheck:
    """The hook that recognises a legacy server behind a pinned stateless HTTP session, once."""

    def __init__(self, runtime: ClientRuntime) -> None:
        self.runtime = runtime
        self.verdict: LegacyServerError | None = None  # set once the server is known legacy
        self.confirmed = False  # a stateless answer came: the server speaks the version

    def wrap(self, spec: MethodSpec, send: Send) -> Send:
        runtime = self.runtime
        if not (runtime.stateless and runtime.mirrors_headers) or spec.method == DISCOVER:
            return send  # stdio and in memory probed at the start; a handshake session is no concern

        async def checked(call: OutgoingCall) -> Any:
            if self.verdict is not None:
                raise self.verdict
            try:
                answer = await send(call)
            except McpError as exc:
                why = None if self.confirmed else _legacy_sign(exc)
                if why is None:
                    raise
                await self._confirm(why)
                raise
            self.confirmed = True
            return answer

        return checked

    async def _confirm(self, why: str) -> None:
        """One `server/discover`: a stateless server answers it; else the server is legacy."""
        runtime = self.runtime
        assert runtime.protocol is not None
        spec = runtime.protocol.client_requests.get(DISCOVER)
        if spec is not None:
            try:
                await stateless_request(runtime, spec, with_meta(runtime, None), None)
            except McpError as exc:
                why = f"{why}; server/discover failed: {exc.message}"
            else:
                self.confirmed = True
                return
        self.verdict = LegacyServerError(runtime.version or "?", why)
        raise self.verdict


def _legacy_sign(error: McpError) -> str | None:
    """What in a failed request's answer says the server may not speak the stateless era, or None."""
    data = error.data if isinstance(error.data, dict) else {}
    status = data.get(HTTP_STATUS)
    if isinstance(status, int) and 400 <= status < 500:
        return f"{error.message[:200]}"
    supported = data.get("supported")
    if isinstance(supported, list) and supported and not set(supported) & set(registry.stateless_versions()):
        return f"it supports only {', '.join(map(str, supported))}"
    return None
