"""The client's one record of the server's tools: what its own `tools/list` calls returned, per tool
the definition (schemas compiled on first use: the output checks, `client.tool_checks`), the
`x-mcp-header` map (header mirroring, `client.headers`), `execution.taskSupport` and the
annotations (whether a call may be repeated, `client.retry`).

Pages add to what is known; a name listed again replaces its entry (keeping what is compiled when
its schemas are unchanged). `forget` is the one invalidation: on `notifications/tools/list_changed`
from any stream (`ClientRuntime.on_notification`). After it, `tools` is empty: results go
unchecked and no tool call is known safe to repeat until tools are listed again. Header mirroring
alone reads `last_listed`, the latest entry of each name ever listed: a server requires the
`Mcp-Param-*` headers of the tool as it last listed it, and a client that calls without listing
again has no better guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from mcp_bindings.runtime.client.seam import OutgoingCall, Send
from mcp_bindings.runtime.protocol.json_schema import DRAFT_2020_12
from mcp_bindings.runtime.protocol.tool_catalog import TOOLS_LIST, ToolDefinition, default_dialect, definitions

__all__ = ["ClientToolCatalog", "ListedTool"]


@dataclass(slots=True, eq=False)
class ListedTool:
    """One tool as the server listed it to this client."""

    definition: ToolDefinition  # the schemas (`definition.resolve()` compiles them)
    task_support: str | None  # execution.taskSupport ("forbidden", "optional", "required")
    annotations: dict[str, Any]  # readOnlyHint, idempotentHint, ... ({} when none)

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def headers(self) -> dict[str, str] | None:
        """x-mcp-header: argument -> header name; None: invalid annotations."""
        return self.definition.headers


class ClientToolCatalog:
    """The tools one client connection was shown, by name."""

    __slots__ = ("last_listed", "tools")

    def __init__(self) -> None:
        self.tools: dict[str, ListedTool] = {}  # listed since the last change of the list
        self.last_listed: dict[str, ListedTool] = {}  # the latest entry of every name ever listed

    def remember(self, tools: list[Any], dialect: str = DRAFT_2020_12) -> None:
        """Add the tools of one tools/list page (decoded JSON; malformed entries are skipped).
        `dialect`: of schemas without `$schema` (the negotiated version's, `default_dialect`)."""
        named = {t["name"]: t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)}
        for definition in definitions(named.values(), dialect):
            tool = cast("dict[str, Any]", named[definition.name])
            known = self.last_listed.get(definition.name)
            if known is not None and known.definition.same_as(definition):
                definition = known.definition  # unchanged: keep what is compiled
            self.tools[definition.name] = self.last_listed[definition.name] = ListedTool(
                definition, _task_support(tool), _annotations(tool)
            )

    def remember_result(self, raw: Any, dialect: str = DRAFT_2020_12) -> None:
        """`remember` the tools of a tools/list result (decoded JSON)."""
        tools = raw.get("tools") if isinstance(raw, dict) else None
        if isinstance(tools, list):
            self.remember(cast("list[Any]", tools), dialect)

    def forget(self) -> None:
        """The tool list changed: nothing listed is current until tools are listed again."""
        self.tools.clear()

    methods = (TOOLS_LIST,)  # an around (`client.seam`) of these only

    async def __call__(self, call: OutgoingCall, next: Send) -> object:
        """The hook that fills the catalog from `tools/list` results."""
        raw = await next(call)
        runtime = call.runtime
        self.remember_result(raw, default_dialect(runtime.version or runtime.stub_version))
        return raw


def _task_support(tool: dict[str, Any]) -> str | None:
    execution = tool.get("execution")
    support = cast("dict[str, Any]", execution).get("taskSupport") if isinstance(execution, dict) else None
    return support if isinstance(support, str) else None


def _annotations(tool: dict[str, Any]) -> dict[str, Any]:
    given = tool.get("annotations")
    return cast("dict[str, Any]", given) if isinstance(given, dict) else {}
