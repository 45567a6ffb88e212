"""The notes server of docs/authoring.md ("Compared, with lifespan, a dependency, middleware, a mounted
app and auth"), on the authoring layer (`mcp_bindings.runtime.app`).

python docs/comparison/notes_app.py    # stdio; over HTTP: `app.asgi()` (bearer auth from NOTES_ISSUER)
"""

import os
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from mcp_bindings.runtime.app import App, Auth, Context, Depends, ToolError
from mcp_bindings.runtime.errors import INVALID_PARAMS, McpError
from mcp_bindings.runtime.middleware import Call, Next

ISSUER = os.environ.get("NOTES_ISSUER", "https://auth.example.com")
URL = os.environ.get("NOTES_URL", "http://127.0.0.1:8000/mcp")


@asynccontextmanager
async def lifespan(app: App) -> AsyncGenerator[dict[str, str]]:
    yield {}  # the notes database, opened once and shared by every request


def author(ctx: Context) -> str:
    return (ctx.principal.subject if ctx.principal else None) or "anonymous"


app = App("notes", lifespan=lifespan, auth=Auth(resource=URL, issuer=ISSUER, jwks_uri=f"{ISSUER}/jwks"))


@app.middleware
async def no_secrets(call: Call, call_next: Next) -> Any:
    if "secret" in str(call.raw):
        raise McpError(INVALID_PARAMS, "refused: no secrets in notes")
    return await call_next(call)


@app.tool
def add(title: str, text: str, ctx: Context[dict[str, str]], by: Annotated[str, Depends(author)]) -> str:
    """Save a note."""
    ctx.lifespan[title] = text
    return f"saved {title} by {by}"


@app.tool
def read(title: str, ctx: Context[dict[str, str]]) -> str:
    """Read a note."""
    if title not in ctx.lifespan:
        raise ToolError(f"no note {title}")
    return ctx.lifespan[title]


text = App("text")


@text.tool
def words(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


app.mount(text, namespace="text")

if __name__ == "__main__":
    app.run()
