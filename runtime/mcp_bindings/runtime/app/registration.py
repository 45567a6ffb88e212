"""How an `App` registers (`app.tool`, `app.resource`, `app.prompt`, `app.complete`): their options
(typed for the decorators' keyword arguments), the entries made from the decorated functions and
placed in the app's tables, refused where a name is taken or the capability can no longer come, and
the clients told the list changed. A collaborator `App` holds (`app.core`)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from pydantic import BaseModel

from mcp_bindings.runtime.app.entries import (
    Completer,
    Entry,
    PlannedToolEntry,
    PromptEntry,
    ResourceEntry,
    TemplateEntry,
    ToolEntry,
)
from mcp_bindings.runtime.app.errors import AppDefinitionError
from mcp_bindings.runtime.app.uri_template import has_expression
from mcp_bindings.runtime.protocol.principal import Principal

if TYPE_CHECKING:
    from mcp_bindings.runtime.app.changes import ListChanges
    from mcp_bindings.runtime.app.registries import Registries, Table

__all__ = ["GROUP_TAG", "PromptOptions", "Registration", "ResourceOptions", "ToolOptions"]

# `group="billing"` is the tag "group:billing" (`app.disable(tags={"group:billing"})` hides the group;
# the groups extension, `runtime.discovery.groups`, reads its members from it).
GROUP_TAG = "group:"


class _Described(TypedDict, total=False):
    name: str | None
    title: str | None
    description: str | None
    icons: Sequence[Mapping[str, Any] | BaseModel] | None
    meta: Mapping[str, Any] | None
    tags: Collection[str]
    group: str | Collection[str]
    # Who may see and use it (`app.access`): OAuth scopes a caller needs on top of the app's,
    # and a predicate on the caller's principal (None: nobody authenticated).
    scopes: Collection[str]
    allow: Callable[[Principal | None], bool] | None


class ToolOptions(_Described, total=False):
    """`@app.tool(...)`'s keyword arguments."""

    annotations: Mapping[str, Any] | BaseModel | None
    structured: bool | None
    input_schema: Mapping[str, Any] | None
    task: bool | Literal["optional", "required"]
    input_first: bool
    inline_refs: bool | None
    # The inputSchema (and outputSchema) the function's signature gives, computed ahead of time (a
    # generated package's `tool_schemas.json`): the tool is listed from them and its function analysed
    # on its first call (`entries.PlannedToolEntry`). Only what the analysis writes: not checked.
    schemas: Mapping[str, Any] | None


class ResourceOptions(_Described, total=False):
    """`@app.resource(uri, ...)`'s keyword arguments."""

    mime_type: str | None
    size: int | None
    annotations: Mapping[str, Any] | BaseModel | None


class PromptOptions(_Described, total=False):
    """`@app.prompt(...)`'s keyword arguments."""


class Registration:
    """What `App.tool`, `resource`, `prompt` and `complete` do with the decorated function."""

    def __init__(self, registries: Registries, pkg: Any, changes: ListChanges, inline_refs: bool) -> None:
        self.registries, self.pkg, self.changes, self.inline_refs = registries, pkg, changes, inline_refs

    def tool(self, fn: Callable[..., Any], scope: dict[str, Any], options: ToolOptions) -> None:
        inline_refs = options.get("inline_refs")
        inline = self.inline_refs if inline_refs is None else inline_refs
        schemas = options.get("schemas")
        entry = (
            ToolEntry(fn, self.pkg, options, scope, inline)
            if schemas is None
            else PlannedToolEntry(fn, self.pkg, options, scope, inline, schemas)
        )
        _guard(entry, options, f"tool {entry.name!r}")
        tools = self.registries.tools
        known = tools.get(entry.name)
        if known is not None:
            raise AppDefinitionError(
                f"tool {entry.name!r} is already registered (by {_where(known.fn)}); "
                f"app.remove_tool({entry.name!r}) first to replace it"
            )
        self.changes.require("tools", bool(tools))
        tools[entry.name] = entry
        self.changes.changed("tools")

    def resource(self, uri: str, fn: Callable[..., Any], scope: dict[str, Any], options: ResourceOptions) -> None:
        registries = self.registries
        had = bool(registries.resources or registries.templates)
        templated = has_expression(uri)
        what = "resource template" if templated else "resource"
        if templated and options.get("size") is not None:
            raise AppDefinitionError(f"resource template {uri!r}: size is for resources, not templates")
        entry = (TemplateEntry if templated else ResourceEntry)(uri, fn, self.pkg, options, scope)
        _guard(entry, options, f"{what} {uri!r}")
        table: Table[Any] = registries.templates if templated else registries.resources
        if uri in table:
            raise AppDefinitionError(f"{what} {uri!r} is already registered")
        self.changes.require("resources", had)
        table[uri] = entry
        self.changes.changed("templates" if templated else "resources")

    def prompt(self, fn: Callable[..., Any], scope: dict[str, Any], options: PromptOptions) -> None:
        entry = PromptEntry(fn, self.pkg, options, scope)
        _guard(entry, options, f"prompt {entry.name!r}")
        prompts = self.registries.prompts
        if entry.name in prompts:
            raise AppDefinitionError(f"prompt {entry.name!r} is already registered")
        self.changes.require("prompts", bool(prompts))
        prompts[entry.name] = entry
        self.changes.changed("prompts")

    def complete(self, fn: Callable[..., Any], scope: dict[str, Any], key: tuple[str, str, str], what: str) -> None:
        completer = Completer(fn, what, scope)
        completers = self.registries.completers
        if key in completers:
            raise AppDefinitionError(f"{what} is already registered")
        self._check_completion(*key)
        self.changes.require("completions", bool(completers))
        completers[key] = completer

    def _check_completion(self, kind: str, target: str, argument: str) -> None:
        if kind == "prompt":
            entry = self.registries.prompts.get(target)
            if entry is None:
                raise AppDefinitionError(f"app.complete: no prompt {target!r} (register the prompt first)")
            if argument not in entry.sig.parameters:
                raise AppDefinitionError(f"app.complete: prompt {target!r} has no argument {argument!r}")
        else:
            template = self.registries.templates.get(target)
            if template is None:
                raise AppDefinitionError(f"app.complete: no resource template {target!r} (register it first)")
            if argument not in template.template.names:
                raise AppDefinitionError(f"app.complete: template {target!r} has no variable {argument!r}")


def _guard(entry: Entry, options: _Described, what: str) -> None:
    """The tags, scopes and `allow` predicate of `options`, checked, on `entry`."""
    entry.tags = _tags(_grouped(options), what)
    scopes = options.get("scopes", ())
    if isinstance(scopes, str):
        raise AppDefinitionError(f"{what}: scopes={scopes!r} is one string; give a list: scopes=[{scopes!r}]")
    entry.scopes = tuple(sorted(scopes))
    allow = options.get("allow")
    if allow is not None and not callable(allow):
        raise AppDefinitionError(f"{what}: allow={allow!r} is not callable (principal or None) -> bool")
    entry.allow = allow


def _grouped(options: _Described) -> Collection[str]:
    """The tags of `tags=`, and `group=` (one name or several) as GROUP_TAG tags."""
    tags, group = options.get("tags", ()), options.get("group", ())
    if isinstance(tags, str) or not group:
        return tags  # (one string: `_tags` refuses it)
    return [*tags, *(GROUP_TAG + name for name in ([group] if isinstance(group, str) else group))]


def _tags(tags: Collection[str], what: str) -> frozenset[str]:
    if isinstance(tags, str):
        raise AppDefinitionError(f"{what}: tags={tags!r} is one string; give a collection: tags={{{tags!r}}}")
    return frozenset(tags)


def _where(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
