"""One client connection to a live server for the commands that talk to one (`list`, `call`, `read`,
`get-prompt`, `inspect`, and the contract tools' `capture`): the server named on the command line
(SERVER, `server_spec.parse_server`: one meaning for every command), the protocol version
(one, or "auto": the newest client probing with `server/discover`, falling back to `initialize`),
and what a failure means to a script (the exit codes, `ExitCode`).

    async with open_client(parse_server("server.py"), "auto") as client: ...
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from enum import IntEnum
from pathlib import Path
from typing import Any

from mcp_bindgen.errors import BindgenError

from ..server_spec import ServerSpec

CONNECT_TIMEOUT = 60.0


class ExitCode(IntEnum):
    """What `mcp-bindgen list|call|read|get-prompt|inspect` exit with (the commands' --help lists them)."""

    OK = 0
    TOOL_ERROR = 1  # the tool ran and answered isError: true (or another command failed)
    USAGE = 2  # bad arguments (argparse's own code too)
    NOT_FOUND = 3  # no such tool, prompt or resource
    CONNECTION = 4  # the server could not be started, reached, or did not complete the handshake
    AUTH = 5  # the server asks for authorization (HTTP 401 / 403): pass --header 'Authorization: ...'
    SERVER_ERROR = 6  # the server answered the request with a JSON-RPC error


class LiveError(BindgenError):
    """A failure of a command against a live server, with the exit code it means."""

    def __init__(self, message: str, code: ExitCode) -> None:
        super().__init__(message)
        self.exit_code = int(code)


def known_versions() -> list[str]:
    from mcp_bindings.runtime.protocol import registry

    return list(registry.versions())


def client_class(version: str) -> Any:
    from mcp_bindings.runtime.protocol import registry

    try:
        package = registry.info(version).package
    except Exception as exc:  # an unknown version: say which ones exist
        raise LiveError(
            f"unknown protocol version {version!r}: use one of {', '.join(known_versions())} or auto", ExitCode.USAGE
        ) from exc
    return importlib.import_module(f"mcp_bindings.{package}.client").Client


@asynccontextmanager
async def open_client(
    server: ServerSpec,
    version: str | None,
    headers: dict[str, str] | None = None,
    *,
    stderr: Any = None,
    oauth: bool = False,
    env: dict[str, str] | None = None,
    extensions: Sequence[str] = (),
    **options: Any,
) -> AsyncIterator[Any]:
    """The typed client of `version` (None or "auto": the newest, negotiating down) connected to
    `server`; the handshake is bounded by CONNECT_TIMEOUT (the runtime's handshake timeout). A stdio
    server gets the safe variables of our environment and `env` (`connect_stdio`'s policy).
    `extensions`: the identifiers of extensions the client declares (the groups extension's, for
    `list tools --group`)."""
    if version in (None, "auto"):
        cls, options["protocol_version"] = client_class(known_versions()[-1]), "auto"
    else:
        cls = client_class(version)
    if extensions:
        options["handlers"] = handlers = importlib.import_module(cls.__module__).ClientHandlers()
        for identifier in extensions:
            handlers.use_extension(identifier, {})
    if server.url is not None:
        from mcp_bindings.runtime.client.http import connect_http

        auth = oauth_client() if oauth else None
        async with connect_http(server.url, cls, headers=headers, auth=auth, **options) as client:
            yield client
    else:
        from mcp_bindings.runtime.stdio.connect import connect_stdio

        async with connect_stdio(server.words, cls, env=env, stderr=stderr, **options) as client:
            yield client


OAUTH_REDIRECT_PORT = 33418  # one redirect URI across runs: the registration stored with the tokens stays valid
# Another port for the loopback redirect (0: one the system picks, bound once for this run; the stored
# registration is then renewed when the next run's port differs): where 33418 is taken.
OAUTH_PORT_ENV = "MCP_BINDGEN_OAUTH_PORT"


def oauth_redirect_port() -> int:
    """The loopback redirect's port: `MCP_BINDGEN_OAUTH_PORT` when set, else `OAUTH_REDIRECT_PORT`."""
    import os

    value = os.environ.get(OAUTH_PORT_ENV, "").strip()
    if not value:
        return OAUTH_REDIRECT_PORT
    if not value.isdigit() or int(value) > 65535:
        raise LiveError(f"{OAUTH_PORT_ENV}={value!r} is not a port (0-65535)", ExitCode.USAGE)
    return int(value)


def token_store() -> Path:
    """Where `--oauth` keeps client registrations and tokens (mode 0600), reused by the next run."""
    import os

    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "mcp-bindgen" / "oauth.json"


async def _open_browser(url: str) -> None:
    """Print the URL and open it; in a thread, as a browser command may wait (the loopback listener
    answering its redirect runs on this event loop)."""
    import webbrowser

    import anyio

    print(f"mcp-bindgen: authorize in your browser: {url}", file=sys.stderr, flush=True)
    await anyio.to_thread.run_sync(webbrowser.open, url)


def oauth_client() -> Any:
    """The project's OAuth client (`auth.OAuthClientAuth`): discovery, registration, PKCE, the
    authorization code flow through the browser and a loopback redirect, refresh; tokens kept in
    `token_store()`."""
    from mcp_bindings.runtime.auth import JsonFileTokenStorage, LoopbackAuthorizationHandler, OAuthClientAuth

    handler = LoopbackAuthorizationHandler(port=oauth_redirect_port(), open_browser=_open_browser)
    return OAuthClientAuth(handler, storage=JsonFileTokenStorage(token_store()), client_name="mcp-bindgen")


def innermost(exc: BaseException | None) -> BaseException | None:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:  # pyright: ignore[reportUnknownMemberType]
        exc = exc.exceptions[0]  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return exc  # pyright: ignore[reportUnknownVariableType]


def one_line(exc: BaseException, server: ServerSpec | None = None) -> str:
    """The innermost error as one line; the runtime's `[command words]` named as SERVER was given
    (a server file, not the internal `mcp-bindgen run` line)."""
    inner = innermost(exc) or exc
    text = " ".join(str(inner).split()) or type(inner).__name__
    if server is not None and server.command:
        text = text.replace(repr(server.command), f"`{server.text}`")
    return text[:600]


def timed_out(where: str, limit: float | None, elapsed: float | None = None, what: str = "") -> LiveError:
    """The server gave no answer in time: the limit that applied (`--timeout`, else the handshake's
    CONNECT_TIMEOUT) and, when the version probe made the wait longer, how long it was in all."""
    limit = limit or CONNECT_TIMEOUT
    total = f" ({elapsed:.0f} s in all, with the protocol version probe)" if elapsed and elapsed > limit + 1 else ""
    return LiveError(
        f"the server `{where}` did not answer{what} within {limit:g} s{total}: --timeout SECONDS sets the limit",
        ExitCode.CONNECTION,
    )


def failure(
    exc: BaseException, server: ServerSpec, timeout: float | None = None, elapsed: float | None = None
) -> LiveError:
    """What a failed connection or request means: one sentence and its exit code (`timeout`: the
    limit that applied, `elapsed`: how long the command waited)."""
    from mcp_bindings.runtime.client.runtime import LegacyServerError, ProtocolVersionError
    from mcp_bindings.runtime.rpc.calls import REQUEST_TIMEOUT
    from mcp_bindings.runtime.rpc.errors import McpError

    inner = innermost(exc) or exc
    where = server.text
    text = one_line(inner, server)
    if isinstance(inner, LiveError):
        return inner
    if isinstance(inner, TimeoutError):
        return timed_out(where, timeout, elapsed)
    if isinstance(inner, McpError) and inner.code == REQUEST_TIMEOUT and "timed out after" in inner.message:
        return timed_out(where, timeout, None, f" {inner.message.split()[0]}")
    if isinstance(inner, LegacyServerError):
        return LiveError(
            f"`{where}` does not speak MCP {inner.version} (it has no server/discover): "
            "pass --protocol auto or a handshake version such as 2025-11-25",
            ExitCode.CONNECTION,
        )
    if isinstance(inner, ProtocolVersionError):
        return LiveError(f"`{where}`: {inner.message}: pass --protocol auto", ExitCode.CONNECTION)
    if "HTTP 401" in text or "HTTP 403" in text:
        return LiveError(
            f"`{where}` requires authorization ({text}): pass --oauth, or --header 'Authorization: Bearer TOKEN'",
            ExitCode.AUTH,
        )
    if isinstance(inner, McpError) and not _connection_failure(inner):
        return LiveError(f"the server answered an error: {text}", ExitCode.SERVER_ERROR)
    return LiveError(f"could not talk to `{where}`: {text}", ExitCode.CONNECTION)


def _connection_failure(exc: Any) -> bool:
    stage = getattr(exc, "stage", None)
    return stage is not None or "HTTP request failed" in str(exc) or "could not" in str(exc)


def parse_env(values: Sequence[str] | None) -> dict[str, str]:
    """`--env NAME=VALUE` (the value given) or `--env NAME` (this process's value, when set): what a
    stdio server gets over the safe variables every server gets (`connect_stdio`'s policy)."""
    import os

    out: dict[str, str] = {}
    for value in values or []:
        name, sep, content = value.partition("=")
        if not name.strip():
            raise LiveError(f"--env {value!r} must read NAME=VALUE or NAME", ExitCode.USAGE)
        if sep:
            out[name.strip()] = content
        elif name.strip() in os.environ:
            out[name.strip()] = os.environ[name.strip()]
    return out


def parse_headers(values: Sequence[str] | None) -> dict[str, str] | None:
    out: dict[str, str] = {}
    for value in values or []:
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            raise LiveError(f"--header {value!r} must read `Name: value`", ExitCode.USAGE)
        out[name.strip()] = content.strip()
    return out or None
