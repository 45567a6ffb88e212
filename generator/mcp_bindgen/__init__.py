"""mcp-bindgen: generate typed Python bindings for every MCP protocol version from the official schema."""

__version__ = "0.1.0"
