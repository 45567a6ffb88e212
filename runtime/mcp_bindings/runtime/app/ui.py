"""MCP Apps (`io.modelcontextprotocol/ui`) on the authoring layer: tools that open a UI and the
`ui://` HTML resources they open.

    app.ui_resource("ui://counter/view", "<!doctype html>...", csp=Csp(connect_domains=[...]))

    @app.ui_tool("ui://counter/view")
    def counter(start: int = 0) -> dict[str, int]: ...

    @app.ui_tool("ui://counter/view", visibility=["app"])   # only the app's view calls it
    def increment(value: int) -> dict[str, int]: ...

A UI resource is served as `text/html;profile=mcp-app` from a string, a file (read at each read)
or a function (called at each read), with its CSP, permissions, domain and border preference typed
by the models generated from the pinned Apps schema. The extension is declared in the server's
capabilities only when the app has a UI (under `extensions` from 2026-07-28, `experimental` before).
A client that did not declare the extension gets no app-only tool listed and cannot call one: no
View of it could, so only its model would.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict, TypeVar, cast

from pydantic import BaseModel, ValidationError
from typing_extensions import Unpack

from mcp_bindings.runtime.app.errors import AppDefinitionError, first_error
from mcp_bindings.runtime.app.registration import ToolOptions
from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.custom_methods import EXTENSIONS, peer_declares
from mcp_bindings.runtime.protocol.ui_meta import DEPRECATED_RESOURCE_URI, MIME_TYPE, UI, UI_SCHEME, tool_ui
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError
from mcp_bindings.runtime.server.calls import ServerCall
from mcp_bindings.runtime.server.plugins import Extension
from mcp_bindings.runtime.server.seam import ServerFeature, ServerNext
from mcp_bindings.v2026_07_28 import names as v2026

if TYPE_CHECKING:
    from types import ModuleType

    from mcp_bindings.ext.io_modelcontextprotocol_ui import models as ui
    from mcp_bindings.ext.io_modelcontextprotocol_ui.models import McpUiResourceCsp as Csp
    from mcp_bindings.ext.io_modelcontextprotocol_ui.models import McpUiResourcePermissions as Permissions
    from mcp_bindings.runtime.app.entries import ToolEntry
    from mcp_bindings.runtime.protocol.spec import ProtocolTables
    from mcp_bindings.runtime.server.host import ServerHost
    from mcp_bindings.runtime.server.peer import PeerView
    from mcp_bindings.runtime.server.runtime import ServerRuntime
    from mcp_bindings.runtime.server.seam import Plan
    from mcp_bindings.runtime.server.stubs import ServerStub

__all__ = [
    "MIME_TYPE",
    "UI",
    "AppOnlyTools",
    "Csp",
    "Permissions",
    "Ui",
    "UiResourceOptions",
    "UiToolOptions",
    "Visibility",
]

F = TypeVar("F", bound=Callable[..., Any])

_LAZY = {"Csp": "McpUiResourceCsp", "Permissions": "McpUiResourcePermissions"}


def _ui() -> ModuleType:
    """The extension's generated models, loaded where an app uses a UI (not by every app)."""
    from mcp_bindings.ext.io_modelcontextprotocol_ui import models

    return models


def __getattr__(name: str) -> Any:
    """`Csp` and `Permissions` (the generated `McpUiResourceCsp` / `McpUiResourcePermissions`),
    loaded on first use."""
    if name in _LAZY:
        return getattr(_ui(), _LAZY[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


Visibility = Literal["model", "app"]
Source = str | Path | Callable[[], str | Awaitable[str]]


class _AppLike(Protocol):
    """What `Ui` uses of `App`'s public methods."""

    def tool(self, fn: Any = None, /, **options: Any) -> Any: ...

    def resource(self, uri: str, **options: Any) -> Callable[[F], F]: ...


class UiToolOptions(ToolOptions, total=False):
    """`app.ui_tool`'s keyword arguments (`Ui.tool`): `app.tool`'s, and where the tool is seen."""

    visibility: Sequence[Visibility] | None
    meta: Mapping[str, Any] | None


class UiResourceOptions(TypedDict, total=False):
    """`app.ui_resource`'s keyword arguments (`Ui.resource`)."""

    name: str | None
    title: str | None
    description: str | None
    csp: ui.McpUiResourceCsp | Mapping[str, Any] | None
    permissions: ui.McpUiResourcePermissions | Mapping[str, Any] | None
    domain: str | None
    prefers_border: bool | None


class Ui(Extension):
    """The MCP Apps extension of one `App` (`app.ui_resource`, `app.ui_tool`): a collaborator the app
    makes on first use and registers as one of its extensions (`App.add`), so only an app with a UI
    declares it; on the server it puts `AppOnlyTools` on the dispatch seam."""

    def __init__(self, app: _AppLike, tools: Mapping[str, ToolEntry], resources: Mapping[str, Any], pkg: Any) -> None:
        self.app, self.tools, self.resources, self.pkg = app, tools, resources, pkg

    def resource(self, uri: str, source: Source | None = None, /, **options: Unpack[UiResourceOptions]) -> Any:
        """Serve `source` (HTML text, a file, or a function returning HTML) as the UI resource `uri`
        (`ui://...`, MIME type `text/html;profile=mcp-app`); without `source`, a decorator of the
        function. Its `_meta.ui` (CSP, permissions, domain, prefersBorder) is in the listing and in
        every read."""
        if not uri.startswith(UI_SCHEME):
            raise AppDefinitionError(
                f"UI resource {uri!r}: its URI must start with {UI_SCHEME!r} (apps.mdx, UI Resource Format)"
            )
        meta = _resource_meta(uri, options)

        def register(fn: Source) -> Any:
            read = _reader(self.pkg, uri, fn, meta)
            label = options.get("name") or (getattr(fn, "__name__", None) if callable(fn) else None)
            given: dict[str, Any] = {"title": options.get("title"), "description": options.get("description")}
            given.update(name=label or uri.removeprefix(UI_SCHEME), meta={"ui": meta} if meta else None)
            self.app.resource(uri, **given, mime_type=MIME_TYPE)(read)
            return fn

        if source is None:
            return register
        register(source)
        return None

    def tool(
        self,
        resource_uri: str | None = None,
        /,
        *,
        visibility: Sequence[Visibility] | None = None,
        meta: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> Callable[[F], F]:
        """A decorator registering a tool (as `app.tool`, with its `options`) that opens the UI
        resource `resource_uri` (a host renders its results there) and/or has a `visibility`:
        `["app"]` for a tool only the app's view calls (hidden from the model)."""
        if resource_uri is None and visibility is None:
            raise AppDefinitionError("app.ui_tool: name the UI resource it opens, or a visibility, or both")
        if resource_uri is not None and not resource_uri.startswith(UI_SCHEME):
            raise AppDefinitionError(
                f"app.ui_tool: {resource_uri!r} is not a UI resource URI (it starts with {UI_SCHEME!r})"
            )
        try:
            typed = _ui().McpUiToolMeta(resource_uri=resource_uri, visibility=list(visibility) if visibility else None)
        except ValidationError as exc:
            raise AppDefinitionError(
                f"app.ui_tool: visibility must be a list of 'model' and 'app' ({exc.errors()[0]['msg']})"
            ) from None
        wire: dict[str, Any] = {**(meta or {}), "ui": versions.dump(typed)}
        if resource_uri is not None:
            wire[DEPRECATED_RESOURCE_URI] = resource_uri

        def register(fn: F) -> F:
            return cast("F", self.app.tool(meta=wire, **options)(fn))

        return register

    # -- the extension, on the app's server ------------------------------------------------------

    def capabilities(self, protocol: ProtocolTables) -> Mapping[str, Any]:
        return {EXTENSIONS: {UI: {}}}

    def features(self) -> Sequence[ServerFeature]:
        return (AppOnlyTools(self.app_only),)

    def attach(self, server: ServerStub, host: ServerHost) -> None:
        """Once the server is built: every tool opens a UI resource of the app."""
        for entry in self.tools.values():
            found = tool_ui(_meta_of(entry.definition))
            if found is not None and found.resource_uri is not None and found.resource_uri not in self.resources:
                raise AppDefinitionError(
                    f"tool {entry.name!r} opens {found.resource_uri!r}, which is no resource of the app: "
                    "register it with app.ui_resource(...)"
                )

    def app_only(self, name: str) -> bool:
        entry = self.tools.get(name)
        if entry is None:
            return False
        found = tool_ui(_meta_of(entry.definition))
        return found is not None and found.visibility is not None and "model" not in found.visibility


def _meta_of(definition: Any) -> dict[str, Any] | None:
    data: Any = versions.dump(definition)
    if not isinstance(data, dict):
        return None
    return cast("dict[str, Any] | None", cast("dict[str, Any]", data).get("_meta"))


def _resource_meta(uri: str, options: UiResourceOptions) -> dict[str, Any]:
    """The `_meta.ui` of a UI resource (its CSP, permissions, domain and border preference), checked."""
    csp, permissions = options.get("csp"), options.get("permissions")
    raw = {
        "csp": versions.dump(csp) if isinstance(csp, BaseModel) else csp,
        "permissions": versions.dump(permissions) if isinstance(permissions, BaseModel) else permissions,
        "domain": options.get("domain"),
        "prefersBorder": options.get("prefers_border"),
    }
    try:
        typed = _ui().McpUiResourceMeta.model_validate({k: v for k, v in raw.items() if v is not None})
    except ValidationError as exc:
        raise AppDefinitionError(f"UI resource {uri!r}: {first_error(exc, '_meta.ui')}") from None
    return cast("dict[str, Any]", versions.dump(typed))


def _reader(pkg: Any, uri: str, source: Source, meta: dict[str, Any]) -> Callable[[], Awaitable[Any]]:
    """What `resources/read` runs: the HTML as `TextResourceContents` with the MIME type and `_meta.ui`."""
    if isinstance(source, Path) and not source.is_file():
        raise AppDefinitionError(f"UI resource {uri!r}: {source} is not a file")

    async def read() -> Any:
        if isinstance(source, str):
            html = source
        elif isinstance(source, Path):
            html = source.read_text(encoding="utf-8")
        else:
            value: Any = source()
            html = await value if inspect.isawaitable(value) else value
        if not isinstance(html, str):
            raise McpError(-32603, f"UI resource {uri!r}: its function returned {type(html).__name__}, not HTML text")
        contents: dict[str, Any] = {"uri": uri, "mimeType": MIME_TYPE, "text": html}
        if meta:
            contents["_meta"] = {"ui": meta}
        return pkg.TextResourceContents.model_validate(contents)

    return read


class AppOnlyTools(ServerFeature):
    """apps.mdx, Visibility, on the server: a client that did not declare `io.modelcontextprotocol/ui`
    has no View to call an app-only tool (`visibility: ["app"]`), so it is not listed to it and its
    call is refused (-32602 naming the tool). Registered only on servers with a UI."""

    def __init__(self, app_only: Callable[[str], bool]) -> None:
        self.app_only = app_only

    def wrap(self, runtime: ServerRuntime, plan: Plan, view: PeerView) -> None:
        if plan.spec.method == v2026.TOOLS_LIST:
            plan.wrap(self._listing)
        elif plan.spec.method == v2026.TOOLS_CALL:
            plan.wrap(self._calling)

    async def _listing(self, call: ServerCall, next: ServerNext) -> object:
        result = await next(call)
        if peer_declares(call.session.client_capabilities, UI) or not isinstance(result, BaseModel):
            return result
        tools = cast("list[Any]", getattr(result, "tools", []))
        kept = [t for t in tools if not self.app_only(getattr(t, "name", ""))]
        return result if len(kept) == len(tools) else result.model_copy(update={"tools": kept})

    async def _calling(self, call: ServerCall, next: ServerNext) -> object:
        name = call.target
        if isinstance(name, str) and self.app_only(name) and not peer_declares(call.session.client_capabilities, UI):
            raise McpError(
                INVALID_PARAMS,
                f'tool {name!r} is callable only by an MCP Apps view (its _meta.ui.visibility is ["app"]); '
                f"this client did not declare the {UI} extension",
                {"name": name},
            )
        return await next(call)
