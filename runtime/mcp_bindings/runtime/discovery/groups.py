"""Groups (the draft's Groups page, SEP-2084; the project's schema `mcp_bindings.ext.
io_modelcontextprotocol_groups`): `Groups`, an extension serving `groups/list` and putting each
listed tool's, prompt's, resource's and resource template's groups in its `_meta`
(`io.modelcontextprotocol/groups`) for the clients that declared the extension; a client that did
not sees the lists as they were.

A primitive belongs to a `Group` by what the group says of it: its `members` (names, URIs, URI
templates), its `namespace` (a mounted app's: tools and prompts `ns_*`, resources `scheme://ns/...`)
or its `tags` (an `App`'s entries with any of them; `@app.tool(group="billing")` is the tag
`group:billing`, which makes it a member of `billing` with nothing more said).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from mcp_bindings.ext.io_modelcontextprotocol_groups.names import GROUPS_LIST, IDENTIFIER
from mcp_bindings.runtime.app.registration import GROUP_TAG
from mcp_bindings.runtime.app.registries import kind_of
from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.custom_methods import EXTENSIONS, CustomMethod, Handler, peer_declares
from mcp_bindings.runtime.protocol.pagination import invalid_cursor
from mcp_bindings.runtime.server.plugins import Extension
from mcp_bindings.runtime.server.seam import Plan, ServerFeature, ServerNext
from mcp_bindings.v2026_07_28 import names as v2026

if TYPE_CHECKING:
    from mcp_bindings.runtime.protocol.spec import ProtocolTables
    from mcp_bindings.runtime.server.calls import ServerCall
    from mcp_bindings.runtime.server.peer import PeerView
    from mcp_bindings.runtime.server.runtime import ServerRuntime

__all__ = ["GROUPS", "MEMBERSHIP", "Group", "Groups"]

GROUPS = IDENTIFIER  # the extension's identifier: "io.modelcontextprotocol/groups"
MEMBERSHIP = IDENTIFIER  # groups.mdx, Primitive Group Membership: the reserved `_meta` key (the same string)

# Which lists carry their items' groups, and where, is generated (`names.LISTS`: a list request's
# result field; `names.LIST_KEYS`: the item field naming it); `app.registries.kind_of` names the table.


@dataclass(frozen=True)
class Group:
    """One group (groups.mdx, Data Types > Group) and who belongs to it (see the module).
    `parents`: the groups it belongs to itself (Nested Groups)."""

    name: str
    title: str | None = None
    description: str | None = None
    icons: Sequence[Mapping[str, Any]] = ()
    parents: Sequence[str] = ()
    members: Collection[str] = ()
    namespace: str | None = None
    tags: Collection[str] = field(default_factory=frozenset[str])

    def __post_init__(self) -> None:
        for what in ("parents", "members", "tags"):
            if isinstance(getattr(self, what), str):
                raise ValueError(f"Group {self.name!r}: {what}= is one string; give a list")
        if self.name in self.parents:
            raise ValueError(f"Group {self.name!r}: a group cannot belong to itself")

    def wire(self) -> dict[str, Any]:
        """The group as groups/list lists it."""
        data: dict[str, Any] = {"name": self.name}
        data.update({k: v for k, v in (("title", self.title), ("description", self.description)) if v is not None})
        if self.icons:
            data["icons"] = [dict(i) for i in self.icons]
        if self.parents:
            data["_meta"] = {MEMBERSHIP: list(self.parents)}
        return data

    def holds(self, key: str, kind: str, tags: Collection[str]) -> bool:
        """Whether the item `key` (a name, URI or URI template) of list `kind` with `tags` is a member."""
        if key in self.members or GROUP_TAG + self.name in tags or any(t in tags for t in self.tags):
            return True
        ns = self.namespace
        if ns is None:
            return False
        if kind in ("tools", "prompts"):
            return key.startswith(f"{ns}_")
        _, sep, rest = key.partition("://")
        return rest.startswith(f"{ns}/") if sep else key.partition(":")[2].startswith(f"{ns}/")


class Groups(Extension):
    """Serve `groups` (see the module); the names must be unique and every parent one of them."""

    def __init__(self, groups: Sequence[Group]) -> None:
        names = [g.name for g in groups]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"Groups: group {twice[0]!r} is given twice")
        unknown = sorted({p for g in groups for p in g.parents if p not in names})
        if unknown:
            raise ValueError(f"Groups: parent group {unknown[0]!r} is not one of the groups")
        self.groups = tuple(groups)

    def capabilities(self, protocol: ProtocolTables) -> Mapping[str, Any]:
        return {EXTENSIONS: {GROUPS: {"listChanged": False}}}  # the groups are fixed once given

    def methods(self) -> Mapping[CustomMethod[Any, Any], Handler]:
        from mcp_bindings.ext.io_modelcontextprotocol_groups.methods import EXTENSION

        return {EXTENSION.methods[GROUPS_LIST]: self.list_groups}

    def features(self) -> Sequence[ServerFeature]:
        return (Membership(self.groups),)

    async def list_groups(self, params: Any, ctx: Any) -> Any:
        """groups/list (groups.mdx, Listing Groups): every group, in one page."""
        from mcp_bindings.ext.io_modelcontextprotocol_groups import models

        cursor = getattr(params, "cursor", None)
        if cursor is not None:
            raise invalid_cursor(cursor)
        return models.ListGroupsResult.model_validate({"groups": [g.wire() for g in self.groups]})


class Membership(ServerFeature):
    """Each listed item's groups in its `_meta`, for a client that declared the extension."""

    def __init__(self, groups: Sequence[Group]) -> None:
        self.groups = groups

    def wrap(self, runtime: ServerRuntime, plan: Plan, view: PeerView) -> None:
        field_name, key = v2026.LISTS.get(plan.spec.method), v2026.LIST_KEYS.get(plan.spec.method)
        if field_name is None or key is None:
            return
        kind = kind_of(field_name)

        async def with_groups(call: ServerCall, next: ServerNext) -> object:
            result = await next(call)
            data = versions.dump(result) if peer_declares(call.session.client_capabilities, GROUPS) else None
            items = cast("dict[str, Any]", data).get(field_name) if isinstance(data, dict) else None
            if not isinstance(items, list):
                return result
            tables = getattr(getattr(runtime.server, "app", None), "registries", None)
            entries: Mapping[str, Any] = tables.table(kind) if tables is not None else {}
            grouped = [self._grouped(item, key, kind, entries) for item in cast("list[dict[str, Any]]", items)]
            return cast("Any", type(result)).model_validate({**cast("dict[str, Any]", data), field_name: grouped})

        plan.wrap(with_groups)

    def _grouped(self, item: dict[str, Any], key: str, kind: str, entries: Mapping[str, Any]) -> dict[str, Any]:
        name = str(item.get(key, ""))
        tags: Collection[str] = getattr(entries.get(name), "tags", ())
        names = [g.name for g in self.groups if g.holds(name, kind, tags)]
        if not names:
            return item
        return {**item, "_meta": {**(item.get("_meta") or {}), MEMBERSHIP: names}}
