"""What an `App` registered: its tables of tools, resources, resource templates, prompts and
completions (held by the app, read by its collaborators: serving, list changes, mounting, the
proxy), the definitions listed from them (cached per list) and the kinds it serves while a table
may still be empty (a proxy's)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from mcp_bindings.runtime.app.entries import Completer, Entry, PromptEntry, ResourceEntry, TemplateEntry, ToolEntry

__all__ = ["KINDS", "Registries", "Table", "kind_of"]

E = TypeVar("E", bound=Entry)

KINDS = ("tools", "resources", "templates", "prompts")  # the tables listed to clients


def kind_of(field_name: str) -> str:
    """The table (a kind of `KINDS`) whose entries a list result's field (the generated `LISTS`)
    lists: the field's own name, but for `resourceTemplates`."""
    return "templates" if field_name == "resourceTemplates" else field_name


class Table(dict[str, E]):
    """One of an app's tables (key -> entry): a dict that knows which of its entries have an access
    rule (`scopes=` or `allow=`, `app.access`), `guarded`, kept as entries are placed and removed
    (whoever does it: registration, `remove_*`, mounting, a proxy's refresh), so that a list or a
    request where no entry has one costs nothing. An entry's rule is read when it is placed."""

    __slots__ = ("guarded",)

    def __init__(self, entries: Iterable[tuple[str, E]] = ()) -> None:
        super().__init__()
        self.guarded: set[str] = set()
        self.update(entries)

    def __setitem__(self, key: str, entry: E) -> None:
        super().__setitem__(key, entry)
        if entry.guarded:
            self.guarded.add(key)
        else:
            self.guarded.discard(key)

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        self.guarded.discard(key)

    def pop(self, key: str, *default: Any) -> Any:
        self.guarded.discard(key)
        return super().pop(key, *default)

    def popitem(self) -> tuple[str, E]:
        key, entry = super().popitem()
        self.guarded.discard(key)
        return key, entry

    def clear(self) -> None:
        super().clear()
        self.guarded.clear()

    def setdefault(self, key: str, default: E) -> E:  # pyright: ignore[reportIncompatibleMethodOverride]
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, *given: Any, **more: E) -> None:  # pyright: ignore[reportIncompatibleMethodOverride]
        for entries in (*given, more):
            pairs = cast("Iterable[tuple[str, E]]", entries.items() if isinstance(entries, Mapping) else entries)
            for key, entry in pairs:
                self[key] = entry

    def __ior__(self, other: Any) -> Any:
        self.update(other)
        return self

    def __reduce__(self) -> Any:  # (copies and pickles are tables too)
        return (type(self), (list(self.items()),))


@dataclass(eq=False)
class Registries:
    """An app's tables (see the module)."""

    tools: Table[ToolEntry] = field(default_factory=Table[ToolEntry])
    resources: Table[ResourceEntry] = field(default_factory=Table[ResourceEntry])
    templates: Table[TemplateEntry] = field(default_factory=Table[TemplateEntry])
    prompts: Table[PromptEntry] = field(default_factory=Table[PromptEntry])
    completers: dict[tuple[str, str, str], Completer] = field(default_factory=dict[tuple[str, str, str], Completer])
    lists: dict[str, list[Any]] = field(default_factory=dict[str, list[Any]])  # cached definitions per list
    # Kinds served (and advertised) while their table may still be empty: a proxy's, a mounted proxy's.
    serves: set[str] = field(default_factory=set[str])

    def guarded(self) -> bool:
        """Whether any entry of any table has an access rule (`Table.guarded`)."""
        return bool(self.tools.guarded or self.resources.guarded or self.templates.guarded or self.prompts.guarded)

    def table(self, kind: str) -> Table[Any]:
        """The table of `kind` ("tools", "resources", "templates", "prompts": its field's name)."""
        if kind not in KINDS:
            raise KeyError(kind)
        return cast("Table[Any]", getattr(self, kind))

    def listed(self, kind: str) -> list[Any]:
        """The definitions of `kind` a client is listed (the enabled ones), cached until it changes."""
        items = self.lists.get(kind)
        if items is None:
            items = self.lists[kind] = [entry.definition for entry in self.table(kind).values() if entry.enabled]
        return items
