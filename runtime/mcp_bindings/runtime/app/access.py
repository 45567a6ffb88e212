"""Who sees what: a tool, resource, resource template or prompt registered with `scopes=[...]` (the
OAuth scopes a caller needs on top of the app's) or `allow=` (a predicate on the caller's
`Principal`, None for nobody) is listed only to the callers it allows, and a request naming it from
any other caller is refused:

* over HTTP behind `App(auth=...)`, a token without those scopes gets 403 with `WWW-Authenticate:
  Bearer error="insufficient_scope", scope="..."` before the request reaches the app (`app.auth`
  asks `required_scopes` here), so that its client can step up;
* on the dispatch seam, on every transport (stdio and memory too, where nobody is authenticated), a
  JSON-RPC error -32602 naming the missing scopes, its data `{"error": "insufficient_scope",
  "scope": ..., "missing": [...]}`;
* a caller its `allow=` predicate refuses is answered as if it did not exist (unknown tool or
  prompt, resource not found): there is no scope to ask for.

`Access` is an extension every `App` holds, a feature on the dispatch seam around the list
methods and the methods that name an entry (tools/call, resources/read, prompts/get,
completion/complete); where no entry of a table has a rule, it passes the request on untouched.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from mcp_bindings.runtime.app.entries import Entry
from mcp_bindings.runtime.app.registries import kind_of
from mcp_bindings.runtime.protocol.principal import Principal
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError
from mcp_bindings.runtime.server.plugins import Extension
from mcp_bindings.runtime.server.seam import ServerFeature
from mcp_bindings.v2026_07_28 import names as v2026

if TYPE_CHECKING:
    from mcp_bindings.runtime.app.registries import Registries
    from mcp_bindings.runtime.server.calls import ServerCall
    from mcp_bindings.runtime.server.peer import PeerView
    from mcp_bindings.runtime.server.runtime import ServerRuntime
    from mcp_bindings.runtime.server.seam import Plan, ServerNext

__all__ = ["Access", "AccessGuard", "named_scopes", "required_scopes", "target"]

# A routed request (the generated `ROUTING`: the params field naming its target) -> the app's tables
# its targets are listed from (`LISTED`: list -> the request its items are targets of; `LISTS`: the
# list's result field): tools/call -> tools, resources/read -> resources then templates, ...
_TARGETS: Mapping[str, tuple[str, ...]] = {
    method: tuple(kind_of(v2026.LISTS[lst]) for lst in sorted(v2026.LISTED) if v2026.LISTED[lst] == method)
    for method in v2026.ROUTING
}
_TARGETED = frozenset([*_TARGETS, v2026.COMPLETION_COMPLETE])  # and completion, which names its entry by a `ref`


def target(registries: Registries, method: str, params: Mapping[str, Any]) -> Entry | None:
    """The entry a request (its params as the client sent them) names, if it names one."""
    if method in _TARGETS:
        key = str(params.get(v2026.ROUTING[method]))
        return next(filter(None, (_lookup(registries.table(kind), kind, key) for kind in _TARGETS[method])), None)
    if method == v2026.COMPLETION_COMPLETE:
        given = params.get("ref")
        ref: Mapping[str, Any] = cast("Mapping[str, Any]", given) if isinstance(given, Mapping) else {}
        if ref.get("type") == "ref/prompt":
            return registries.prompts.get(str(ref.get("name")))
        return registries.templates.get(str(ref.get("uri")))
    return None


def _lookup(table: Mapping[str, Any], kind: str, key: str) -> Entry | None:
    """The entry of `table` under `key`; for templates, the first whose template matches it."""
    if kind != "templates":
        return table.get(key)
    return next((t for t in table.values() if t.template.match(key) is not None), None)


def required_scopes(registries: Registries, message: Any) -> list[str]:
    """The scopes the entries a POSTed JSON-RPC message (or batch) names need (HTTP: `app.auth`)."""
    items = cast("list[Any]", message) if isinstance(message, list) else [message]
    needed: list[str] = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        item = cast("Mapping[str, Any]", item)
        params, method = item.get("params"), item.get("method")
        if isinstance(method, str) and isinstance(params, Mapping):
            entry = target(registries, method, cast("Mapping[str, Any]", params))
            needed += [s for s in (entry.scopes if entry is not None else ()) if s not in needed]
    return needed


def named_scopes(registries: Registries) -> list[str]:
    """Every scope an entry names (for the Protected Resource Metadata's `scopes_supported`)."""
    tables = (registries.tools, registries.resources, registries.templates, registries.prompts)
    return list(dict.fromkeys(s for table in tables for entry in table.values() for s in entry.scopes))


@functools.cache
def _attribute(model: type[Any], alias: str) -> str:
    """The attribute of a generated model's field named `alias` on the wire."""
    fields: Mapping[str, Any] = getattr(model, "model_fields", {})
    return next((name for name, info in fields.items() if (info.alias or name) == alias), alias)


class Access(Extension):
    """Who sees and may use each of an app's entries (see the module)."""

    def __init__(self, registries: Registries) -> None:
        self.registries = registries

    def features(self) -> Sequence[ServerFeature]:
        return (AccessGuard(self.registries),)


class AccessGuard(ServerFeature):
    """`Access` on the dispatch seam: the list methods filtered, the targeted methods checked."""

    def __init__(self, registries: Registries) -> None:
        self.registries = registries

    def wrap(self, runtime: ServerRuntime, plan: Plan, view: PeerView) -> None:
        method = plan.spec.method
        field_name = v2026.LISTS.get(method)
        if field_name is not None:
            plan.wrap(functools.partial(self.listed, kind_of(field_name), field_name))
        elif method in _TARGETED:
            not_found = runtime.server.protocol.error_codes.resource_not_found or INVALID_PARAMS
            plan.wrap(functools.partial(self.guarded, not_found))

    async def listed(self, kind: str, field_name: str, call: ServerCall, next: ServerNext) -> object:
        """A list without the entries the caller may not see."""
        result = await next(call)
        table: Mapping[str, Entry] = self.registries.table(kind)
        if not any(entry.scopes or entry.allow is not None for entry in table.values()):
            return result
        principal = call.principal
        hidden = {key for key, entry in table.items() if not entry.allows(principal)}
        items = getattr(result, _attribute(type(result), field_name), None)
        if not hidden or not isinstance(items, list):
            return result
        listed: list[Any] = cast("list[Any]", items)
        key = _attribute(listed[0].__class__, v2026.LIST_KEYS[call.method]) if listed else ""
        kept = [item for item in listed if getattr(item, key, None) not in hidden]
        return cast("Any", result).model_copy(update={_attribute(type(result), field_name): kept})

    async def guarded(self, not_found: int, call: ServerCall, next: ServerNext) -> object:
        """The request, where the caller may use the entry it names; else its refusal."""
        entry = target(self.registries, call.method, call.raw or {})
        if entry is None or (not entry.scopes and entry.allow is None):
            return await next(call)
        principal = call.principal
        missing = entry.missing_scopes(principal)
        if missing:
            raise _insufficient(call, entry, missing, principal)
        if not entry.allows(principal):
            raise _unknown(call.method, call.target or entry.key, not_found)
        return await next(call)


def _insufficient(call: ServerCall, entry: Entry, missing: Sequence[str], principal: Principal | None) -> McpError:
    who = "the caller" if principal is not None else "an unauthenticated caller"
    named = call.recorded_target or entry.key
    scopes = f"scope{'s' if len(missing) > 1 else ''} {' '.join(missing)}"
    message = f"{call.method} refused: {named!r} needs the {scopes}, which {who} was not granted (insufficient_scope)"
    return McpError(
        INVALID_PARAMS, message, {"error": "insufficient_scope", "scope": " ".join(entry.scopes), "missing": [*missing]}
    )


def _unknown(method: str, key: str, not_found: int) -> McpError:
    """What the handler answers for an entry that does not exist (the caller may not know it does)."""
    if method == v2026.RESOURCES_READ:
        return McpError(not_found, f"Resource not found: {key}", {"uri": key})
    kind = _TARGETS.get(method, ("completion references",))[0]
    return McpError(INVALID_PARAMS, f"Unknown {kind.removesuffix('s')}: {key}", {"name": key})
