"""An authoring-layer server whose tool reports its progress with `ctx.progress(total)`, for the
official SDK client to receive (tests/app/test_app_progress.py): over stdio as a script, or over
Streamable HTTP through `app.asgi()`."""

from __future__ import annotations

from mcp_bindings.runtime.app import App, Context

app = App("progress", version="1.0")


@app.tool
async def count(steps: int, ctx: Context) -> str:
    """Count to `steps`, one progress notification per step."""
    progress = ctx.progress(total=steps)
    for step in range(1, steps + 1):
        await progress.advance(message=f"step {step}")
    return f"counted to {steps}"


if __name__ == "__main__":
    app.run()
