"""What an `App` registered: its tables of tools, resources, resource templates, prompts and
completions (held by the app, read by its collaborators: serving, list changes, mounting, the
proxy), the definitions listed from them (cached per list) and the kinds it serves while a table
may still be empty (a proxy's)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcp_bindings.runtime.app.entries import Completer, PromptEntry, ResourceEntry, TemplateEntry, ToolEntry

__all__ = ["KINDS", "Registries", "kind_of"]

KINDS = ("tools", "resources", "templates", "prompts")  # the tables listed to clients


def kind_of(field_name: str) -> str:
    """The table (a kind of `KINDS`) whose entries a list result's field (the generated `LISTS`)
    lists: the field's own name, but for `resourceTemplates`."""
    return "templates" if field_name == "resourceTemplates" else field_name


@dataclass(eq=False)
class Registries:
    """An app's tables (see the module)."""

    tools: dict[str, ToolEntry] = field(default_factory=dict[str, ToolEntry])
    resources: dict[str, ResourceEntry] = field(default_factory=dict[str, ResourceEntry])
    templates: dict[str, TemplateEntry] = field(default_factory=dict[str, TemplateEntry])
    prompts: dict[str, PromptEntry] = field(default_factory=dict[str, PromptEntry])
    completers: dict[tuple[str, str, str], Completer] = field(default_factory=dict[tuple[str, str, str], Completer])
    lists: dict[str, list[Any]] = field(default_factory=dict[str, list[Any]])  # cached definitions per list
    # Kinds served (and advertised) while their table may still be empty: a proxy's, a mounted proxy's.
    serves: set[str] = field(default_factory=set[str])

    def table(self, kind: str) -> dict[str, Any]:
        """The table of `kind` ("tools", "resources", "templates", "prompts")."""
        tables: dict[str, dict[str, Any]] = {
            "tools": self.tools,
            "resources": self.resources,
            "templates": self.templates,
            "prompts": self.prompts,
        }
        return tables[kind]

    def listed(self, kind: str) -> list[Any]:
        """The definitions of `kind` a client is listed (the enabled ones), cached until it changes."""
        items = self.lists.get(kind)
        if items is None:
            items = self.lists[kind] = [entry.definition for entry in self.table(kind).values() if entry.enabled]
        return items
