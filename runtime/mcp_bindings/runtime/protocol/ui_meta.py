"""What both sides know of MCP Apps (`io.modelcontextprotocol/ui`): the identifier, the UI resource
MIME type, and a tool's `_meta.ui` read as the generated `McpUiToolMeta` (its visibility: who may
call it). The models are generated from the pinned Apps schema (`mcp_bindings.ext.io_modelcontextprotocol_ui`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from pydantic import ValidationError

if TYPE_CHECKING:
    from mcp_bindings.ext.io_modelcontextprotocol_ui import models as ui

__all__ = [
    "DEPRECATED_RESOURCE_URI",
    "MIME_TYPE",
    "UI",
    "UI_SCHEME",
    "callable_by_app",
    "tool_ui",
    "visible_to_model",
]

UI = "io.modelcontextprotocol/ui"
MIME_TYPE = "text/html;profile=mcp-app"
UI_SCHEME = "ui://"
# apps.mdx, Resource Discovery: the flat key, deprecated in favour of `_meta.ui.resourceUri`; still
# written next to it for hosts that read only that one.
DEPRECATED_RESOURCE_URI = "ui/resourceUri"


def tool_ui(meta: Mapping[str, Any] | None) -> ui.McpUiToolMeta | None:
    """A tool's `_meta.ui` (or the deprecated flat `ui/resourceUri`), typed; None when it has none
    or it is not an MCP Apps object (a tool of another convention is just a tool)."""
    if not meta or ("ui" not in meta and DEPRECATED_RESOURCE_URI not in meta):
        return None  # no MCP Apps metadata: the extension's models are not loaded for it
    from mcp_bindings.ext.io_modelcontextprotocol_ui import models as ui  # where a tool has a UI

    raw = meta.get("ui")
    if isinstance(raw, Mapping):
        try:
            return ui.McpUiToolMeta.model_validate(dict(cast("Mapping[str, Any]", raw)))
        except ValidationError:
            return None
    flat = meta.get(DEPRECATED_RESOURCE_URI)
    return ui.McpUiToolMeta(resource_uri=flat) if isinstance(flat, str) else None


def visible_to_model(meta: Mapping[str, Any] | None) -> bool:
    """apps.mdx, Visibility: a tool whose visibility lacks "model" is not shown to the model."""
    found = tool_ui(meta)
    return found is None or found.visibility is None or "model" in found.visibility


def callable_by_app(meta: Mapping[str, Any] | None) -> bool:
    """apps.mdx, Visibility: a View may call a tool only when its visibility includes "app"
    (the default, ["model", "app"], does)."""
    found = tool_ui(meta)
    return found is None or found.visibility is None or "app" in found.visibility
