"""What both sides know of a listed tool: its definition as `tools/list` gave it (`ToolDefinition`, the
schemas compiled on first use), the definitions of a tools/list result (`definitions`), a catalog of
them by name (`ToolCatalog`), the JSON Schema dialect of a version's tool schemas (`default_dialect`)
and the error of a result that breaks its tool's outputSchema (`ToolOutputError`).

The server's checks are `server.tool_schemas`; the client's are `client.tool_checks`, over the
client's catalog (`client.tool_catalog`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from hashlib import blake2b
from typing import Any

import orjson
from pydantic import BaseModel

from mcp_bindings.runtime.protocol import registry, versions
from mcp_bindings.runtime.protocol.headers import header_params
from mcp_bindings.runtime.protocol.json_schema import (
    DRAFT_07,
    DRAFT_2020_12,
    MAX_VIOLATIONS,
    Check,
    CompiledSchema,
    Violation,
    compiled,
    describe,
)
from mcp_bindings.runtime.protocol.spec import VersionInfo
from mcp_bindings.runtime.rpc import logs
from mcp_bindings.runtime.rpc.errors import INTERNAL_ERROR, McpError
from mcp_bindings.v2026_07_28 import names as v2026

__all__ = [
    "TOOLS_CALL",
    "TOOLS_LIST",
    "TOOLS_LIST_CHANGED",
    "TOOL_METHODS",
    "ToolCatalog",
    "ToolDefinition",
    "ToolListing",
    "ToolOutputError",
    "default_dialect",
    "definitions",
    "report_unusable",
]

log = logs.logger("tool_schemas")

TOOLS_LIST = v2026.TOOLS_LIST
TOOLS_CALL = v2026.TOOLS_CALL
TOOL_METHODS = frozenset({TOOLS_LIST, TOOLS_CALL})
TOOLS_LIST_CHANGED = v2026.NOTIFICATIONS_TOOLS_LIST_CHANGED


def default_dialect(version: str | VersionInfo) -> str:
    """The JSON Schema dialect of a tool schema without `$schema`, in a protocol version (given by
    wire version or by its `VersionInfo`): the dialect the version's own schema is written in, as
    the spec makes them the same (SEP-1613: 2020-12 for both from 2025-11-25, draft-07 before)."""
    info = version if isinstance(version, VersionInfo) else registry.info(version)
    return DRAFT_2020_12 if info.schema_dialect == "2020-12" else DRAFT_07


class ToolOutputError(McpError):
    """A tools/call result whose `structuredContent` is missing or does not satisfy the tool's outputSchema."""

    def __init__(self, tool: str, violations: list[Violation]) -> None:
        if violations:
            what = f"returned structuredContent that does not match its outputSchema:\n{describe(violations)}"
        else:
            what = "has an outputSchema but its result has no structuredContent"
        data = {"tool": tool, "violations": [v._asdict() for v in violations[:MAX_VIOLATIONS]]}
        super().__init__(INTERNAL_ERROR, f"tool {tool!r} {what}", data)
        self.tool = tool
        self.violations = violations


# -- what tools/list said -------------------------------------------------------------------------


@dataclass(slots=True, eq=False)
class ToolDefinition:
    """One listed tool's schemas, as the JSON they were listed with; compiled on first use (`resolve`)."""

    name: str
    input_source: bytes | None
    output_source: bytes | None
    dialect: str
    # Once resolved: the usable schemas (None: none listed, or one that cannot be used), and what
    # the arguments meet first: True when they are valid for sure (the inputSchema's fast check;
    # always True without an inputSchema), False when `input_schema.violations` must tell.
    input_schema: CompiledSchema | None = field(init=False, default=None)
    output_schema: CompiledSchema | None = field(init=False, default=None)
    accepts: Check | None = field(init=False, default=None)  # None: not resolved yet
    _headers: dict[str, str] | bool | None = field(init=False, default=False)  # False: not read yet

    @property
    def headers(self) -> dict[str, str] | None:
        """Its `x-mcp-header` parameters (parameter -> header name; {} when none; None when the
        annotations are invalid), read from the inputSchema once (SEP-2243)."""
        headers = self._headers
        if headers is False:
            schema = orjson.loads(self.input_source) if self.input_source is not None else None
            headers = self._headers = header_params(schema)
        return headers  # pyright: ignore[reportReturnType] - never False once read

    def same_as(self, other: ToolDefinition) -> bool:
        return (self.input_source, self.output_source, self.dialect) == (
            other.input_source,
            other.output_source,
            other.dialect,
        )

    def resolve(self) -> Check:
        """Compile the schemas (once: `json_schema.compiled`) and return `accepts`."""
        accepts = self.accepts
        if accepts is None:
            self.input_schema = _resolve(self.name, "inputSchema", self.input_source, self.dialect)
            self.output_schema = _resolve(self.name, "outputSchema", self.output_source, self.dialect)
            schema = self.input_schema
            accepts = self.accepts = _always if schema is None else schema.fast or _unsure
        return accepts


def _always(value: Any) -> bool:
    return True


def _unsure(value: Any) -> bool:
    return False


def _resolve(tool: str, which: str, source: bytes | None, dialect: str) -> CompiledSchema | None:
    if source is None:
        return None
    schema = compiled(source, dialect)
    if schema.usable:
        return schema
    report_unusable(tool, which, schema)
    return None


def report_unusable(tool: str, which: str, schema: CompiledSchema) -> None:
    """Tell, once per schema, that it cannot be used (and so is not enforced)."""
    if not schema.reported:  # once per schema: on a client, what is logged comes from the server
        schema.reported = True
        log.error("tool %.100r: its %s is not enforced: it is %s", tool, which, schema.problem)


def definitions(tools: Iterable[Any], dialect: str) -> list[ToolDefinition]:
    """The definitions in a tools/list result's `tools` (models or decoded JSON); malformed ones skipped."""
    out: list[ToolDefinition] = []
    for tool in tools:
        if isinstance(tool, BaseModel):
            name = getattr(tool, "name", None)
            input_schema, output_schema = getattr(tool, "input_schema", None), getattr(tool, "output_schema", None)
        elif isinstance(tool, dict):
            name, input_schema, output_schema = tool.get("name"), tool.get("inputSchema"), tool.get("outputSchema")
        else:
            continue
        if isinstance(name, str):
            out.append(ToolDefinition(name, _source(input_schema), _source(output_schema), dialect))
    return out


def _source(schema: Any) -> bytes | None:
    """A schema as the JSON clients see (a model is written as on the wire)."""
    if schema is None:
        return None
    try:
        return versions.to_json(schema) if isinstance(schema, BaseModel) else orjson.dumps(schema)
    except Exception:  # noqa: BLE001 - not writable as JSON (e.g. nested deeper than orjson writes)
        return b'"not writable as JSON"'  # compiles to "not a JSON Schema": reported once, not enforced


class ToolListing:
    """One tools/list result's `tools` as the catalog takes them: written to JSON once (`digest`:
    what tells one listing from another, by content), their definitions made from that JSON only
    when a catalog does not hold that listing already (`definitions`)."""

    __slots__ = ("_definitions", "_tools", "data", "dialect", "digest")

    def __init__(self, tools: list[Any], dialect: str) -> None:
        self._tools: list[Any] | None = tools
        self.dialect = dialect
        self._definitions: list[ToolDefinition] | None = None
        try:
            self.data: bytes | None = versions.to_json(tools)
        except Exception:  # noqa: BLE001 - not writable as JSON: read the tools one by one, every time
            self.data = None
        self.digest = None if self.data is None else blake2b(self.data, digest_size=16).digest()

    @property
    def definitions(self) -> list[ToolDefinition]:
        made = self._definitions
        if made is None:
            source = self._tools if self.data is None else orjson.loads(self.data)
            made = self._definitions = definitions(source or (), self.dialect)
            self._tools = None
        return made


@dataclass(slots=True, eq=False)
class ToolCatalog:
    """Tool definitions by name, as listed (or declared: `declare`)."""

    # One dict for the catalog's life (connections keep a reference to read it on every call).
    tools: dict[str, ToolDefinition] = field(default_factory=dict[str, ToolDefinition])
    declared: bool = False  # the server declared its whole list: a list change re-declares it
    listing: bytes | None = None  # the digest of the listing last remembered (`take`)

    def declare(self, tools: Iterable[ToolDefinition]) -> None:
        """The server's whole tool list, as its author declared it (the authoring layer): tools not
        in it are gone; what is unchanged keeps what is compiled."""
        known = dict(self.tools)
        self.tools.clear()
        for definition in tools:
            old = known.get(definition.name)
            self.tools[definition.name] = old if old is not None and old.same_as(definition) else definition
        self.declared = True
        self.listing = None

    def changed(self) -> None:
        """The server's tool list changed (`notifications/tools/list_changed`): the one invalidation.
        A listed catalog forgets (the next tools/list fills it); a declared one was re-declared."""
        self.listing = None
        if not self.declared:
            self.tools.clear()

    def take(self, listing: ToolListing) -> None:
        """Remember a tools/list result's tools, unless they are the very listing last remembered
        (same JSON: nothing to do, whatever the size of the list)."""
        if listing.digest is not None and listing.digest == self.listing:
            return
        self.remember(listing.definitions)
        self.listing = listing.digest

    def remember(self, listed: Iterable[ToolDefinition]) -> None:
        tools = self.tools
        for definition in listed:
            known = tools.get(definition.name)
            if known is None or not known.same_as(definition):  # unchanged: keep what is compiled
                tools[definition.name] = definition

    def forget(self) -> None:
        self.tools.clear()
        self.listing = None
