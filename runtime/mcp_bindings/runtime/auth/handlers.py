"""The user-facing step of the authorization code flow: send the user agent to the authorization URL
and bring back what the authorization server redirected to `redirect_uri` (`code`, `state`, `iss`, or
`error`).

* `AuthorizationHandler`: the interface (a `redirect_uri` and `async authorize(url)`).
* `HeadlessAuthorizationHandler`: follows the authorization URL with httpx and captures the redirect to
  `redirect_uri` without loading it. For authorization servers that approve without interaction (tests,
  the conformance harness, pre-consented clients); it fails on a login or consent page.
* `LoopbackAuthorizationHandler`: opens the system browser and receives the redirect on a one-shot HTTP
  listener on 127.0.0.1 (RFC 8252 §7.3).
* `CallbackAuthorizationHandler`: hands the URL to your own coroutine, which returns the redirect URL
  (e.g. print it and read back the URL the user pasted).
"""

from __future__ import annotations

import inspect
import socket
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable
from urllib.parse import parse_qsl, urljoin, urlsplit

import anyio
import anyio.abc
import httpx

from mcp_bindings.runtime.auth.challenge import Param
from mcp_bindings.runtime.auth.errors import AuthorizationError
from mcp_bindings.runtime.rpc import logs

MAX_REQUEST_HEAD = 16 * 1024
log = logs.logger("auth")


@dataclass(frozen=True)
class AuthorizationResponse:
    """The query parameters of the redirect back to the client (decoded)."""

    params: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_query(cls, query: str) -> AuthorizationResponse:
        params: dict[str, str] = {}
        for key, value in parse_qsl(query, keep_blank_values=True):
            params.setdefault(key, value)  # a repeated parameter: the first one counts
        return cls(params)

    @classmethod
    def from_url(cls, url: str) -> AuthorizationResponse:
        return cls.from_query(urlsplit(url).query)

    code = Param()
    state = Param()
    iss = Param()
    error = Param()
    error_description = Param()


@runtime_checkable
class AuthorizationHandler(Protocol):
    """Sends the user to `authorization_url` and returns the redirect to `redirect_uri`."""

    @property
    def redirect_uri(self) -> str: ...

    async def authorize(self, authorization_url: str) -> AuthorizationResponse: ...


def matches_redirect_uri(url: str, redirect_uri: str) -> bool:
    """Same scheme, authority and path as the registered redirect URI (the query is the response)."""
    a, b = urlsplit(url), urlsplit(redirect_uri)
    return (a.scheme.lower(), a.netloc.lower(), a.path or "/") == (b.scheme.lower(), b.netloc.lower(), b.path or "/")


class HeadlessAuthorizationHandler:
    """GET the authorization URL, follow the authorization server's own redirects (bounded), and stop
    at the redirect to `redirect_uri`, which is never requested."""

    def __init__(
        self,
        redirect_uri: str = "http://127.0.0.1:33418/callback",
        *,
        http_client: httpx.AsyncClient | None = None,
        max_redirects: int = 10,
        timeout: float = 30.0,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.redirect_uri = redirect_uri
        self._http = http_client
        self.max_redirects = max_redirects
        self.timeout = timeout
        self.headers = dict(headers or {})
        self.visited: list[str] = []  # the URLs requested by the last authorize() (for diagnostics)

    async def authorize(self, authorization_url: str) -> AuthorizationResponse:
        client = self._http or httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)
        self.visited = []
        try:
            with anyio.fail_after(self.timeout):
                return await self._follow(client, authorization_url)
        except TimeoutError:
            raise AuthorizationError(f"the authorization server did not redirect within {self.timeout} s") from None
        except httpx.TransportError as exc:
            raise AuthorizationError(f"authorization request failed: {exc}") from exc
        finally:
            if self._http is None:
                await client.aclose()

    async def _follow(self, client: httpx.AsyncClient, url: str) -> AuthorizationResponse:
        for _ in range(self.max_redirects + 1):
            if matches_redirect_uri(url, self.redirect_uri):
                return AuthorizationResponse.from_url(url)
            self.visited.append(url)
            response = await client.get(url, headers=self.headers, follow_redirects=False)
            location = response.headers.get("location")
            if response.is_redirect and location:
                url = urljoin(str(response.url), location)
                continue
            raise AuthorizationError(
                f"the authorization server answered HTTP {response.status_code} instead of redirecting to "
                f"{self.redirect_uri} (a headless flow cannot log in or give consent)"
            )
        raise AuthorizationError(f"more than {self.max_redirects} redirects before reaching {self.redirect_uri}")


OpenBrowser = Callable[[str], Any]  # may return an awaitable


def _bound_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to `host:port` (0: a port the system picks) and listening. The handler keeps
    it open for its whole life: a port picked, closed and bound again later could be taken in between."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if sys.platform != "win32":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a fixed port still in TIME_WAIT
        sock.bind((host, port))
        sock.listen()
    except OSError:
        sock.close()
        raise
    return sock


_PAGE = b"<!doctype html><meta charset=utf-8><title>Authorization</title><p>%s You can close this window.</p>"


class LoopbackAuthorizationHandler:
    """Open the browser at the authorization URL and receive the redirect on `http://host:port/path`.

    `port=0` binds a port the system picks, at construction, and keeps that socket until `close()`, so
    the redirect URI stays the same for every authorization of this handler (it is registered with the
    authorization server) and no other program can take the port in between. A fixed `port` is bound at
    the first authorization and kept likewise; `sock` hands over a socket already bound (the handler
    listens on it and owns it). `open_browser` defaults to `webbrowser.open`; pass your own to print
    the URL instead, or to drive a test.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/callback",
        open_browser: OpenBrowser | None = None,
        timeout: float = 300.0,
        sock: socket.socket | None = None,
    ) -> None:
        if sock is None and not port:
            sock = _bound_socket(host, 0)
        elif sock is not None:
            sock.listen()
        self._sock = sock
        if sock is not None:
            host, port = str(sock.getsockname()[0]), int(sock.getsockname()[1])
        self.host = host
        self.port = port
        self.path = path if path.startswith("/") else "/" + path
        self.open_browser: OpenBrowser | None = open_browser  # None: the system browser
        self.timeout = timeout
        shown = f"[{host}]" if ":" in host else host
        self.redirect_uri = f"http://{shown}:{self.port}{self.path}"

    def close(self) -> None:
        """Release the listening socket (an authorization after this binds the port again)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> LoopbackAuthorizationHandler:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def authorize(self, authorization_url: str) -> AuthorizationResponse:
        if self._sock is None:
            self._sock = _bound_socket(self.host, self.port)
        result: list[AuthorizationResponse] = []
        done = anyio.Event()

        async def serve(stream: Any) -> None:
            async with stream:
                head = bytearray()
                try:
                    with anyio.fail_after(10):
                        while b"\r\n\r\n" not in head and len(head) < MAX_REQUEST_HEAD:
                            head += await stream.receive(4096)
                except (TimeoutError, anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                    return
                request_line = bytes(head).split(b"\r\n", 1)[0].decode("latin-1")
                parts = request_line.split(" ")
                status, message = b"404 Not Found", b"Not found."
                if len(parts) >= 2 and parts[0] == "GET" and urlsplit(parts[1]).path == self.path and not result:
                    response = AuthorizationResponse.from_query(urlsplit(parts[1]).query)
                    result.append(response)
                    ok = response.code is not None and response.error is None
                    status = b"200 OK"
                    message = b"Authorization complete." if ok else b"Authorization failed."
                    done.set()
                body = _PAGE % message
                head_out = (
                    b"HTTP/1.1 " + status + b"\r\nContent-Type: text/html; charset=utf-8\r\n"
                    b"Cache-Control: no-store\r\nConnection: close\r\nContent-Length: "
                    + str(len(body)).encode()
                    + b"\r\n\r\n"
                )
                try:
                    await stream.send(head_out + body)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    pass

        # A duplicate for this authorization's listener (which closes what it owns); the socket itself
        # stays bound and listening for the next one.
        listener = await anyio.abc.SocketListener.from_socket(self._sock.dup())
        async with listener, anyio.create_task_group() as group:
            group.start_soon(listener.serve, serve)
            with anyio.move_on_after(self.timeout):
                if self.open_browser is None:
                    import webbrowser

                    opened: Any = await anyio.to_thread.run_sync(webbrowser.open, authorization_url)
                else:
                    opened = self.open_browser(authorization_url)
                    if inspect.isawaitable(opened):
                        opened = await opened
                if opened is False:
                    log.warning("could not open a browser; open this URL to authorize: %s", authorization_url)
                await done.wait()
            group.cancel_scope.cancel()
        if not result:
            raise AuthorizationError(f"no redirect to {self.redirect_uri} within {self.timeout} s")
        return result[0]


class CallbackAuthorizationHandler:
    """`callback(authorization_url)` returns the URL the user agent was redirected to (or its query)."""

    def __init__(self, redirect_uri: str, callback: Callable[[str], Awaitable[str]]) -> None:
        self.redirect_uri = redirect_uri
        self.callback = callback

    async def authorize(self, authorization_url: str) -> AuthorizationResponse:
        returned = await self.callback(authorization_url)
        if "?" in returned or "://" in returned:
            return AuthorizationResponse.from_url(returned)
        return AuthorizationResponse.from_query(returned)
