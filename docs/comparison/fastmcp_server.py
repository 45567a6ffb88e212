"""The comparison server of docs/authoring.md, on FastMCP 4.2.3 (`pip install fastmcp==4.2.3`).

Written from FastMCP's documentation and sources (`@mcp.completion` is its server-level completion
handler); run by tests/interop/test_comparison_servers.py, and pyright-strict-clean with FastMCP
installed.
"""

from fastmcp import Context, FastMCP
from fastmcp.server.elicitation import AcceptedElicitation
from mcp_types import CompletionArgument, CompletionContext, PromptReference, ResourceTemplateReference
from pydantic import BaseModel

mcp = FastMCP("demo", version="1.0")


class Weather(BaseModel):
    city: str
    celsius: float


@mcp.tool
async def weather(city: str, ctx: Context) -> Weather:
    """Current weather of a city."""
    await ctx.info(f"looking up {city}")
    return Weather(city=city, celsius=21.5)


@mcp.tool
async def delete(path: str, ctx: Context) -> str:
    """Delete a file, after asking the user."""
    answer = await ctx.elicit(f"Delete {path}?", response_type=bool)
    return f"deleted {path}" if isinstance(answer, AcceptedElicitation) and answer.data else "kept"


@mcp.resource("config://app")
def config() -> str:
    return "debug=false"


@mcp.resource("users://{user_id}/profile")
def profile(user_id: str) -> str:
    return f"profile of {user_id}"


@mcp.prompt
def review(code: str, language: str) -> str:
    """Ask for a code review."""
    return f"Review this {language} code:\n{code}"


@mcp.completion
def complete(
    ref: PromptReference | ResourceTemplateReference, argument: CompletionArgument, context: CompletionContext | None
) -> list[str] | None:
    if isinstance(ref, PromptReference) and ref.name == "review" and argument.name == "language":
        return [n for n in ("python", "rust", "typescript") if n.startswith(argument.value)]
    return None


if __name__ == "__main__":
    mcp.run()
