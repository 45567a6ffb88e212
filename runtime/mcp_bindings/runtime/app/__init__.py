"""The authoring layer: an MCP server from decorated, typed functions, on any version's stub.

    from mcp_bindings.runtime.app import App, Context

    app = App("demo", version="1.0")

    @app.tool
    async def add(a: int, b: int, ctx: Context) -> int:
        \"\"\"Add two numbers.\"\"\"
        await ctx.info(f"adding {a} and {b}")
        return a + b

    app.run()   # stdio; app.run("http", port=3001); app.asgi(); app.test_client()

docs/authoring.md is the guide.
"""

from mcp_bindings.runtime.app.auth import Auth
from mcp_bindings.runtime.app.content import Audio, Embedded, Image, Message, assistant, user
from mcp_bindings.runtime.app.context import Accepted, Cancelled, Context, Declined, Elicited, LogLevel, Root, Sampled
from mcp_bindings.runtime.app.core import App
from mcp_bindings.runtime.app.depends import Depends
from mcp_bindings.runtime.app.errors import AppDefinitionError, MissingClientCapability, ResourceNotFound, ToolError
from mcp_bindings.runtime.app.progress import Progress
from mcp_bindings.runtime.protocol.principal import Principal

__all__ = [
    "Accepted",
    "App",
    "AppDefinitionError",
    "Audio",
    "Auth",
    "Cancelled",
    "Context",
    "Declined",
    "Depends",
    "Elicited",
    "Embedded",
    "Image",
    "LogLevel",
    "Message",
    "MissingClientCapability",
    "Principal",
    "Progress",
    "ResourceNotFound",
    "Root",
    "Sampled",
    "ToolError",
    "assistant",
    "user",
]
