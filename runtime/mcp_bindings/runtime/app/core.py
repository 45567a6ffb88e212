"""`App`: decorators on typed functions over a generated server stub.

The app builds, on first use, a subclass of its version's generated `Server` that overrides the
handlers of what was registered (so the stub derives the capabilities, as for a hand-written
server) and serves every list paginated, and registers the app's extensions on it
(`server.plugins`: MCP Apps, Skills, task tools, the user's). `App` holds its tables
(`app.registries`) and delegates to collaborators, none a base class: registration, serving, list
changes, mounting, running, middleware. Everything else is the runtime's: the same server object
serves every protocol version over every transport.
"""

from __future__ import annotations

import importlib
import inspect
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self, TypeVar, cast, overload

from typing_extensions import Unpack, deprecated

from mcp_bindings.runtime.app.access import Access
from mcp_bindings.runtime.app.around import Around
from mcp_bindings.runtime.app.auth import Auth
from mcp_bindings.runtime.app.changes import ListChanges
from mcp_bindings.runtime.app.errors import AppDefinitionError
from mcp_bindings.runtime.app.lifespan import LifespanFactory, Lifetime
from mcp_bindings.runtime.app.mounting import Mounting
from mcp_bindings.runtime.app.registration import PromptOptions, Registration, ResourceOptions, ToolOptions
from mcp_bindings.runtime.app.registries import Registries
from mcp_bindings.runtime.app.running import Running, TestClientOptions
from mcp_bindings.runtime.app.serving import Serving
from mcp_bindings.runtime.app.task_tools import TaskTools
from mcp_bindings.runtime.client.stub import ClientStub
from mcp_bindings.runtime.middleware.chain import Middleware
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.protocol.context import RequestContext
from mcp_bindings.runtime.protocol.spec import ProtocolTables
from mcp_bindings.runtime.server.plugins import Extension, extend
from mcp_bindings.runtime.server.stubs import ServerStub

if TYPE_CHECKING:
    from mcp_bindings.runtime.app.auth import ProtectedApp
    from mcp_bindings.runtime.app.openapi_app import OpenApiOptions
    from mcp_bindings.runtime.app.proxy import ProxyOptions, Remote
    from mcp_bindings.runtime.app.skills import Skills, SkillsOptions
    from mcp_bindings.runtime.app.ui import Source, Ui, UiResourceOptions, UiToolOptions
    from mcp_bindings.runtime.http.app import StreamableHTTPApp

    # The generated clients: `test_client("<version>")` is typed as that version's `Client` (types
    # only; tests/app/test_app_typed_client.py checks every version the runtime speaks has its overload).
    from mcp_bindings.v2024_11_05.client import Client as Client_2024_11_05
    from mcp_bindings.v2025_03_26.client import Client as Client_2025_03_26
    from mcp_bindings.v2025_06_18.client import Client as Client_2025_06_18
    from mcp_bindings.v2025_11_25.client import Client as Client_2025_11_25
    from mcp_bindings.v2026_07_28.client import Client as Client_2026_07_28

__all__ = ["App"]

log = logging.getLogger("mcp_bindings.runtime.app")

F = TypeVar("F", bound=Callable[..., Any])
E = TypeVar("E", bound=Extension)
C = TypeVar("C", bound=ClientStub)
M = TypeVar("M", bound=Middleware)


class App:
    """An MCP server made of decorated functions:

        app = App("weather", version="1.0")

        @app.tool
        def forecast(city: str, days: int = 3) -> Forecast: ...

        app.run()                      # stdio; app.run("http", port=3001); app.asgi(); app.test_client()

    `protocol` is the version the app is written against (default: the newest); it serves clients
    of every version all the same. `page_size` pages every list (None: one page). `inline_refs=True`
    writes tool schemas without `$ref` / `$defs` (what a pydantic model argument yields), for hosts
    that refuse references (`mcp-bindgen lint` warns of them); `@app.tool(inline_refs=...)` per tool.
    `lifespan`: a function of the app returning an async context manager (`@asynccontextmanager`),
    entered when the app starts serving and left when it stops; what it yields is `ctx.lifespan`
    (typed with `Context[State]`). Dependencies: `Annotated[T, Depends(provider)]` parameters.
    `middleware`: what runs around every request (`mcp_bindings.runtime.middleware`; or `@app.middleware`).
    `auth=Auth(...)`: served over HTTP as an OAuth resource server (`app.auth`). `extensions`: what
    the app's server adds (`server.plugins.Extension`: capabilities, methods, features; `app.add`).
    An exception a tool did not mean to raise (anything but `ToolError`) is logged with its traceback and answered as
    "the tool failed", without its text: `error_details=True` sends its type and message too (for
    development; exception text can hold data the client must not see)."""

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: Sequence[Mapping[str, Any]] | None = None,
        protocol: str | None = None,
        page_size: int | None = 100,
        logging: bool = True,
        request_state_secret: bytes | None = None,
        inline_refs: bool = False,
        lifespan: LifespanFactory | None = None,
        middleware: Sequence[Middleware] = (),
        auth: Auth | None = None,
        error_details: bool = False,
        extensions: Sequence[Extension] = (),
    ) -> None:
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be at least 1 (or None: no pagination)")
        self.name, self.version = name, version
        self.identity: dict[str, Any] = {
            "title": title,
            "description": description,
            "instructions": instructions,
            "website_url": website_url,
            "icons": icons,
            "request_state_secret": request_state_secret,
        }
        self.protocol_version = protocol or registry.default_version()
        self.protocol: ProtocolTables = registry.protocol(self.protocol_version)
        self._pkg: Any = registry.load_version(self.protocol_version)
        self.page_size = page_size
        self.logging = logging
        self.inline_refs = inline_refs
        self.auth = auth
        self.error_details = error_details
        self._lifetime = Lifetime(self, lifespan)
        self.registries = Registries()  # what it registered (its tables)
        self._server: ServerStub | None = None
        self.remote: Remote | None = None  # a proxy's upstream (`App.proxy`); None for any other app
        # The collaborators it delegates to.
        self._around = Around(self._lifetime)
        self._mounting = Mounting(self, self._lifetime)
        self._changes = self._mounting.changes = ListChanges(self, self._mounting)
        for each in middleware:
            self.middleware(each)
        self._registration = Registration(self.registries, self._pkg, self._changes, inline_refs)
        self._serving = Serving(self, self._pkg, self._lifetime)
        self._running = Running(self, self._lifetime)
        self._extensions: list[Extension] = [TaskTools(self.registries.tools), Access(self.registries)]
        for extension in extensions:
            self.add(extension)

    # -- extensions -----------------------------------------------------------------------------

    def add(self, extension: E) -> E:
        """Register an extension on the app's server (`server.plugins.Extension`: what it declares,
        serves and wraps); on a server already built, at once. Returns it."""
        if extension not in self._extensions:
            self._extensions.append(extension)
            if self._server is not None:
                extend(self._server, extension)
        return extension

    @cached_property
    def _ui(self) -> Ui:
        from mcp_bindings.runtime.app.ui import Ui  # imported when an app serves a UI (docs/performance.md)

        registers: Any = self  # its public `tool` / `resource`
        return Ui(registers, self.registries.tools, self.registries.resources, self._pkg)

    @cached_property
    def _skills(self) -> Skills:
        from mcp_bindings.runtime.app.skills import Skills  # imported when an app serves skills

        registers: Any = self  # its public `resource`, `remove_resource`, `resource_updated`
        return Skills(registers, self._pkg, self._lifetime, lambda: self._changes.changed("resources", "templates"))

    def ui_resource(self, uri: str, source: Source | None = None, /, **options: Unpack[UiResourceOptions]) -> Any:
        """Serve an MCP Apps UI resource (`app.ui.Ui.resource`; docs/extensions-apps.md)."""
        made = self._ui.resource(uri, source, **options)
        self.add(self._ui)
        return made

    def ui_tool(self, resource_uri: str | None = None, /, **options: Unpack[UiToolOptions]) -> Callable[[F], F]:
        """Register a tool that opens a UI resource (`app.ui.Ui.tool`: `visibility`, `meta` and `app.tool`'s
        options; docs/extensions-apps.md)."""
        made: Callable[[F], F] = self._ui.tool(resource_uri, **options)
        self.add(self._ui)
        return made

    def skills(self, directory: str | Path, **options: Unpack[SkillsOptions]) -> None:
        """Serve the Agent Skills under `directory` (`app.skills.Skills.directory`; docs/extensions-skills.md)."""
        self._skills.directory(directory, **options)
        self.add(self._skills)

    def skill(self, uri: str, *, description: str, **frontmatter: Any) -> Callable[[Any], Any]:
        """A decorator: a generated skill (`app.skills.Skills.skill`; docs/extensions-skills.md)."""
        made = self._skills.skill(uri, description=description, **frontmatter)
        self.add(self._skills)
        return made

    # -- changes (`app.changes.ListChanges`), middleware (`app.around`), mounting, proxying -------

    def remove_tool(self, name: str) -> None:
        self._changes.remove("tools", name)

    def remove_resource(self, uri: str) -> None:
        self._changes.remove("resources", uri)

    def remove_prompt(self, name: str) -> None:
        self._changes.remove("prompts", name)

    def disable(self, *names: str, tags: Collection[str] = ()) -> int:
        """Hide tools, prompts (by name), resources and templates (by URI or URI template), and those
        with any of `tags`: left out of their lists and answered as unknown, until `enable`d. The
        clients are told (`notifications/*/list_changed`). Returns how many changed; a name that
        names nothing is a `KeyError`."""
        return self._changes.switch(False, names, tags)

    def enable(self, *names: str, tags: Collection[str] = ()) -> int:
        """Show again what `disable` hid (same selection); returns how many changed."""
        return self._changes.switch(True, names, tags)

    async def resource_updated(self, uri: str) -> int:
        """Tell the clients subscribed to `uri` that it changed; returns how many were told (a mounted
        app: those of the apps it is mounted in too, under its namespace there)."""
        return await self._changes.resource_updated(uri)

    def middleware(self, middleware: M) -> M:
        """Run `middleware` around every request the app's handlers serve (after those registered
        before it): `async def mw(call: Call, call_next: Next) -> result`; see
        `mcp_bindings.runtime.middleware`. `call.lifespan` is the app's lifespan value; `raise
        ToolError(...)` denies the request. Register it before the app serves."""
        return self._around.add(middleware, serving=self._server is not None)

    def mount(self, other: App, namespace: str | None = None) -> None:
        """Serve `other`'s tools, prompts, resources, templates and completions as this app's, their
        names prefixed `namespace_` (resource URIs `scheme://namespace/...`; None: as they are). The
        two apps must be written against the same protocol version; a name taken here is refused."""
        self._mounting.mount(other, namespace)

    @classmethod
    def proxy(cls, target: str | Sequence[str], **options: Unpack[ProxyOptions]) -> Self:
        """An app serving the remote MCP server at `target`: an http(s) URL or the command that starts
        a stdio server (`app.proxy.proxy_app` describes the options)."""
        from mcp_bindings.runtime.app.proxy import proxy_app  # imported when an app proxies

        return cast("Self", proxy_app(cls, target, **options))

    @classmethod
    def openapi(cls, source: str, **options: Unpack[OpenApiOptions]) -> Self:
        """An app serving an OpenAPI description's operations as tools, with no generation step: a
        file, an https URL or a loopback http URL (`app.openapi_app.openapi_app` describes the options)."""
        from mcp_bindings.runtime.app.openapi_app import openapi_app

        return cast("Self", openapi_app(cls, source, **options))

    # -- registration (`app.registration.Registration`) -----------------------------------------

    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(self, fn: None = None, /, **options: Unpack[ToolOptions]) -> Callable[[F], F]: ...

    def tool(self, fn: F | None = None, /, **options: Unpack[ToolOptions]) -> F | Callable[[F], F]:
        """Register a tool: arguments and inputSchema from the signature (`Annotated[int,
        Field(description=...)]`, defaults), description from the docstring, outputSchema and
        structuredContent from the return annotation (a model, TypedDict, dataclass or dict as is;
        other types as `{"result": ...}`); `str`, `Image`, `Audio` and content blocks are returned as
        content. `structured=False` makes any return plain content. `input_schema` advertises that
        JSON Schema instead of the signature's (calls are checked against it; the function gets the
        arguments its parameters name). `task=True` (or "optional") lets a call run as a task the
        client polls, "required" only as one (see `app.serving`); `input_first=True` lets it ask
        for input as a plain call first and become the task where it calls `ctx.start_task()`.
        `tags`: names to `app.disable(tags=...)` / `app.enable(tags=...)` it by (also on resources
        and prompts). `scopes`: the OAuth scopes a call needs on top of the app's (`App(auth=...)`)."""
        scope = _caller_scope()

        def register(fn: F) -> F:
            self._registration.tool(fn, scope, options)
            return fn

        return register(fn) if fn is not None else register

    def resource(self, uri: str, **options: Unpack[ResourceOptions]) -> Callable[[F], F]:
        """Register a resource (`"config://app"`) or a resource template (`"users://{id}/posts{/rest*}"`,
        RFC 6570; its variables are the function's arguments). The function returns text (`str`),
        bytes, or anything JSON (written as `application/json`); raise `ResourceNotFound(uri)` for a
        URI that names nothing."""
        if not isinstance(uri, str):  # pyright: ignore[reportUnnecessaryIsInstance]  # `@app.resource` bare
            raise AppDefinitionError(
                f'@app.resource needs the resource\'s URI: @app.resource("config://app") (got {uri!r}), '
                'or a URI template whose variables are the function\'s arguments: @app.resource("users://{id}")'
            )
        scope = _caller_scope()

        def register(fn: F) -> F:
            self._registration.resource(uri, fn, scope, options)
            return fn

        return register

    @overload
    def prompt(self, fn: F, /) -> F: ...
    @overload
    def prompt(self, fn: None = None, /, **options: Unpack[PromptOptions]) -> Callable[[F], F]: ...

    def prompt(self, fn: F | None = None, /, **options: Unpack[PromptOptions]) -> F | Callable[[F], F]:
        """Register a prompt: its arguments are the function's (strings on the wire, converted to the
        annotated types); it returns text (one user message), a `Message` (`user(...)`,
        `assistant(...)`), or a list of them."""
        scope = _caller_scope()

        def register(fn: F) -> F:
            self._registration.prompt(fn, scope, options)
            return fn

        return register(fn) if fn is not None else register

    def complete(self, *, argument: str, prompt: str | None = None, template: str | None = None) -> Callable[[F], F]:
        """Register completions of a prompt's argument or a resource template's variable:
        `fn(value)` or `fn(value, arguments)` -> the candidate values (the first 100 are sent)."""
        if (prompt is None) == (template is None):
            raise AppDefinitionError("app.complete: name either prompt=... or template=...")
        kind, target = ("prompt", prompt) if prompt is not None else ("template", template)
        assert target is not None
        what = f"completion of {kind} {target!r} argument {argument!r}"
        scope = _caller_scope()

        def register(fn: F) -> F:
            self._registration.complete(fn, scope, (kind, target, argument), what)
            return fn

        return register

    # -- deprecated spellings: the handlers are the `Serving` collaborator's ---------------------

    @deprecated("App.serve_call_tool: the app's server calls its Serving collaborator (app.serving)")
    async def serve_call_tool(self, params: Any, ctx: RequestContext) -> Any:
        return await self._serving.serve_call_tool(params, ctx)

    @deprecated("App.serve_read_resource: the app's server calls its Serving collaborator (app.serving)")
    async def serve_read_resource(self, params: Any, ctx: RequestContext) -> Any:
        return await self._serving.serve_read_resource(params, ctx)

    @deprecated("App.serve_get_prompt: the app's server calls its Serving collaborator (app.serving)")
    async def serve_get_prompt(self, params: Any, ctx: RequestContext) -> Any:
        return await self._serving.serve_get_prompt(params, ctx)

    @deprecated("App.serve_complete: the app's server calls its Serving collaborator (app.serving)")
    async def serve_complete(self, params: Any, ctx: RequestContext) -> Any:
        return await self._serving.serve_complete(params, ctx)

    # -- the server -----------------------------------------------------------------------------

    @property
    def server(self) -> ServerStub:
        """The server object (a subclass of the stub's `Server`), built on first use."""
        if self._server is None:
            self._server = self._build()
            self._around.install(self._server)
            self._changes.declare_tools()
        return self._server

    def _build(self) -> ServerStub:
        stub: type[ServerStub] = importlib.import_module(f"{self._pkg.__name__}.server").Server
        handlers: dict[str, Any] = {}
        declared: dict[str, Any] = {}
        if self.registries.tools or "tools" in self.registries.serves:
            handlers.update(list_tools=_list_tools, call_tool=_call_tool)
            declared["tools"] = {"listChanged": True}
        if self.registries.resources or self.registries.templates or "resources" in self.registries.serves:
            handlers.update(
                list_resources=_list_resources, list_resource_templates=_list_templates, read_resource=_read_resource
            )
            # (a proxy: subscriptions where its remote has them)
            from mcp_bindings.runtime.app.proxy import resources_capability

            declared["resources"] = resources_capability(self.remote)
            for name in ("subscribe_resource", "unsubscribe_resource"):
                if "subscribe" in declared["resources"] and hasattr(stub, name):  # handshake era (host records)
                    handlers[name] = _subscription
        if self.registries.prompts or "prompts" in self.registries.serves:
            handlers.update(list_prompts=_list_prompts, get_prompt=_get_prompt)
            declared["prompts"] = {"listChanged": True}
        if self.registries.completers or "completions" in self.registries.serves:
            handlers["complete"] = _complete
        if self.logging:
            declared["logging"] = {}
        namespace: dict[str, Any] = {
            "__module__": __name__,
            "__doc__": f"The {self.name!r} app on the MCP {self.protocol_version} stub.",
            "name": self.name,
            "version": self.version,
            "declared_capabilities": declared,
            "app": self,
            # Its results are validated as they are built (`_call_result`, the generated models'
            # constructors): written without a second check (`ServerStub.check_results`).
            "check_results": False,
            **{k: v for k, v in self.identity.items() if v is not None},
            **handlers,
        }
        cls = type(f"{_class_name(self.name)}Server", (stub,), namespace)
        server = cls()
        for extension in self._extensions:  # what they declare, serve and wrap (`server.plugins`)
            extend(server, extension)
        return server

    # -- running (`app.running.Running`) ---------------------------------------------------------

    def run(
        self,
        transport: Literal["stdio", "http"] = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 3001,
        path: str = "/mcp",
        **options: Any,
    ) -> None:
        """Serve until interrupted, on stdio or Streamable HTTP at http://host:port/mcp (`Running.run`)."""
        self._running.run(transport, (host, port, path), options)

    def asgi(self, **options: Any) -> StreamableHTTPApp | ProtectedApp:
        """The ASGI app (Streamable HTTP at `/mcp`), to mount in Starlette, FastAPI, ... (`Running.asgi`)."""
        return self._running.asgi(**options)

    @overload
    def test_client(
        self, protocol_version: type[C], **options: Unpack[TestClientOptions]
    ) -> AbstractAsyncContextManager[C]: ...
    @overload
    def test_client(
        self, protocol_version: Literal["2024-11-05"], **options: Unpack[TestClientOptions]
    ) -> AbstractAsyncContextManager[Client_2024_11_05]: ...
    @overload
    def test_client(
        self, protocol_version: Literal["2025-03-26"], **options: Unpack[TestClientOptions]
    ) -> AbstractAsyncContextManager[Client_2025_03_26]: ...
    @overload
    def test_client(
        self, protocol_version: Literal["2025-06-18"], **options: Unpack[TestClientOptions]
    ) -> AbstractAsyncContextManager[Client_2025_06_18]: ...
    @overload
    def test_client(
        self, protocol_version: Literal["2025-11-25"], **options: Unpack[TestClientOptions]
    ) -> AbstractAsyncContextManager[Client_2025_11_25]: ...
    @overload
    def test_client(
        self, protocol_version: Literal["2026-07-28"], **options: Unpack[TestClientOptions]
    ) -> AbstractAsyncContextManager[Client_2026_07_28]: ...
    @overload
    def test_client(
        self, protocol_version: str | None = None, **options: Unpack[TestClientOptions]
    ) -> AbstractAsyncContextManager[Any]: ...

    def test_client(
        self, protocol_version: str | type[ClientStub] | None = None, **options: Any
    ) -> AbstractAsyncContextManager[Any]:
        """An in-memory client connected to the app, typed as the `Client` of `protocol_version`
        (default: the app's version); see `Running.test_client`."""
        return self._running.test_client(protocol_version, **options)


def _caller_scope() -> dict[str, Any]:
    """The local names where a decorator is applied (two frames up: the caller of `App.tool`, ...),
    so annotations naming types local to a function resolve (`from __future__ import annotations`)."""
    frame = inspect.currentframe()
    for _ in range(2):
        frame = frame.f_back if frame is not None else None
    if frame is None or frame.f_locals is frame.f_globals:
        return {}
    return dict(frame.f_locals)


def _class_name(name: str) -> str:
    cleaned = "".join(part.capitalize() for part in "".join(ch if ch.isalnum() else " " for ch in name).split())
    return cleaned if cleaned and cleaned[0].isalpha() else f"App{cleaned}"


# -- the handlers of the generated server class (self: the server; self.app: the App) ------------


def _lister(kind: str, result: str, field: str) -> Callable[..., Any]:
    """The handler listing `kind`: one page of it as the stub's `result` model (its list in `field`)."""

    async def handler(self: Any, params: Any, ctx: RequestContext) -> Any:
        page, cursor = self.app._serving.page(kind, params)
        return getattr(self.app._serving.pkg, result)(**{field: page}, next_cursor=cursor)

    return handler


def _served(name: str) -> Callable[..., Any]:
    """The handler calling the app's `Serving.<name>` (`serve_call_tool`, ...)."""

    async def handler(self: Any, params: Any, ctx: RequestContext) -> Any:
        return await getattr(self.app._serving, name)(params, ctx)

    return handler


async def _subscription(self: Any, params: Any, ctx: RequestContext) -> Any:
    return {}  # the runtime records the subscription once this succeeds


_list_tools = _lister("tools", "ListToolsResult", "tools")
_list_resources = _lister("resources", "ListResourcesResult", "resources")
_list_templates = _lister("templates", "ListResourceTemplatesResult", "resource_templates")
_list_prompts = _lister("prompts", "ListPromptsResult", "prompts")
_call_tool = _served("serve_call_tool")
_read_resource = _served("serve_read_resource")
_get_prompt = _served("serve_get_prompt")
_complete = _served("serve_complete")
