"""The comparison server of docs/authoring.md, on the authoring layer (`mcp_bindings.runtime.app`).

python examples/app_server.py          # stdio; serves clients of every MCP version
"""

from pydantic import BaseModel

from mcp_bindings.runtime.app import Accepted, App, Context

app = App("demo", version="1.0")


class Weather(BaseModel):
    city: str
    celsius: float


@app.tool
async def weather(city: str, ctx: Context) -> Weather:
    """Current weather of a city."""
    await ctx.info(f"looking up {city}")
    return Weather(city=city, celsius=21.5)


@app.tool
async def delete(path: str, ctx: Context) -> str:
    """Delete a file, after asking the user."""
    answer = await ctx.elicit(f"Delete {path}?", bool)
    return f"deleted {path}" if isinstance(answer, Accepted) and answer.data else "kept"


@app.resource("config://app")
def config() -> str:
    return "debug=false"


@app.resource("users://{user_id}/profile")
def profile(user_id: str) -> str:
    return f"profile of {user_id}"


@app.prompt
def review(code: str, language: str) -> str:
    """Ask for a code review."""
    return f"Review this {language} code:\n{code}"


@app.complete(prompt="review", argument="language")
def languages(value: str) -> list[str]:
    return [name for name in ("python", "rust", "typescript") if name.startswith(value)]


if __name__ == "__main__":
    app.run()
