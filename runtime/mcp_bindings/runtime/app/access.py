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

Resource subscriptions name a resource as resources/read does, and are held to the same rules: a
`resources/subscribe` or `resources/unsubscribe` (handshake era) or a `subscriptions/listen` whose
`resourceSubscriptions` names a resource the caller lacks the scopes of is refused as above (403
over HTTP, -32602 elsewhere); one its `allow=` predicate refuses is answered as one of a resource
that does not exist is (accepted), and its `notifications/resources/updated` never reaches that
caller: each is screened at delivery, against the caller's principal and the rules as they are then.

`Access` is an extension every `App` holds: a feature on the dispatch seam around the list methods
and the methods that name an entry (tools/call, resources/read, prompts/get, completion/complete)
and on `subscriptions/listen`'s filters, and the gate of its host's resource subscriptions
(`server.subscriptions`). Each table knows its entries with a rule (`Table.guarded`): where none
has one, requests and lists pass untouched.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from mcp_bindings.runtime.app.entries import Entry
from mcp_bindings.runtime.app.registries import kind_of
from mcp_bindings.runtime.protocol.principal import Principal, principal_of
from mcp_bindings.runtime.protocol.versions import attribute
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError
from mcp_bindings.runtime.server.calls import recorded_uri
from mcp_bindings.runtime.server.notifications import SUBSCRIPTION_REQUESTS, may_send
from mcp_bindings.runtime.server.plugins import Extension
from mcp_bindings.runtime.server.seam import ServerFeature
from mcp_bindings.runtime.server.subscriptions import RESOURCE_UPDATED
from mcp_bindings.v2026_07_28 import names as v2026

if TYPE_CHECKING:
    from mcp_bindings.runtime.app.registries import Registries
    from mcp_bindings.runtime.rpc.session import Session
    from mcp_bindings.runtime.server.calls import ServerCall
    from mcp_bindings.runtime.server.host import ServerHost
    from mcp_bindings.runtime.server.peer import PeerView
    from mcp_bindings.runtime.server.runtime import ServerRuntime
    from mcp_bindings.runtime.server.seam import Plan, ServerNext
    from mcp_bindings.runtime.server.stubs import ServerStub

__all__ = ["Access", "AccessGuard", "ResourceGate", "named_scopes", "required_scopes", "target", "targets"]

# A routed request (the generated `ROUTING`) -> the params field naming its target, and the app's
# tables its targets are listed from (`LISTED`: list -> the request its items are targets of;
# `LISTS`: the list's result field): tools/call -> tools, resources/read -> resources then templates.
_ROUTED: Mapping[str, tuple[str, tuple[str, ...]]] = {
    method: (field, tuple(kind_of(v2026.LISTS[lst]) for lst in sorted(v2026.LISTED) if v2026.LISTED[lst] == method))
    for method, field in v2026.ROUTING.items()
}
# ... and a resource subscription (the handshake era's requests the runtime records) names what
# resources/read reads, the same way.
_TARGETS = {**_ROUTED, **{method: _ROUTED[v2026.RESOURCES_READ] for method in SUBSCRIPTION_REQUESTS}}
_RESOURCES = _TARGETS[v2026.RESOURCES_READ][1]
# The `subscriptions/listen` filters that opt in to resource updates (`LISTEN_FILTERS`): their
# values name resources.
_UPDATE_FILTERS = tuple(key for key, method in v2026.LISTEN_FILTERS.items() if method == RESOURCE_UPDATED)
# What the guard wraps: the requests naming one entry (and completion, which names its entry by a
# `ref`); subscriptions are the gate's (`ResourceGate`), whoever serves them.
_GUARDED = frozenset([*(m for m in _TARGETS if m not in SUBSCRIPTION_REQUESTS), v2026.COMPLETION_COMPLETE])


def target(registries: Registries, method: str, params: Mapping[str, Any]) -> Entry | None:
    """The entry a request (its params as the client sent them) names, if it names one."""
    routed = _TARGETS.get(method)
    if routed is not None:
        return _entry(registries, routed[1], str(params.get(routed[0])))
    if method == v2026.COMPLETION_COMPLETE:
        given = params.get("ref")
        ref: Mapping[str, Any] = cast("Mapping[str, Any]", given) if isinstance(given, Mapping) else {}
        if ref.get("type") == "ref/prompt":
            return registries.prompts.get(str(ref.get("name")))
        return registries.templates.get(str(ref.get("uri")))
    return None


def targets(registries: Registries, method: str, params: Mapping[str, Any]) -> list[tuple[str, Entry]]:
    """Every entry a request names, with the key it named it by: `target`'s, or each resource a
    `subscriptions/listen` asks the updates of."""
    if method == v2026.SUBSCRIPTIONS_LISTEN:
        return [(uri, entry) for uri in _listened(params) if (entry := _entry(registries, _RESOURCES, uri)) is not None]
    entry = target(registries, method, params)
    return [] if entry is None else [(entry.key, entry)]


def _listened(params: Mapping[str, Any]) -> list[str]:
    """The URIs of a `subscriptions/listen` request's resource-update filters."""
    wanted = params.get("notifications")
    filters: Mapping[str, Any] = cast("Mapping[str, Any]", wanted) if isinstance(wanted, Mapping) else {}
    found: list[str] = []
    for key in _UPDATE_FILTERS:
        uris = filters.get(key)
        if isinstance(uris, list):
            found += [uri for uri in cast("list[Any]", uris) if isinstance(uri, str)]
    return found


def _entry(registries: Registries, kinds: Iterable[str], key: str) -> Entry | None:
    """The entry under `key` in the first of the tables `kinds` that has one (a template's: the
    first whose template matches it)."""
    for kind in kinds:
        table = registries.table(kind)
        if kind != "templates":
            found = table.get(key)
        else:
            found = next((t for t in table.values() if t.template.match(key) is not None), None)
        if found is not None:
            return found
    return None


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
            for _key, entry in targets(registries, method, cast("Mapping[str, Any]", params)):
                needed += [s for s in entry.scopes if s not in needed]
    return needed


def named_scopes(registries: Registries) -> list[str]:
    """Every scope an entry names (for the Protected Resource Metadata's `scopes_supported`)."""
    tables = (registries.tools, registries.resources, registries.templates, registries.prompts)
    return list(dict.fromkeys(s for table in tables for key in table.guarded for s in table[key].scopes))


class Access(Extension):
    """Who sees and may use each of an app's entries (see the module)."""

    def __init__(self, registries: Registries) -> None:
        self.registries = registries

    def features(self) -> Sequence[ServerFeature]:
        return (AccessGuard(self.registries),)

    def attach(self, server: ServerStub, host: ServerHost) -> None:
        host.subscriptions.gate = ResourceGate(self.registries)


class AccessGuard(ServerFeature):
    """`Access` on the dispatch seam: the list methods filtered, the targeted methods checked, the
    resource-update filters of `subscriptions/listen` checked and screened."""

    def __init__(self, registries: Registries) -> None:
        self.registries = registries
        self.gate = ResourceGate(registries)

    def wrap(self, runtime: ServerRuntime, plan: Plan, view: PeerView) -> None:
        method = plan.spec.method
        field_name = v2026.LISTS.get(method)
        if field_name is not None:
            plan.wrap(functools.partial(self.listed, kind_of(field_name), field_name))
        elif method in _GUARDED:
            not_found = runtime.server.protocol.error_codes.resource_not_found or INVALID_PARAMS
            plan.wrap(functools.partial(self.guarded, not_found))

    async def listed(self, kind: str, field_name: str, call: ServerCall, next: ServerNext) -> object:
        """A list without the entries the caller may not see."""
        result = await next(call)
        table = self.registries.table(kind)
        if not table.guarded:  # no rule in this table: nothing to read
            return result
        principal = call.principal
        hidden = {key for key in table.guarded if key in table and not table[key].allows(principal)}
        field = attribute(type(result), field_name) or field_name
        items = getattr(result, field, None)
        if not hidden or not isinstance(items, list):
            return result
        listed: list[Any] = cast("list[Any]", items)
        key = (attribute(listed[0].__class__, v2026.LIST_KEYS[call.method]) or "") if listed else ""
        kept = [item for item in listed if getattr(item, key, None) not in hidden]
        return cast("Any", result).model_copy(update={field: kept})

    async def guarded(self, not_found: int, call: ServerCall, next: ServerNext) -> object:
        """The request, where the caller may use the entry it names; else its refusal."""
        if not self.registries.guarded():  # no rule anywhere: nothing to look up (every call pays this)
            return await next(call)
        entry = target(self.registries, call.method, call.raw or {})
        if entry is None or not entry.guarded:
            return await next(call)
        principal = call.principal
        missing = entry.missing_scopes(principal)
        if missing:
            raise _insufficient(call.method, call.recorded_target or entry.key, entry, missing, principal)
        if not entry.allows(principal):
            raise _unknown(call.method, call.target or entry.key, not_found)
        return await next(call)

    async def listen_filters(
        self, view: PeerView, session: Session, wanted: Mapping[str, object]
    ) -> dict[str, tuple[str, object]]:
        """A listen stream's resource-update filters: refused where they name a resource the caller
        lacks the scopes of; else agreed as asked (nothing added here), each update then delivered
        as the host's subscriptions show it to the stream (`ResourceGate.shows`)."""
        asked = {key: wanted[key] for key in _UPDATE_FILTERS if wanted.get(key) and isinstance(wanted[key], list)}
        if not asked or not may_send(view, RESOURCE_UPDATED):
            return {}
        principal = principal_of(session.principal)
        for uri, entry in targets(self.registries, v2026.SUBSCRIPTIONS_LISTEN, {"notifications": asked}):
            missing = entry.missing_scopes(principal)
            if missing:
                raise _insufficient(v2026.SUBSCRIPTIONS_LISTEN, recorded_uri(uri), entry, missing, principal)
        return {}


class ResourceGate:
    """The gate of a host's resource subscriptions (`Subscriptions.gate`): a holder (a connection,
    a listen stream: each has its `session`, whose principal is the caller's) may not subscribe
    to, nor unsubscribe from, a resource whose scopes it lacks (-32602, as `AccessGuard` answers);
    and is told of a resource's updates only while it may see the resource."""

    def __init__(self, registries: Registries) -> None:
        self.registries = registries

    def admit(self, holder: Any, uri: str, subscribing: bool) -> None:
        entry = self._guarded(uri)
        if entry is None:
            return
        principal = _principal(holder)
        missing = entry.missing_scopes(principal)
        if missing:
            method = next(m for m, sub in SUBSCRIPTION_REQUESTS.items() if sub == subscribing)
            raise _insufficient(method, recorded_uri(uri), entry, missing, principal)

    def shows(self, holder: Any, uri: str) -> bool:
        entry = self._guarded(uri)
        return entry is None or entry.allows(_principal(holder))

    def _guarded(self, uri: str) -> Entry | None:
        """The entry `uri` names where it has a rule (None: everyone may see it, or nothing is)."""
        registries = self.registries
        if not registries.resources.guarded and not registries.templates.guarded:
            return None
        entry = _entry(registries, _RESOURCES, uri)
        return entry if entry is not None and entry.guarded else None


def _principal(holder: Any) -> Principal | None:
    """Who a subscription's holder (a `ServerRuntime`, a `Listener`) speaks for: its session's principal."""
    session = getattr(holder, "session", None)
    return principal_of(getattr(session, "principal", None))


def _insufficient(
    method: str, named: str, entry: Entry, missing: Sequence[str], principal: Principal | None
) -> McpError:
    who = "the caller" if principal is not None else "an unauthenticated caller"
    scopes = f"scope{'s' if len(missing) > 1 else ''} {' '.join(missing)}"
    message = f"{method} refused: {named!r} needs the {scopes}, which {who} was not granted (insufficient_scope)"
    return McpError(
        INVALID_PARAMS, message, {"error": "insufficient_scope", "scope": " ".join(entry.scopes), "missing": [*missing]}
    )


def _unknown(method: str, key: str, not_found: int) -> McpError:
    """What the handler answers for an entry that does not exist (the caller may not know it does)."""
    if method == v2026.RESOURCES_READ:
        return McpError(not_found, f"Resource not found: {key}", {"uri": key})
    kind = _TARGETS[method][1][0] if method in _TARGETS else "completion references"
    return McpError(INVALID_PARAMS, f"Unknown {kind.removesuffix('s')}: {key}", {"name": key})
