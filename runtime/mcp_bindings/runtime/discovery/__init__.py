"""Progressive discovery for servers with large catalogs (docs/discovery.md): tool search for every
client (`ToolSearch`, `discovery.search`, over `discovery.index`)."""

from mcp_bindings.runtime.discovery.search import ToolSearch

__all__ = ["ToolSearch"]
