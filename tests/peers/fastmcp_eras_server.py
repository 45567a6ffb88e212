"""A server on FastMCP 4.2.3 (PyPI `fastmcp`, `contract_peers.fastmcp()`) for the era tests (issue 30,
tests/interop/test_client_eras.py), over stdio: `weather` logs at three levels, so what
`set_logging_level` lets through is what arrives; `config` is a resource to read."""

from __future__ import annotations

from fastmcp import Context, FastMCP

app = FastMCP("eras-weather-fastmcp")


@app.tool(description="The weather of a city (logs as it goes).")
async def weather(city: str, ctx: Context) -> str:
    await ctx.debug(f"cache miss for {city}")
    await ctx.info(f"looking up {city}")
    await ctx.warning(f"{city} is windy")
    return f"{city}: 21.5"


@app.resource("eras://config", description="A resource to read.")
def config() -> str:
    return "debug=false"


if __name__ == "__main__":
    app.run(show_banner=False)
