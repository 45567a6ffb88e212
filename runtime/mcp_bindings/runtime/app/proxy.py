"""A proxy: `App.proxy(url | command)` serves a remote MCP server, of any protocol version over any
transport (Streamable HTTP, or stdio: a command to start), through this runtime, as an `App` of its
own: what it serves to its clients (any version, any transport) is what the remote lists, and every
call goes to the remote. A stdio server written for 2024-11-05 becomes a 2026-07-28 Streamable HTTP
server with `App.proxy(["python", "old_server.py"]).run("http")`.

The upstream connection is the app's lifespan: opened (and everything listed) when the app starts
serving, closed when it stops. The remote's tools, prompts, resources and templates are entries of
the app's tables (`app.proxy_entries`), so the app pages, enables, disables and mounts them as its
own (`app.mount(App.proxy(...), namespace="x")`); the remote's list changes re-list them and reach
the app's clients. Calls are forwarded as they came and answered with what the remote answered: a
JSON-RPC error with its code (resource not found crossed into the app's version's code), a remote
gone with -32603 naming it. Progress and log messages of a call reach the client of that call; the
remote's sampling, elicitation and roots requests are asked of the client whose call is in progress
(where its version and capabilities allow: else the remote gets the reason as its error). Where the
remote offers resource subscriptions, so does the app: its clients' subscriptions are held at the
remote once per URI (`app.proxy_subscriptions`). `App.proxy` calls `proxy_app` (`app.core`)."""

from __future__ import annotations

import importlib
import inspect
import logging
import shlex
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup
from pydantic import BaseModel
from typing_extensions import Unpack

from mcp_bindings.runtime.app.asks import Suspend
from mcp_bindings.runtime.app.changes import PROMPTS_CHANGED, RESOURCES_CHANGED, TOOLS_CHANGED
from mcp_bindings.runtime.app.context import Context
from mcp_bindings.runtime.app.errors import ResourceNotFound
from mcp_bindings.runtime.app.proxy_entries import RemotePrompt, RemoteResource, RemoteTemplate, RemoteTool
from mcp_bindings.runtime.app.proxy_subscriptions import GONE, RemoteSubscriptions, ended, subscribes
from mcp_bindings.runtime.app.uri_template import TemplateError
from mcp_bindings.runtime.client.options import ClientArgs
from mcp_bindings.runtime.client.stub import ClientHandlerStub
from mcp_bindings.runtime.protocol import registry, versions
from mcp_bindings.runtime.protocol.pagination import every_page
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, INVALID_REQUEST, McpError
from mcp_bindings.v2026_07_28 import names as v2026

if TYPE_CHECKING:
    from mcp_bindings.runtime.app.changes import ListChanges
    from mcp_bindings.runtime.app.core import App
    from mcp_bindings.runtime.app.mounting import Mounting
    from mcp_bindings.runtime.stdio.connect import ChildEnv

__all__ = ["ProxyOptions", "Remote", "proxy_app", "resources_capability"]

log = logging.getLogger("mcp_bindings.runtime.app")

KINDS = ("tools", "resources", "prompts")  # what a proxy serves before it knows what the remote has
COMPLETIONS = "completions"  # served too, forwarded (no table: the remote answers each request)
_TABLES = ("tools", "prompts", "resources", "templates")  # the app's tables a remote's lists are placed in
_OWN = ("name", "version", "protocol", "env", "cwd", "headers", "sse")  # `ProxyOptions` not the client's
RESERVED = "io.modelcontextprotocol/"  # the protocol's own `_meta` keys (2026-07-28: serverInfo, ...)


def _target(target: str | Sequence[str]) -> tuple[str | None, list[str]]:
    """(url, []) for an http(s) URL; (None, argv) for a command (a string is split as a shell would)."""
    if isinstance(target, str):
        if target.startswith(("http://", "https://")):
            return target, []
        argv = shlex.split(target)
    else:
        argv = list(target)
    if not argv:
        raise ValueError("App.proxy: give the remote server's URL (http://...) or the command that starts it")
    return None, argv


class Remote:
    """The proxy's upstream: the connection (the app's lifespan), what it lists, and the calls in
    progress (where the remote's requests and log messages go)."""

    def __init__(self, app: App, target: str | Sequence[str], options: ProxyOptions) -> None:
        self.app = app
        self.url, self.command = _target(target)
        self.sse = options.get("sse", False)
        if self.sse and self.url is None:
            raise ValueError("App.proxy: sse=True is for a URL (the server's /sse endpoint), not a command")
        self.env, self.cwd, self.headers = options.get("env"), options.get("cwd"), options.get("headers")
        # The client's options (`ClientOptions`): what `proxy_app` and this leave to it.
        self.options: dict[str, Any] = {"request_timeout": 60.0}
        self.options.update((k, v) for k, v in options.items() if k not in _OWN)
        self.name = self.url or shlex.join(self.command)
        self.client: Any = None  # the typed client (the app's version's `Client`) while connected
        self.gone: str | None = None  # why the remote is not there (None: connected, or not started)
        self.calls: list[Context[Any]] = []  # the contexts of the calls in progress, oldest first
        self.scopes: dict[int, anyio.CancelScope] = {}  # id(context) -> the scope of its forwarded request
        self.keys: dict[str, set[str]] = {kind: set() for kind in _TABLES}  # what the remote placed
        self.subscribes = True  # the remote offers resource subscriptions (until connected: assumed)
        self._group: TaskGroup | None = None

    # -- the connection -------------------------------------------------------------------------

    def connection(self, handlers: ClientHandlerStub) -> AbstractAsyncContextManager[Any]:
        client_cls = _client_module(self.app).Client
        settings: dict[str, Any] = {"protocol_version": "auto", **self.options, "handlers": handlers}
        if self.url is not None:
            from mcp_bindings.runtime.client.http import connect_http, connect_sse

            if self.sse:  # the 2024-11-05 HTTP+SSE transport: that version only
                settings["protocol_version"] = self.options.get("protocol_version") or "2024-11-05"
                return connect_sse(self.url, client_cls, headers=self.headers, **settings)
            return connect_http(self.url, client_cls, headers=self.headers, **settings)
        from mcp_bindings.runtime.stdio.connect import connect_stdio

        return connect_stdio(self.command, client_cls, env=self.env, cwd=self.cwd, **settings)

    @asynccontextmanager
    async def lifespan(self, app: Any) -> AsyncGenerator[Any]:
        """Connect, list everything, serve; disconnect when the app stops."""
        self.gone = None
        try:
            async with self.connection(_handlers(self)) as client, anyio.create_task_group() as group:
                self.client, self._group = client, group
                self._narrow(client.server_capabilities)
                for kind in _TABLES:
                    await self.refresh(kind)
                if client.session.stateless:  # list changes come on a listen stream only (2026-07-28)
                    group.start_soon(self._listen, client)
                if "logging" in client.server_capabilities:
                    await client.set_logging_level("debug")  # each client of the app gets what its level lets through
                unwatch = self._forward_subscriptions(client, group)
                try:
                    yield client
                finally:
                    unwatch()
                    group.cancel_scope.cancel()
        except (ConnectionError, McpError, TimeoutError) as exc:
            if self.client is None:
                raise ConnectionError(f"App.proxy: cannot connect to the MCP server {self.name}: {exc}") from None
            raise
        finally:
            self.client, self._group = None, None
            self.gone = self.gone or "the proxy app is not serving"

    def _forward_subscriptions(self, client: Any, group: TaskGroup) -> Callable[[], None]:
        """Hold the app's clients' resource subscriptions at the remote, where it has them (a mounted
        proxy: the subscriptions of the apps it is mounted in, to its URIs); returns what stops it."""
        if not self.subscribes:
            return lambda: None
        forwarding = RemoteSubscriptions(client, self.name)
        group.start_soon(forwarding.run)
        mounting: Mounting = self.app._mounting  # pyright: ignore[reportPrivateUsage]
        return mounting.watch_subscribed(forwarding.watch)

    def _narrow(self, remote: Mapping[str, Any]) -> None:
        """Advertise what the remote has (a server built already advertised every kind)."""
        app = self.app
        self.subscribes = subscribes(remote)
        served = {*KINDS, COMPLETIONS}
        has = {kind for kind in served if kind in remote}
        if COMPLETIONS not in self.client.session.protocol.server_capability_paths:
            has.add(COMPLETIONS)  # a version without the capability (2024-11-05): completion is ungated
        app.registries.serves -= served
        app.registries.serves |= has
        server = app._server  # pyright: ignore[reportPrivateUsage]
        if server is None or app._mounting.parents:  # pyright: ignore[reportPrivateUsage]
            return  # built later (from what is listed), or mounted: the parent advertises
        for kind in KINDS:
            if (
                kind not in remote
                and not app.registries.table(kind)
                and not (kind == "resources" and app.registries.templates)
            ):
                server.capabilities.pop(kind, None)
        if COMPLETIONS not in has and not app.registries.completers:
            server.capabilities.pop(COMPLETIONS, None)
        if "resources" in server.capabilities:
            server.capabilities["resources"] = resources_capability(self)

    # -- what the remote lists ------------------------------------------------------------------

    async def refresh(self, kind: str) -> None:
        """List one kind from the remote again and place it in the app's tables (list changed)."""
        client = self.client
        if client is None:
            return
        gate = "resources" if kind == "templates" else kind
        if gate not in client.server_capabilities:
            return
        listed = await _list_all(client, kind)
        table = self.app.registries.table(kind)
        changes: ListChanges = self.app._changes  # pyright: ignore[reportPrivateUsage]
        for key in self.keys[kind]:
            table.pop(key, None)
        made: dict[str, Any] = {}
        for definition in listed:
            try:
                entry = _KINDS[kind][0](definition, self.forward)
            except TemplateError as exc:
                log.warning("App.proxy: the remote's resource template is skipped: %s", exc)
                continue
            key = entry.key
            if key in table:
                log.warning("App.proxy: the remote's %s %r is shadowed by the app's own", kind[:-1], key)
                continue
            made[key] = entry
        table.update(made)
        self.keys[kind] = set(made)
        changes.changed(kind)

    def changed(self, *kinds: str) -> None:
        """The remote's list changed: list it again (in the connection's task group, not the reader's)."""
        if self._group is not None:
            for kind in kinds:
                self._group.start_soon(self._refresh_logged, kind)

    async def _listen(self, client: Any) -> None:
        """A stateless remote's list changes, on a `subscriptions/listen` stream while connected."""
        wanted = {f"{kind}ListChanged": True for kind in KINDS if kind in client.server_capabilities}
        if not wanted:
            return
        kinds = {
            TOOLS_CHANGED: ("tools",),
            PROMPTS_CHANGED: ("prompts",),
            RESOURCES_CHANGED: ("resources", "templates"),
        }
        try:
            async with client.session.listen(wanted) as stream:
                async for notification in stream:
                    self.changed(*kinds.get(getattr(notification, "method", ""), ()))
        except (McpError, *GONE, BaseExceptionGroup) as exc:  # a group: the stream's own task group's
            why = ended(exc)
            if why is None:
                raise
            log.warning("App.proxy: the remote's list changes cannot be followed: %s", why)

    async def _refresh_logged(self, kind: str) -> None:
        try:
            await self.refresh(kind)
        except (McpError, *GONE) as exc:
            log.warning("App.proxy: listing the remote's %s again failed: %s", kind, exc)

    # -- forwarding -----------------------------------------------------------------------------

    async def forward(self, method: str, params: dict[str, Any], ctx: Context[Any]) -> Any:
        """Send one request to the remote on behalf of `ctx`'s call; its result (the app's version)."""
        client = self.client
        if client is None:
            raise McpError(INTERNAL_ERROR, f"the upstream MCP server {self.name} is not connected: {self.gone}")
        self.calls.append(ctx)
        try:
            with anyio.CancelScope() as scope, client.session.progress(ctx.report_progress):
                self.scopes[id(ctx)] = scope
                return _own(await _send(client, method, params))
            return None  # unwound for an input round (`ask`): the app answers with its InputRequiredResult
        except McpError as exc:
            raise self._error(method, params, exc) from None
        except GONE as exc:
            self.gone = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise McpError(
                INTERNAL_ERROR, f"the upstream MCP server {self.name} is gone ({self.gone}); {method} was not answered"
            ) from None
        finally:
            self.calls.remove(ctx)
            self.scopes.pop(id(ctx), None)

    def _error(self, method: str, params: dict[str, Any], exc: McpError) -> Exception:
        client = self.client
        protocol = client.session.protocol if client is not None else None
        not_found = protocol.error_codes.resource_not_found if protocol is not None else None
        if method == v2026.RESOURCES_READ and not_found is not None and exc.code == not_found:
            return ResourceNotFound(params["uri"])
        return McpError(exc.code, exc.message, exc.data)

    async def ask(self, method: str, params: Any) -> Any:
        """The remote asks its client (sampling, elicitation, roots): asked of the client of the
        latest call in progress, in the app's terms."""
        if not self.calls:
            raise McpError(INVALID_REQUEST, f"the proxy has no call in progress whose client could answer {method}")
        ctx = self.calls[-1]
        try:
            return await ctx._ask(method, versions.dump(params) if params is not None else None)  # pyright: ignore[reportPrivateUsage]
        except Suspend:  # a stateless client: asked in the next input round of its call, which unwinds now
            scope = self.scopes.get(id(ctx))
            if scope is not None:
                scope.cancel()
            raise McpError(INVALID_REQUEST, f"{method} is asked of the proxy's client in an input round") from None

    async def log(self, params: Any) -> None:
        data: dict[str, Any] = versions.dump(params)
        if self.calls:
            await self.calls[-1].log(data.get("level", "info"), data.get("data"), data.get("logger"))
        else:
            log.info("the upstream MCP server %s logged: %s", self.name, data.get("data"))


# kind -> the entry a listed definition becomes, the client's list call, the list's field in its result
_KINDS: dict[str, tuple[Callable[..., Any], str, str]] = {
    "tools": (RemoteTool, "list_tools", "tools"),
    "prompts": (RemotePrompt, "list_prompts", "prompts"),
    "resources": (RemoteResource, "list_resources", "resources"),
    "templates": (RemoteTemplate, "list_resource_templates", "resource_templates"),
}


async def _list_all(client: Any, kind: str) -> list[Any]:
    _, call, field = _KINDS[kind]
    # bounded: a remote that pages for ever is cut off
    return await every_page(lambda cursor: getattr(client, call)(cursor=cursor), field, max_pages=1000)


async def _send(client: Any, method: str, params: dict[str, Any]) -> Any:
    if method == v2026.TOOLS_CALL:
        return await client.call_tool(name=params["name"], arguments=params["arguments"])
    if method == v2026.PROMPTS_GET:
        return await client.get_prompt(name=params["name"], arguments=params["arguments"] or None)
    if method == v2026.COMPLETION_COMPLETE:
        asked = {"ref": params.get("ref"), "argument": params.get("argument")}
        if params.get("context") is not None and "context" in inspect.signature(client.complete).parameters:
            asked["context"] = params["context"]  # (a remote's version without it does not get it)
        return await client.complete(**asked)
    return await client.read_resource(uri=params["uri"])


def _own(result: BaseModel) -> Any:
    """The remote's result without what the protocol stamps on it (the remote's name in `_meta`, the
    result type): the app's runtime stamps its own for each client."""
    data: dict[str, Any] = versions.dump(result)
    data.pop("resultType", None)
    meta: dict[str, Any] = data.pop("_meta", None) or {}
    kept = {key: value for key, value in meta.items() if not key.startswith(RESERVED)}
    if kept:
        data["_meta"] = kept
    return type(result).model_validate(data)


def _client_module(app: App) -> Any:
    """The generated client module of the app's version."""
    return importlib.import_module(f"{registry.load_version(app.protocol_version).__name__}.client")


def _handlers(remote: Remote) -> ClientHandlerStub:
    """The proxy's client handlers (the app's version): the remote's requests and notifications."""
    base: type[ClientHandlerStub] = _client_module(remote.app).ClientHandlers

    def asking(method: str) -> Any:
        async def handler(self: Any, params: Any, ctx: Any) -> Any:
            return await remote.ask(method, params)

        return handler

    def refreshing(*kinds: str) -> Any:
        async def handler(self: Any, params: Any, ctx: Any) -> None:
            remote.changed(*kinds)

        return handler

    async def on_logging_message(self: Any, params: Any, ctx: Any) -> None:
        await remote.log(params)

    async def on_resource_updated(self: Any, params: Any, ctx: Any) -> None:
        await remote.app.resource_updated(versions.dump(params)["uri"])

    namespace: dict[str, Any] = {
        "__module__": __name__,
        "create_message": asking(v2026.SAMPLING_CREATE_MESSAGE),
        "elicit": asking(v2026.ELICITATION_CREATE),
        "list_roots": asking(v2026.ROOTS_LIST),
        "on_logging_message": on_logging_message,
        "on_tool_list_changed": refreshing("tools"),
        "on_prompt_list_changed": refreshing("prompts"),
        "on_resource_list_changed": refreshing("resources", "templates"),
        "on_resource_updated": on_resource_updated,
    }
    namespace = {k: v for k, v in namespace.items() if k == "__module__" or hasattr(base, k)}
    return type("ProxyClientHandlers", (base,), namespace)()


def resources_capability(remote: Remote | None) -> dict[str, Any]:
    """An app's `resources` capability: lists change; subscriptions are offered by every app, by a
    proxy where its remote offers them."""
    offered = remote is None or remote.subscribes
    return {"listChanged": True, "subscribe": True} if offered else {"listChanged": True}


class ProxyOptions(ClientArgs, total=False):
    """`App.proxy`'s keyword arguments (see `proxy_app`): these, then the client's (`ClientOptions`;
    its `handlers` are the proxy's own)."""

    name: str | None
    version: str
    protocol: str | None
    env: ChildEnv
    cwd: str | None
    headers: Mapping[str, str] | None
    sse: bool


def proxy_app(make: Callable[..., App], target: str | Sequence[str], **options: Unpack[ProxyOptions]) -> App:
    """`App.proxy`: an app (made by `make`, the `App` class) serving the remote MCP server at
    `target`: an http(s) URL (Streamable HTTP), or the command that starts a stdio server (a list,
    or a string split as a shell would; `cwd`; `env`: its environment, over the safe variables it
    gets of ours, `connect_stdio`'s; `env=INHERIT` all); `sse=True`: the URL is a legacy
    (2024-11-05) HTTP+SSE server's `/sse` endpoint. `protocol`: the version the app is written
    against (default: the newest; the remote may speak any). `headers` go on every HTTP request to
    the remote; `request_timeout` bounds each forwarded request (seconds, default 60); the client's
    options (`ClientOptions`: `protocol_version` pins the remote's version instead of "auto",
    `probe_timeout`, ...). Run it as any app (`run`, `asgi`, `test_client`) or mount it
    (`app.mount(App.proxy(...), namespace="x")`)."""
    holder: list[Remote] = []

    def lifespan(app: Any) -> AbstractAsyncContextManager[Any]:
        return holder[0].lifespan(app)

    app = make(
        options.get("name") or "proxy",
        options.get("version", "0.1.0"),
        protocol=options.get("protocol"),
        lifespan=lifespan,
    )
    remote = Remote(app, target, options)
    holder.append(remote)
    app.registries.serves |= {*KINDS, COMPLETIONS}
    app.remote = remote
    return app
