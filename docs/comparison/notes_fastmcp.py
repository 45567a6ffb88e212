"""The notes server of docs/authoring.md ("Compared, with lifespan, a dependency, middleware, a mounted
app and auth"), on FastMCP 4.2.3 (`pip install fastmcp==4.2.3`), written from its documentation.

python docs/comparison/notes_fastmcp.py    # stdio; over HTTP: `mcp.http_app()` (bearer auth from NOTES_ISSUER)
"""

import os
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from fastmcp import Context, FastMCP
from fastmcp.dependencies import Depends
from fastmcp.exceptions import McpError, ToolError
from fastmcp.server.auth import RemoteAuthProvider
from fastmcp.server.auth.providers.jwt import JWTVerifier
from fastmcp.server.dependencies import get_access_token
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import ToolResult
from mcp_types import INVALID_PARAMS, CallToolRequestParams
from pydantic import AnyHttpUrl

ISSUER = os.environ.get("NOTES_ISSUER", "https://auth.example.com")
URL = os.environ.get("NOTES_URL", "http://127.0.0.1:8000/mcp")


@asynccontextmanager
async def lifespan(server: FastMCP[Any]) -> AsyncGenerator[dict[str, Any]]:
    yield {"notes": {}}  # the notes database, opened once and shared by every request


def author() -> str:
    token = get_access_token()
    return str(token.claims.get("sub")) if token is not None else "anonymous"


class NoSecrets(Middleware):
    async def on_call_tool(
        self, context: MiddlewareContext[CallToolRequestParams], call_next: CallNext[CallToolRequestParams, ToolResult]
    ) -> ToolResult:
        if "secret" in str(context.message.arguments):
            raise McpError(code=INVALID_PARAMS, message="refused: no secrets in notes")
        return await call_next(context)


verifier = JWTVerifier(jwks_uri=f"{ISSUER}/jwks", issuer=ISSUER, audience=URL)
auth = RemoteAuthProvider(
    token_verifier=verifier, authorization_servers=[AnyHttpUrl(ISSUER)], base_url=URL.removesuffix("/mcp")
)
mcp = FastMCP("notes", lifespan=lifespan, middleware=[NoSecrets()], auth=auth)


@mcp.tool
def add(title: str, text: str, ctx: Context, by: str = Depends(author)) -> str:
    """Save a note."""
    ctx.lifespan_context["notes"][title] = text
    return f"saved {title} by {by}"


@mcp.tool
def read(title: str, ctx: Context) -> str:
    """Read a note."""
    notes = ctx.lifespan_context["notes"]
    if title not in notes:
        raise ToolError(f"no note {title}")
    return notes[title]


text = FastMCP("text")


@text.tool
def words(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


mcp.mount(text, namespace="text")

if __name__ == "__main__":
    mcp.run()
