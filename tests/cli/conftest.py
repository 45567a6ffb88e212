"""A server file with typed tool arguments, a failing tool, an image, progress, a prompt and
resources: what the `call` / `list` / `read` tests drive (written per test session, run by path)."""

from __future__ import annotations

from pathlib import Path

import pytest

TYPED_SERVER = '''
from mcp_bindings.runtime.app import App, Context, Image, ToolError

app = App("typed", version="2.0", instructions="A server for the CLI tests.")


@app.tool
def add(a: int, b: float, scale: int = 1) -> float:
    """Add two numbers, then scale."""
    return (a + b) * scale


@app.tool
def describe(flag: bool, tags: list[str], limit: int | None = None) -> dict:
    """Echo typed values back with their Python types."""
    return {"flag": flag, "tags": tags, "limit": limit, "types": [type(flag).__name__, type(tags).__name__]}


@app.tool
def fail(reason: str) -> str:
    """Always fails."""
    raise ToolError(f"failed: {reason}")


@app.tool
def picture() -> Image:
    """A 4-byte 'image'."""
    return Image(b"\\x89PNG", "image/png")


@app.tool
async def slow(steps: int, ctx: Context) -> str:
    """Reports progress."""
    for step in range(steps):
        await ctx.report_progress(step + 1, steps, f"step {step + 1}")
    return "done"


@app.resource("config://app")
def config() -> str:
    return "debug=false"


@app.resource("items://{item_id}")
def item(item_id: str) -> str:
    return f"item {item_id}"


@app.prompt
def review(code: str, language: str = "python") -> str:
    """Ask for a code review."""
    return f"Review this {language} code: {code}"
'''


@pytest.fixture(scope="session")
def typed_server(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("servers") / "typed_server.py"
    path.write_text(TYPED_SERVER, encoding="utf-8")
    return path
