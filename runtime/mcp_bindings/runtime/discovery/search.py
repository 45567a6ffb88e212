"""Tool search for every client: `ToolSearch`, an extension (`server.plugins.Extension`) that lists a
small fixed set of tools in place of a large catalog (search the catalog, describe a tool, call a
tool by name; and the pinned tools), so that a host without any progressive-discovery support sees
an ordinary server of four or five tools and still reaches all of them.

What a caller finds is exactly what `tools/list` would have listed to it without the extension: the
catalog is read through the server's own tools/list chain (every page, the features and middleware
around the handler included: MCP Apps' app-only tools, disabled tools and a middleware's per-user
filter stay hidden), and a tool is called by name through the server's own tools/call chain
(middleware, checks and tasks see a call of that tool). A catalog is indexed once and kept on the
server host per distinct listing (`Catalogs`), so a change of the catalog (and its
`notifications/tools/list_changed`, which passes to the clients as it is) is searched at once.
"""

from __future__ import annotations

import contextvars
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import orjson

from mcp_bindings.runtime.discovery.index import PatternError, ToolIndex
from mcp_bindings.runtime.discovery.tools import Arguments, BadArguments, MetaTools
from mcp_bindings.runtime.protocol import registry, versions
from mcp_bindings.runtime.protocol.pagination import invalid_cursor
from mcp_bindings.runtime.protocol.principal import principal_of
from mcp_bindings.runtime.server.plugins import Extension
from mcp_bindings.runtime.server.seam import Plan, ServerFeature, ServerNext
from mcp_bindings.v2026_07_28 import names as v2026

if TYPE_CHECKING:
    from mcp_bindings.runtime.protocol.context import RequestContext
    from mcp_bindings.runtime.server.calls import ServerCall
    from mcp_bindings.runtime.server.peer import PeerView
    from mcp_bindings.runtime.server.runtime import ServerRuntime

__all__ = ["Catalogs", "SearchFeature", "ToolSearch"]

MAX_PAGES = 10_000  # a tools/list chain that pages on past this is answered as it stands
KEPT = 8  # catalogs (distinct listings: callers that see different tools) indexed per server

# Set while the extension reads the catalog through the tools/list chain: its own wrap passes.
_READING = contextvars.ContextVar("discovery_reading_catalog", default=False)


class Listing:
    """The tools one kind of caller is listed (in order), the type of the list's result (None: the
    handler answered plain JSON), the tools by name (made on first use) and their index (`index`:
    looked up once per listing, so a search does not key the index by every tool again)."""

    __slots__ = ("_by_name", "index", "result_type", "tools")

    def __init__(self, tools: list[Any], result_type: type[Any] | None) -> None:
        self.tools, self.result_type = tools, result_type
        self._by_name: dict[object, Any] | None = None
        self.index: ToolIndex | None = None

    def named(self, name: object) -> Any:
        if self._by_name is None:
            self._by_name = {_name(t): t for t in self.tools}
        return self._by_name.get(name)


class Catalogs:
    """What the searches of one server host keep (`host.state_of(Catalogs)`): the most recent `KEPT`
    listings read for a kind of caller, and their indexes.

    A listing is read again when the server's tool catalog (`ServerHost.tool_catalog`, which a
    `notifications/tools/list_changed` invalidates and the authoring layer re-declares) is no
    longer the one it was read under, or for a caller of another kind: another protocol version,
    principal or set of client capabilities. Each entry keeps the objects whose identities make its
    key, so an identity is never reused while the entry is here."""

    def __init__(self) -> None:
        self._listings: OrderedDict[tuple[object, ...], tuple[list[Any], Listing]] = OrderedDict()
        self._indexes: OrderedDict[tuple[int, ...], tuple[list[Any], ToolIndex]] = OrderedDict()

    def listing(self, key: tuple[object, ...]) -> Listing | None:
        found = self._listings.get(key)
        if found is None:
            return None
        self._listings.move_to_end(key)
        return found[1]

    def keep_listing(self, key: tuple[object, ...], held: list[Any], listing: Listing) -> None:
        self._listings[key] = (held, listing)
        while len(self._listings) > KEPT:
            self._listings.popitem(last=False)

    def index(self, tools: list[Any]) -> ToolIndex:
        key = tuple(map(id, tools))
        found = self._indexes.get(key)
        if found is not None:
            self._indexes.move_to_end(key)
            return found[1]
        made = ToolIndex([cast("Mapping[str, Any]", versions.dump(t)) for t in tools])
        self._indexes[key] = (tools, made)
        while len(self._indexes) > KEPT:
            self._indexes.popitem(last=False)
        return made


class ToolSearch(Extension):
    """List the catalog as three tools (see the module): `pinned` tools are listed as they are as
    well (when the caller may see them); `prefix` goes before the three names (`search_tools`,
    `describe_tool`, `call_tool`); a search answers `default_limit` tools unless asked for more,
    `limit` at most."""

    def __init__(
        self, *, pinned: Sequence[str] = (), prefix: str = "", limit: int = 20, default_limit: int = 5
    ) -> None:
        if isinstance(pinned, str):
            raise ValueError(f"ToolSearch(pinned={pinned!r}) is one string; give a list: pinned=[{pinned!r}]")
        if not 1 <= default_limit <= limit:
            raise ValueError(f"ToolSearch: default_limit ({default_limit}) must be from 1 to limit ({limit})")
        self.meta = MetaTools(prefix, limit, default_limit)
        self.pinned = tuple(pinned)

    def features(self) -> Sequence[ServerFeature]:
        return (SearchFeature(self.meta, self.pinned),)


class SearchFeature(ServerFeature):
    """`ToolSearch` on the dispatch seam: tools/list answers the fixed set; tools/call serves the
    three tools and passes every other call on."""

    def __init__(self, meta: MetaTools, pinned: Sequence[str]) -> None:
        self.meta, self.pinned = meta, tuple(dict.fromkeys(pinned))

    def wrap(self, runtime: ServerRuntime, plan: Plan, view: PeerView) -> None:
        if plan.spec.method == v2026.TOOLS_LIST:
            route = _Route(runtime, view, self.meta)

            async def listing(call: ServerCall, next: ServerNext) -> object:
                if _READING.get():
                    return await next(call)
                return await self._listing(route, call)

            plan.wrap(listing)
        elif plan.spec.method == v2026.TOOLS_CALL:
            route = _Route(runtime, view, self.meta, plan)

            async def calling(call: ServerCall, next: ServerNext) -> object:
                name = call.target
                if name not in self.meta.names:
                    return await next(call)
                return await self._calling(route, call, cast("str", name))

            plan.wrap(calling)

    async def _listing(self, route: _Route, call: ServerCall) -> object:
        cursor = getattr(call.params, "cursor", None)
        if cursor is not None:  # the fixed set is one page
            raise invalid_cursor(cursor)
        listing = await route.catalog(call.context, call.params)
        pinned = [listing.named(name) for name in self.pinned if name not in self.meta.names]
        listed = [cast("dict[str, Any]", versions.dump(t)) for t in pinned if t is not None]
        listed += self.meta.definitions(len(listing.tools), route.structured)
        if listing.result_type is None:
            return {"tools": listed}
        return listing.result_type.model_validate({"tools": listed})

    async def _calling(self, route: _Route, call: ServerCall, name: str) -> object:
        params = call.params
        try:
            args = self.meta.read(name, getattr(params, "arguments", None))
        except BadArguments as exc:
            return route.result(str(exc), None, error=True)
        if name == self.meta.call:
            return await self._call_found(route, call, args)
        listing = await route.catalog(call.context, call.params)
        if name == self.meta.describe:
            tool = listing.named(args.name) if args.name not in self.meta.names else None
            if tool is None:
                return route.result(f"no tool named {args.name!r}: find one with {self.meta.search}", None, error=True)
            payload = {"tools": [versions.dump(tool)]}
            return route.result(orjson.dumps(payload).decode(), payload)
        if listing.index is None:
            listing.index = route.host_catalogs().index(listing.tools)
        index = listing.index
        try:
            if args.mode == "regex":
                hits = index.matching(args.query, args.limit)
            else:
                hits = index.ranked(args.query, args.limit)
        except PatternError as exc:
            return route.result(f"{name}: `query`: {exc}", None, error=True)
        hits = [t for t in hits if t.get("name") not in self.meta.names]
        payload = {"tools": hits}
        return route.result(orjson.dumps(payload).decode(), payload)

    async def _call_found(self, route: _Route, call: ServerCall, args: Arguments) -> object:
        """Call tool `args.name` as a tools/call of its own, through the whole chain, where the
        caller may see it; answered as that call is."""
        listing = await route.catalog(call.context, call.params)
        if args.name in self.meta.names or listing.named(args.name) is None:
            return route.result(f"no tool named {args.name!r}: find one with {self.meta.search}", None, error=True)
        scopes = _own_scopes(route.runtime.server, args.name)
        if scopes:
            return route.result(
                f"tool {args.name!r} needs authorization of its own (scopes {', '.join(scopes)}): "
                "call it directly (tools/call), not through the search tools",
                None,
                error=True,
            )
        params = call.params
        update = {"name": args.name, "arguments": dict(args.arguments) if args.arguments is not None else None}
        if isinstance(params, Mapping):  # an untyped handler's params (wire JSON)
            inner_params: Any = {**cast("Mapping[str, Any]", params), **update}
        else:
            inner_params = params.model_copy(update=update)
        raw = {**cast("Mapping[str, Any]", call.raw or {}), "name": args.name, "arguments": update["arguments"]}
        assert route.plan is not None
        return await route.plan.enter(call.handler, inner_params, raw, call.context)


class _Route:
    """What one connection's plans of tools/list and tools/call need to read the catalog and answer
    in the server's version."""

    def __init__(self, runtime: ServerRuntime, view: PeerView, meta: MetaTools, plan: Plan | None = None) -> None:
        self.runtime, self.view, self.meta, self.plan = runtime, view, meta, plan
        requests = runtime.stub.client_requests
        self.list_spec = requests[v2026.TOOLS_LIST]
        self.call_result: Any = requests[v2026.TOOLS_CALL].result
        # Whether the server's version has structured tool output (outputSchema, structuredContent).
        self.structured = "output_schema" in registry.load_version(runtime.stub.info.name).Tool.model_fields

    def host_catalogs(self) -> Catalogs:
        return self.runtime.host.state_of(Catalogs)

    async def catalog(self, context: RequestContext, params: Any) -> Listing:
        """Every tool the server lists to this caller, through its tools/list chain, page by page
        (read again only when the server's catalog changed or for another kind of caller:
        `Catalogs`)."""
        catalogs = self.host_catalogs()
        caller = _caller(context)
        held = list(self.runtime.host.tool_catalog.tools.values())
        kept = catalogs.listing((*map(id, held), *caller))
        if kept is not None:
            return kept
        listing = Listing(*await self._read(context, params))
        held = list(self.runtime.host.tool_catalog.tools.values())  # as the reading left it
        catalogs.keep_listing((*map(id, held), *caller), held, listing)
        return listing

    async def _read(self, context: RequestContext, params: Any) -> tuple[list[Any], type[Any] | None]:
        handler = getattr(self.runtime.server, self.list_spec.handler)
        plan = self.runtime.plan(v2026.TOOLS_LIST, self.view)
        tools: list[Any] = []
        result_type: type[Any] | None = None
        meta = _meta_of(params)
        page_params: Any = self._params(None, meta)
        token = _READING.set(True)
        try:
            for _ in range(MAX_PAGES):
                if plan.outer is not None:
                    page = await plan.enter(handler, page_params, None, context)
                else:
                    page = await handler(page_params, context)
                if isinstance(page, Mapping):
                    data = cast("Mapping[str, Any]", page)
                    tools += list(data.get("tools", []))
                    cursor = data.get("nextCursor")
                else:
                    result_type = type(page)
                    tools += list(getattr(page, "tools", []))
                    cursor = getattr(page, "next_cursor", None)
                if not cursor:
                    break
                page_params = self._params(cursor, meta)
        finally:
            _READING.reset(token)
        return tools, result_type

    def _params(self, cursor: str | None, meta: Any) -> Any:
        """The params of a tools/list page: `cursor`, and the caller's `_meta` (a stateless request's)."""
        data = {k: v for k, v in (("cursor", cursor), ("_meta", meta)) if v is not None}
        model: Any = self.list_spec.params
        if not data:
            return None
        return model.model_validate(data) if model is not None else data

    def result(self, text: str, structured: Mapping[str, Any] | None, *, error: bool = False) -> Any:
        """A CallToolResult of the server's version: `text`, and `structured` where it has them."""
        data: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
        model: Any = self.call_result
        fields = getattr(model, "model_fields", {})
        if structured is not None and "structured_content" in fields:
            data["structuredContent"] = structured
        if error:
            data["isError"] = True
        return model.model_validate(data) if fields else data


def _caller(context: RequestContext) -> tuple[object, ...]:
    """What may make a caller's listing differ from another's: its protocol version, principal (who,
    and the scopes its current token grants: per-user visibility lists by scope) and declared
    capabilities (a separator first, so that no tool identity is taken for one of them)."""
    capabilities = orjson.dumps(context.peer_capabilities, option=orjson.OPT_SORT_KEYS)
    principal = principal_of(getattr(context, "principal", None))
    scopes = None if principal is None else principal.scopes
    return ("|", context.protocol_version, getattr(context, "principal", None), scopes, capabilities)


def _meta_of(params: Any) -> Any:
    """The `_meta` of a request's params, as wire JSON (None: none)."""
    meta = getattr(params, "meta", None) if not isinstance(params, Mapping) else params.get("_meta")
    return versions.dump(meta) if meta is not None else None


def _name(tool: Any) -> object:
    return cast("Mapping[str, Any]", tool).get("name") if isinstance(tool, Mapping) else getattr(tool, "name", None)


def _own_scopes(server: Any, name: str) -> tuple[str, ...]:
    """The OAuth scopes tool `name` needs on top of the server's (`@app.tool(scopes=...)`, checked
    by the HTTP layer from the request's tool name, which a call by name hides): () for none, and
    for a server not made by an `App`."""
    registries = getattr(getattr(server, "app", None), "registries", None)
    entry = getattr(registries, "tools", {}).get(name) if registries is not None else None
    return tuple(getattr(entry, "scopes", ()) or ())
