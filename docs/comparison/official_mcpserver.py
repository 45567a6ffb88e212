"""The comparison server of docs/authoring.md, on the official SDK's `MCPServer` (mcp==2.3.0).

Its elicitation goes through a `Resolve(...)` dependency, the SDK's way to elicit on every protocol
version (a standalone request up to 2025-11-25, an InputRequiredResult on 2026-07-28).
Runs in the official SDK's environment (tests/interop/test_runtime_interop.py builds one), not this one.
"""

from typing import Annotated

from mcp.server.mcpserver import AcceptedElicitation, Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp_types import Completion, CompletionArgument, CompletionContext, PromptReference, ResourceTemplateReference
from pydantic import BaseModel

mcp = MCPServer("demo", version="1.0")


class Weather(BaseModel):
    city: str
    celsius: float


class Confirm(BaseModel):
    ok: bool


@mcp.tool()
async def weather(city: str, ctx: Context) -> Weather:
    """Current weather of a city."""
    await ctx.info(f"looking up {city}")
    return Weather(city=city, celsius=21.5)


def confirm(path: str) -> Elicit[Confirm]:
    return Elicit(f"Delete {path}?", Confirm)


@mcp.tool()
async def delete(path: str, answer: Annotated[ElicitationResult[Confirm], Resolve(confirm)]) -> str:
    """Delete a file, after asking the user."""
    return f"deleted {path}" if isinstance(answer, AcceptedElicitation) and answer.data.ok else "kept"


@mcp.resource("config://app")
def config() -> str:
    return "debug=false"


@mcp.resource("users://{user_id}/profile")
def profile(user_id: str) -> str:
    return f"profile of {user_id}"


@mcp.prompt()
def review(code: str, language: str) -> str:
    """Ask for a code review."""
    return f"Review this {language} code:\n{code}"


@mcp.completion()
async def complete(
    ref: PromptReference | ResourceTemplateReference, argument: CompletionArgument, context: CompletionContext | None
) -> Completion | None:
    if isinstance(ref, PromptReference) and ref.name == "review" and argument.name == "language":
        return Completion(values=[n for n in ("python", "rust", "typescript") if n.startswith(argument.value)])
    return None


if __name__ == "__main__":
    mcp.run()
