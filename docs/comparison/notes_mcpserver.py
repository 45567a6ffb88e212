"""The notes server of docs/authoring.md ("Compared, with lifespan, a dependency, middleware, a mounted
app and auth"), on the official SDK's `MCPServer` (mcp==2.3.0), written from its documentation.

It has no JWT verifier (the `TokenVerifier` is written here on PyJWT) and no mount: the sub-app's tool
is registered again under the prefixed name.

python docs/comparison/notes_mcpserver.py    # stdio; over HTTP: `mcp.streamable_http_app()`
"""

import os
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import jwt
from mcp import MCPError
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import INVALID_PARAMS
from pydantic import AnyHttpUrl

ISSUER = os.environ.get("NOTES_ISSUER", "https://auth.example.com")
URL = os.environ.get("NOTES_URL", "http://127.0.0.1:8000/mcp")


class JWTVerifier:
    def __init__(self) -> None:
        self.keys = jwt.PyJWKClient(f"{ISSUER}/jwks")

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            key = self.keys.get_signing_key_from_jwt(token).key
            claims = jwt.decode(token, key, algorithms=["RS256"], audience=URL, issuer=ISSUER)
        except jwt.PyJWTError:
            return None
        scopes = str(claims.get("scope", "")).split()
        return AccessToken(token=token, client_id=claims.get("client_id", ""), scopes=scopes, subject=claims["sub"])


@asynccontextmanager
async def lifespan(server: MCPServer[dict[str, str]]) -> AsyncGenerator[dict[str, str]]:
    yield {}  # the notes database, opened once and shared by every request


def author() -> str:
    token = get_access_token()
    return token.subject or "anonymous" if token is not None else "anonymous"


async def no_secrets(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    if ctx.method == "tools/call" and "secret" in str(ctx.params):
        raise MCPError(INVALID_PARAMS, "refused: no secrets in notes")
    return await call_next(ctx)


mcp = MCPServer(
    "notes",
    lifespan=lifespan,
    middleware=[no_secrets],
    token_verifier=JWTVerifier(),
    auth=AuthSettings(
        issuer_url=AnyHttpUrl(ISSUER), resource_server_url=AnyHttpUrl(URL), validate_token_resource=False
    ),
)


@mcp.tool()
def add(title: str, text: str, ctx: Context[dict[str, str]], by: Annotated[str, Resolve(author)]) -> str:
    """Save a note."""
    ctx.request_context.lifespan_context[title] = text
    return f"saved {title} by {by}"


@mcp.tool()
def read(title: str, ctx: Context[dict[str, str]]) -> str:
    """Read a note."""
    notes = ctx.request_context.lifespan_context
    if title not in notes:
        raise ToolError(f"no note {title}")
    return notes[title]


text = MCPServer("text")


@text.tool()
def words(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


mcp.add_tool(words, name="text_words")  # no mount: the sub-app's function, registered again

if __name__ == "__main__":
    mcp.run()
