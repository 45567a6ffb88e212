"""`App`: decorators on typed functions over a generated server stub.

The app builds, on first use, a subclass of its version's generated `Server` that overrides the
handlers of what was registered (so the stub derives the capabilities, as for a hand-written
server) and serves every list paginated. Everything else is the runtime's: the same server
object serves every protocol version over every transport.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

from pydantic import BaseModel
from typing_extensions import Unpack

from mcp_bindings.runtime.app.around import Around
from mcp_bindings.runtime.app.auth import Auth
from mcp_bindings.runtime.app.changes import PROMPTS_CHANGED, RESOURCES_CHANGED, TOOLS_CHANGED, ListChanges
from mcp_bindings.runtime.app.entries import (
    Completer,
    PromptEntry,
    ResourceEntry,
    TemplateEntry,
    ToolEntry,
)
from mcp_bindings.runtime.app.errors import AppDefinitionError
from mcp_bindings.runtime.app.lifespan import LifespanFactory, Lifetime
from mcp_bindings.runtime.app.mounting import Mounting
from mcp_bindings.runtime.app.proxy import Proxying
from mcp_bindings.runtime.app.running import Running
from mcp_bindings.runtime.app.serving import Serving
from mcp_bindings.runtime.app.skills import Skills, SkillsOptions
from mcp_bindings.runtime.app.task_tools import TaskTools
from mcp_bindings.runtime.app.ui import Source, Ui, UiResourceOptions, Visibility
from mcp_bindings.runtime.middleware.chain import Middleware
from mcp_bindings.runtime.protocol import crossing, registry
from mcp_bindings.runtime.protocol.context import RequestContext
from mcp_bindings.runtime.protocol.spec import ProtocolTables
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS
from mcp_bindings.runtime.server.plugins import Extension, extend
from mcp_bindings.runtime.server.stubs import ServerStub
from mcp_bindings.v2026_07_28 import names as v2026

__all__ = ["App"]

log = logging.getLogger("mcp_bindings.runtime.app")

F = TypeVar("F", bound=Callable[..., Any])
E = TypeVar("E", bound=Extension)


class App(ListChanges, Mounting, Proxying, Around, Serving, Running):
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
    the app's server adds (`server.plugins.Extension`: capabilities, methods, features; `app.add`). An exception a tool
    did not mean to raise (anything but `ToolError`) is logged with its traceback and answered as
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
        self._middleware: list[Middleware] = []
        self._tools: dict[str, ToolEntry] = {}
        self._resources: dict[str, ResourceEntry] = {}
        self._templates: dict[str, TemplateEntry] = {}
        self._prompts: dict[str, PromptEntry] = {}
        self._completers: dict[tuple[str, str, str], Completer] = {}
        self._lists: dict[str, list[Any]] = {}  # cached definitions per list
        self._server: ServerStub | None = None
        self._mounts: list[Any] = []  # the apps mounted here (`app.mount`)
        self._parents: list[App] = []  # the apps this one is mounted in
        self._origins: dict[int, tuple[Any, App]] = {}
        # Kinds served (and advertised) while their table may still be empty: a proxy's, a mounted proxy's.
        self._serves: set[str] = set()
        for each in middleware:
            self.middleware(each)
        self._pending: set[str] = set()  # list changes not broadcast yet
        self._flush: asyncio.Task[None] | None = None
        self._not_found = self.protocol.error_codes.resource_not_found or INVALID_PARAMS
        call = self.protocol.client_requests[v2026.TOOLS_CALL]
        self._call_result: Callable[[Any], Any] = crossing.shaped(call.result, self.protocol_version)
        self._input_required = {m for m, s in self.protocol.client_requests.items() if s.input_required}
        self._extensions: list[Extension] = [TaskTools(self._tools)]
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
        registers: Any = self  # its public `tool` / `resource`
        return Ui(registers, self._tools, self._resources, self._pkg)

    @cached_property
    def _skills(self) -> Skills:
        registers: Any = self  # its public `resource`, `remove_resource`, `resource_updated`
        lists = ("resources", "templates")
        return Skills(registers, self._pkg, self._lifetime, lambda: self._changed(RESOURCES_CHANGED, *lists))

    def ui_resource(self, uri: str, source: Source | None = None, /, **options: Unpack[UiResourceOptions]) -> Any:
        """Serve an MCP Apps UI resource (`app.ui.Ui.resource`; docs/extensions-apps.md)."""
        made = self._ui.resource(uri, source, **options)
        self.add(self._ui)
        return made

    def ui_tool(
        self,
        resource_uri: str | None = None,
        /,
        *,
        visibility: Sequence[Visibility] | None = None,
        meta: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> Callable[[F], F]:
        """Register a tool that opens a UI resource (`app.ui.Ui.tool`; docs/extensions-apps.md)."""
        made: Callable[[F], F] = self._ui.tool(resource_uri, visibility=visibility, meta=meta, **options)
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

    # -- registration ---------------------------------------------------------------------------

    @overload
    def tool(self, fn: F, /) -> F: ...

    @overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: Mapping[str, Any] | BaseModel | None = None,
        icons: Sequence[Mapping[str, Any] | BaseModel] | None = None,
        meta: Mapping[str, Any] | None = None,
        structured: bool | None = None,
        input_schema: Mapping[str, Any] | None = None,
        task: bool | Literal["optional", "required"] = False,
        input_first: bool = False,
        inline_refs: bool | None = None,
        tags: Collection[str] = (),
        scopes: Collection[str] = (),
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        fn: F | None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: Mapping[str, Any] | BaseModel | None = None,
        icons: Sequence[Mapping[str, Any] | BaseModel] | None = None,
        meta: Mapping[str, Any] | None = None,
        structured: bool | None = None,
        input_schema: Mapping[str, Any] | None = None,
        task: bool | Literal["optional", "required"] = False,
        input_first: bool = False,
        inline_refs: bool | None = None,
        tags: Collection[str] = (),
        scopes: Collection[str] = (),
    ) -> F | Callable[[F], F]:
        """Register a tool: arguments and inputSchema from the signature (`Annotated[int,
        Field(description=...)]`, defaults), description from the docstring, outputSchema and
        structuredContent from the return annotation (a model, TypedDict, dataclass or dict as is;
        other types as `{"result": ...}`); `str`, `Image`, `Audio` and content blocks are returned as
        content. `structured=False` makes any return plain content. `input_schema` advertises that
        JSON Schema instead of the signature's (calls are checked against it; the function gets the
        arguments its parameters name). `task=True` (or "optional") lets a call run as a task the
        client polls, "required" only as one (see `serve_call_tool`); `input_first=True` lets it ask
        for input as a plain call first and become the task where it calls `ctx.start_task()`.
        `tags`: names to `app.disable(tags=...)` / `app.enable(tags=...)` it by (also on resources
        and prompts). `scopes`: the OAuth scopes a call needs on top of the app's (`App(auth=...)`)."""

        scope = _caller_scope()

        def register(fn: F) -> F:
            entry = ToolEntry(
                fn,
                self._pkg,
                name=name,
                title=title,
                description=description,
                annotations=annotations,
                icons=icons,
                meta=meta,
                structured=structured,
                scope=scope,
                input_schema=input_schema,
                task=task,
                input_first=input_first,
                inline_refs=self.inline_refs if inline_refs is None else inline_refs,
            )
            entry.tags = _tags(tags, f"tool {entry.name!r}")
            entry.scopes = tuple(_tags(scopes, f"tool {entry.name!r}: scopes"))
            known = self._tools.get(entry.name)
            if known is not None:
                raise AppDefinitionError(
                    f"tool {entry.name!r} is already registered (by {_where(known.fn)}); "
                    f"app.remove_tool({entry.name!r}) first to replace it"
                )
            self._require("tools", bool(self._tools))
            self._tools[entry.name] = entry
            self._changed(TOOLS_CHANGED, "tools")
            return fn

        return register(fn) if fn is not None else register

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: Mapping[str, Any] | BaseModel | None = None,
        icons: Sequence[Mapping[str, Any] | BaseModel] | None = None,
        meta: Mapping[str, Any] | None = None,
        tags: Collection[str] = (),
    ) -> Callable[[F], F]:
        """Register a resource (`"config://app"`) or a resource template (`"users://{id}/posts{/rest*}"`,
        RFC 6570; its variables are the function's arguments). The function returns text (`str`),
        bytes, or anything JSON (written as `application/json`); raise `ResourceNotFound(uri)` for a
        URI that names nothing."""
        if not isinstance(uri, str):  # pyright: ignore[reportUnnecessaryIsInstance]  # `@app.resource` bare
            raise AppDefinitionError(
                f'@app.resource needs the resource\'s URI: @app.resource("config://app") (got {uri!r}), '
                'or a URI template whose variables are the function\'s arguments: @app.resource("users://{id}")'
            )
        options: dict[str, Any] = {
            "name": name,
            "title": title,
            "description": description,
            "mime_type": mime_type,
            "size": size,
            "annotations": annotations,
            "icons": icons,
            "meta": meta,
        }

        scope = _caller_scope()

        def register(fn: F) -> F:
            had = bool(self._resources or self._templates)
            if "{" in uri or "}" in uri:
                if size is not None:
                    raise AppDefinitionError(f"resource template {uri!r}: size is for resources, not templates")
                template = TemplateEntry(uri, fn, self._pkg, options, scope)
                template.tags = _tags(tags, f"resource template {uri!r}")
                if uri in self._templates:
                    raise AppDefinitionError(f"resource template {uri!r} is already registered")
                self._require("resources", had)
                self._templates[uri] = template
            else:
                entry = ResourceEntry(uri, fn, self._pkg, options, scope)
                entry.tags = _tags(tags, f"resource {uri!r}")
                if uri in self._resources:
                    raise AppDefinitionError(f"resource {uri!r} is already registered")
                self._require("resources", had)
                self._resources[uri] = entry
            self._changed(RESOURCES_CHANGED, "resources", "templates")
            return fn

        return register

    @overload
    def prompt(self, fn: F, /) -> F: ...

    @overload
    def prompt(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[Mapping[str, Any] | BaseModel] | None = None,
        meta: Mapping[str, Any] | None = None,
        tags: Collection[str] = (),
    ) -> Callable[[F], F]: ...

    def prompt(
        self,
        fn: F | None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[Mapping[str, Any] | BaseModel] | None = None,
        meta: Mapping[str, Any] | None = None,
        tags: Collection[str] = (),
    ) -> F | Callable[[F], F]:
        """Register a prompt: its arguments are the function's (strings on the wire, converted to the
        annotated types); it returns text (one user message), a `Message` (`user(...)`,
        `assistant(...)`), or a list of them."""
        options: dict[str, Any] = {"title": title, "description": description, "icons": icons, "meta": meta}

        scope = _caller_scope()

        def register(fn: F) -> F:
            entry = PromptEntry(fn, self._pkg, name, options, scope)
            entry.tags = _tags(tags, f"prompt {entry.name!r}")
            if entry.name in self._prompts:
                raise AppDefinitionError(f"prompt {entry.name!r} is already registered")
            self._require("prompts", bool(self._prompts))
            self._prompts[entry.name] = entry
            self._changed(PROMPTS_CHANGED, "prompts")
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
            completer = Completer(fn, what, scope)
            key = (kind, target, argument)
            if key in self._completers:
                raise AppDefinitionError(f"{what} is already registered")
            self._check_completion(kind, target, argument)
            self._require("completions", bool(self._completers))
            self._completers[key] = completer
            return fn

        return register

    def _check_completion(self, kind: str, target: str, argument: str) -> None:
        if kind == "prompt":
            entry = self._prompts.get(target)
            if entry is None:
                raise AppDefinitionError(f"app.complete: no prompt {target!r} (register the prompt first)")
            if argument not in entry.sig.parameters:
                raise AppDefinitionError(f"app.complete: prompt {target!r} has no argument {argument!r}")
        else:
            template = self._templates.get(target)
            if template is None:
                raise AppDefinitionError(f"app.complete: no resource template {target!r} (register it first)")
            if argument not in template.template.names:
                raise AppDefinitionError(f"app.complete: template {target!r} has no variable {argument!r}")

    # -- the server -----------------------------------------------------------------------------

    @property
    def server(self) -> ServerStub:
        """The server object (a subclass of the stub's `Server`), built on first use."""
        if self._server is None:
            self._server = self._build()
            self._install_middleware(self._server)
            self._declare_tools()
        return self._server

    def _build(self) -> ServerStub:
        stub: type[ServerStub] = importlib.import_module(f"{self._pkg.__name__}.server").Server
        handlers: dict[str, Any] = {}
        declared: dict[str, Any] = {}
        if self._tools or "tools" in self._serves:
            handlers.update(list_tools=_list_tools, call_tool=_call_tool)
            declared["tools"] = {"listChanged": True}
        if self._resources or self._templates or "resources" in self._serves:
            handlers.update(
                list_resources=_list_resources, list_resource_templates=_list_templates, read_resource=_read_resource
            )
            declared["resources"] = self._resources_capability()  # (a proxy: subscriptions where its remote has them)
            for name in ("subscribe_resource", "unsubscribe_resource"):
                if "subscribe" in declared["resources"] and hasattr(stub, name):  # handshake era (host records)
                    handlers[name] = _subscription
        if self._prompts or "prompts" in self._serves:
            handlers.update(list_prompts=_list_prompts, get_prompt=_get_prompt)
            declared["prompts"] = {"listChanged": True}
        if self._completers or "completions" in self._serves:
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

    def _declare_tools(self) -> None:
        """Calls are checked against the inputSchema (`tool_schemas`) even before a client lists."""
        from mcp_bindings.runtime.server.tool_schemas import declare_tools

        if self._server is not None:
            declare_tools(self._server, [t.definition for t in self._tools.values() if t.enabled])


def _caller_scope() -> dict[str, Any]:
    """The local names where a decorator is applied (two frames up: the caller of `App.tool`, ...),
    so annotations naming types local to a function resolve (`from __future__ import annotations`)."""
    frame = inspect.currentframe()
    for _ in range(2):
        frame = frame.f_back if frame is not None else None
    if frame is None or frame.f_locals is frame.f_globals:
        return {}
    return dict(frame.f_locals)


def _tags(tags: Collection[str], what: str) -> frozenset[str]:
    if isinstance(tags, str):
        raise AppDefinitionError(f"{what}: tags={tags!r} is one string; give a collection: tags={{{tags!r}}}")
    return frozenset(tags)


def _where(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def _class_name(name: str) -> str:
    cleaned = "".join(part.capitalize() for part in "".join(ch if ch.isalnum() else " " for ch in name).split())
    return cleaned if cleaned and cleaned[0].isalpha() else f"App{cleaned}"


# -- the handlers of the generated server class (self: the server; self.app: the App) ------------


async def _list_tools(self: Any, params: Any, ctx: RequestContext) -> Any:
    page, cursor = self.app._page("tools", params)
    return self.app._pkg.ListToolsResult(tools=page, next_cursor=cursor)


async def _call_tool(self: Any, params: Any, ctx: RequestContext) -> Any:
    return await self.app.serve_call_tool(params, ctx)


async def _list_resources(self: Any, params: Any, ctx: RequestContext) -> Any:
    page, cursor = self.app._page("resources", params)
    return self.app._pkg.ListResourcesResult(resources=page, next_cursor=cursor)


async def _list_templates(self: Any, params: Any, ctx: RequestContext) -> Any:
    page, cursor = self.app._page("templates", params)
    return self.app._pkg.ListResourceTemplatesResult(resource_templates=page, next_cursor=cursor)


async def _read_resource(self: Any, params: Any, ctx: RequestContext) -> Any:
    return await self.app.serve_read_resource(params, ctx)


async def _subscription(self: Any, params: Any, ctx: RequestContext) -> Any:
    return {}  # the runtime records the subscription once this succeeds


async def _list_prompts(self: Any, params: Any, ctx: RequestContext) -> Any:
    page, cursor = self.app._page("prompts", params)
    return self.app._pkg.ListPromptsResult(prompts=page, next_cursor=cursor)


async def _get_prompt(self: Any, params: Any, ctx: RequestContext) -> Any:
    return await self.app.serve_get_prompt(params, ctx)


async def _complete(self: Any, params: Any, ctx: RequestContext) -> Any:
    return await self.app.serve_complete(params, ctx)
