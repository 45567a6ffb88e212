"""OAuth 2 client credentials (RFC 6749 section 4.4) for the HTTP API behind an OpenAPI server
(`app.openapi.Api`): a description's `securitySchemes` entry of type `oauth2` with a
`clientCredentials` flow. The client id and secret are read from the environment at each token
request (the scheme's two variables, `<PREFIX>_<SCHEME>_CLIENT_ID` and `_CLIENT_SECRET`); the token
is asked of the flow's token URL (fixed in the description, https or a loopback http URL: the
secret never crosses a network in clear), with HTTP Basic client authentication and every scope the
description's operations ask of the scheme, then cached until shortly before its `expires_in`. A
401 from the API drops it and the call is made once more with a new one (`Api.call`). A token
endpoint that refuses is a tool error naming the scheme, the endpoint's status and its OAuth error,
and the variables to check."""

from __future__ import annotations

import base64
import json
import time
import urllib.parse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

import anyio

from mcp_bindings.runtime.app.errors import ToolError

if TYPE_CHECKING:
    import httpx

__all__ = ["ClientCredentials", "check_token_url"]

_MAX_ANSWER = 64 * 1024  # of a token endpoint's answer
_EARLY = 30.0  # seconds before `expires_in` a token is asked for again (clock skew, time in flight)


def check_token_url(url: str) -> None:
    """Refuse a token URL the client secret would cross a network in clear to."""
    parts = urllib.parse.urlsplit(url)
    host = (parts.hostname or "").lower()
    loopback = host in ("localhost", "::1") or host.startswith("127.")
    if not parts.hostname or not (parts.scheme == "https" or (parts.scheme == "http" and loopback)):
        raise ValueError(f"token URL {url!r}: an https URL is needed (http only to this machine)")


class ClientCredentials:
    """One scheme's token: asked for when first needed, cached, asked again when it expires or the
    API answers 401 (`stale`). Concurrent calls share one request for it."""

    def __init__(self, name: str, token_url: str, env: tuple[str, ...], scopes: tuple[str, ...]) -> None:
        check_token_url(token_url)
        self.name, self.token_url, self.env, self.scopes = name, token_url, env, scopes
        self._token: str | None = None
        self._expires = 0.0
        self._lock = anyio.Lock()

    def forget(self) -> None:
        """Drop the cached token (the next call asks for a new one)."""
        self._token = None

    async def token(self, client: httpx.AsyncClient, environ: Mapping[str, str], stale: str | None = None) -> str:
        async with self._lock:
            if self._token is not None and self._token != stale and time.monotonic() < self._expires:
                return self._token
            self._token = None
            token, lifetime = await self._ask(client, environ)
            self._token, self._expires = token, time.monotonic() + max(lifetime - _EARLY, 0.0)
            return token

    async def _ask(self, client: httpx.AsyncClient, environ: Mapping[str, str]) -> tuple[str, float]:
        import httpx

        client_id, secret = (urllib.parse.quote(environ[e], safe="") for e in self.env)  # RFC 6749 2.3.1
        basic = base64.b64encode(f"{client_id}:{secret}".encode()).decode("ascii")
        form = {"grant_type": "client_credentials", **({"scope": " ".join(self.scopes)} if self.scopes else {})}
        headers = {"Authorization": f"Basic {basic}", "Accept": "application/json"}
        try:
            answer = await client.post(self.token_url, data=form, headers=headers)
        except httpx.HTTPError as exc:
            raise ToolError(f"OAuth token for {self.name!r}: {self.token_url}: {type(exc).__name__}: {exc}") from None
        return self._read(answer.status_code, answer.content[: _MAX_ANSWER + 1])

    def _read(self, status: int, content: bytes) -> tuple[str, float]:
        try:
            data: Any = json.loads(content) if len(content) <= _MAX_ANSWER else None
        except ValueError:
            data = None
        found = cast("dict[str, Any]", data) if isinstance(data, dict) else {}
        token = found.get("access_token")
        if status == 200 and isinstance(token, str) and token:
            lifetime = found.get("expires_in")
            return token, float(lifetime) if isinstance(lifetime, int | float) else float("inf")
        reason = " ".join(str(found[k]) for k in ("error", "error_description") if isinstance(found.get(k), str))
        detail = (
            f"HTTP {status}: {reason or 'no access_token in its answer'}"
            if reason or status == 200
            else f"HTTP {status}"
        )
        raise ToolError(
            f"OAuth client credentials for {self.name!r} were refused by {self.token_url} ({detail}); "
            f"check {' and '.join(self.env)}"
        )
