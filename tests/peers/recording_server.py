"""The server the recording tests record (tests/recording/): a few tools on the authoring layer,
one reporting progress and one asking the client's model, over stdio.

    python tests/peers/recording_server.py              # as recorded
    python tests/peers/recording_server.py --changed    # `greet` answers differently (a regression)
    python tests/peers/recording_server.py --http PORT  # Streamable HTTP at http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import sys

from mcp_bindings.runtime.app import App, Context

CHANGED = "--changed" in sys.argv
app = App("recorded", version="1.0")


@app.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@app.tool
def greet(name: str) -> str:
    """Greet someone."""
    return f"Howdy, {name}!" if CHANGED else f"Hello, {name}!"


@app.tool
async def count(steps: int, ctx: Context) -> str:
    """Count, reporting progress at each step."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
    return f"counted to {steps}"


@app.tool
async def ask(question: str, ctx: Context) -> str:
    """Ask the client's model."""
    answer = await ctx.sample(question, max_tokens=50)
    return f"the model said: {answer.text}"


if __name__ == "__main__":
    if "--http" in sys.argv:
        app.run("http", port=int(sys.argv[sys.argv.index("--http") + 1]))
    else:
        app.run()
