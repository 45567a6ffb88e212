"""The three tools a server behind `ToolSearch` lists in place of its catalog: their definitions
(wire JSON) and the reading of their arguments. Names and texts only: what they do is
`discovery.search`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

__all__ = ["Arguments", "BadArguments", "MetaTools"]

Mode = Literal["bm25", "regex"]
MAX_QUERY = 1000  # the longest query a search takes (characters; a regex pattern: `index.MAX_PATTERN`)
MODES: tuple[Mode, ...] = ("bm25", "regex")


class BadArguments(ValueError):
    """A meta-tool called with arguments it cannot take; the message names the field."""


@dataclass(frozen=True)
class Arguments:
    """A meta-tool call's arguments, read."""

    query: str = ""
    mode: Mode = "bm25"
    limit: int = 0
    name: str = ""
    arguments: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class MetaTools:
    """The names of the three tools (`prefix` + search_tools / describe_tool / call_tool) and how
    many tools a search answers at most (`limit`) and by default (`default_limit`)."""

    prefix: str = ""
    limit: int = 20
    default_limit: int = 5

    @property
    def search(self) -> str:
        return f"{self.prefix}search_tools"

    @property
    def describe(self) -> str:
        return f"{self.prefix}describe_tool"

    @property
    def call(self) -> str:
        return f"{self.prefix}call_tool"

    @property
    def names(self) -> frozenset[str]:
        return frozenset({self.search, self.describe, self.call})

    def definitions(self, catalog_size: int, structured: bool) -> list[dict[str, Any]]:
        """The three tools' definitions; `structured`: the version has outputSchema."""
        search: dict[str, Any] = {
            "name": self.search,
            "title": "Search tools",
            "description": (
                f"Search this server's catalog of {catalog_size} tools and get the best matches with their full "
                f"input schemas. Call a tool found with {self.call}(name, arguments). mode 'bm25' (default) ranks "
                "by the words of the query; mode 'regex' matches a case-insensitive regular expression against "
                "names, descriptions and parameter names."
            ),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What the tool should do, or a regular expression"},
                    "mode": {"type": "string", "enum": list(MODES), "default": "bm25"},
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": self.limit,
                        "default": self.default_limit,
                        "description": "How many tools at most",
                    },
                },
                "required": ["query"],
            },
            "annotations": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
        }
        if structured:
            search["outputSchema"] = {
                "type": "object",
                "properties": {"tools": {"type": "array", "items": {"type": "object"}}},
                "required": ["tools"],
            }
        describe: dict[str, Any] = {
            "name": self.describe,
            "title": "Describe a tool",
            "description": "The full definition (input schema included) of one tool of the catalog, by name.",
            "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            "annotations": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
        }
        call: dict[str, Any] = {
            "name": self.call,
            "title": "Call a tool",
            "description": (
                f"Call a tool of the catalog by name (find it with {self.search}); `arguments` must fit its input "
                "schema. Answers what the tool answers."
            ),
            "inputSchema": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}},
                "required": ["name"],
            },
        }
        return [search, describe, call]

    def read(self, tool: str, given: Mapping[str, Any] | None) -> Arguments:
        """The arguments of a call of meta-tool `tool` (BadArguments naming the field otherwise)."""
        args = given or {}
        if tool == self.search:
            query = args.get("query")
            if not isinstance(query, str) or not query.strip():
                raise BadArguments(f"{tool}: `query` is required: a non-empty string")
            if len(query) > MAX_QUERY:
                raise BadArguments(f"{tool}: `query` is {len(query)} characters long; at most {MAX_QUERY} are taken")
            mode = args.get("mode", "bm25")
            if mode not in MODES:
                raise BadArguments(f"{tool}: `mode` must be one of {', '.join(MODES)} (got {mode!r})")
            limit = args.get("limit", self.default_limit)
            if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= self.limit:
                raise BadArguments(f"{tool}: `limit` must be an integer from 1 to {self.limit} (got {limit!r})")
            return Arguments(query=query, mode=cast("Mode", mode), limit=limit)
        name = args.get("name")
        if not isinstance(name, str) or not name:
            raise BadArguments(f"{tool}: `name` is required: the name of a tool of the catalog")
        inner = args.get("arguments")
        if inner is not None and not isinstance(inner, Mapping):
            raise BadArguments(f"{tool}: `arguments` must be an object (got {type(inner).__name__})")
        return Arguments(name=name, arguments=cast("Mapping[str, Any] | None", inner))
