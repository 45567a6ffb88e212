"""Composition (issue 32, item 3): `app.mount(other, namespace=...)` serves another app's tools,
prompts, resources, templates and completions under a namespace, with capabilities merged; live
(what the mounted app registers later is listed, the clients told); the mounted app's lifespan runs
inside the parent's and its functions keep their own lifespan value and dependencies; what cannot
be mounted is refused clearly. At 2025-11-25 and 2026-07-28."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
import pytest

from mcp_bindings.runtime.app import App, AppDefinitionError, Context, Depends
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc.errors import McpError
from tests.support.content import text_of

pytestmark = pytest.mark.anyio

VERSIONS = ["2025-11-25", "2026-07-28"]


def weather_app(events: list[str]) -> App:
    @asynccontextmanager
    async def lifespan(app: App) -> AsyncGenerator[str]:
        events.append("weather start")
        yield "weather-db"
        events.append("weather stop")

    def station(ctx: Context[str]) -> str:
        return f"station@{ctx.lifespan}"

    weather = App("weather", lifespan=lifespan)

    @weather.tool
    def forecast(city: str, source: Annotated[str, Depends(station)]) -> str:
        return f"sunny in {city} (from {source})"

    @weather.resource("weather://cities/{city}")
    def city(city: str) -> str:
        return f"{city}: 21C"

    @weather.resource("weather://about")
    def about() -> str:
        return "a weather service"

    @weather.prompt
    def ask(city: str) -> str:
        return f"What is the weather in {city}?"

    @weather.complete(prompt="ask", argument="city")
    def cities(value: str) -> list[str]:
        return [c for c in ("Oslo", "Osaka", "Paris") if c.startswith(value)]

    return weather


def main_app(events: list[str]) -> App:
    @asynccontextmanager
    async def lifespan(app: App) -> AsyncGenerator[str]:
        events.append("main start")
        yield "main-db"
        events.append("main stop")

    main = App("main", lifespan=lifespan)

    @main.tool
    def hello(ctx: Context[str]) -> str:
        return f"hello from {ctx.lifespan}"

    return main


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_mounted_app_is_served_under_its_namespace(version: str) -> None:
    events: list[str] = []
    main, weather = main_app(events), weather_app(events)
    main.mount(weather, namespace="weather")
    models = registry.load_version(version)
    async with main.test_client(version) as client:
        assert events == ["main start", "weather start"]
        assert set(client.server_capabilities) >= {"tools", "resources", "prompts", "completions"}  # merged
        assert [t.name for t in (await client.list_tools()).tools] == ["hello", "weather_forecast"]
        result = await client.call_tool(name="weather_forecast", arguments={"city": "Oslo"})
        assert result.content[0].text == "sunny in Oslo (from station@weather-db)"  # the mounted app's lifespan
        assert (await client.call_tool(name="hello")).content[0].text == "hello from main-db"
        assert [r.uri for r in (await client.list_resources()).resources] == ["weather://weather/about"]
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["weather://weather/cities/{city}"]
        assert (await client.read_resource(uri="weather://weather/cities/Oslo")).contents[0].text == "Oslo: 21C"
        prompt = await client.get_prompt(name="weather_ask", arguments={"city": "Oslo"})
        assert prompt.messages[0].content.text == "What is the weather in Oslo?"
        done = await client.complete(
            ref=models.PromptReference(type="ref/prompt", name="weather_ask"),
            argument=models.CompleteRequestParamsArgument(name="city", value="Os"),
        )
        assert done.completion.values == ["Oslo", "Osaka"]
        with pytest.raises(McpError, match="Unknown tool: forecast"):
            await client.call_tool(name="forecast", arguments={"city": "Oslo"})
    assert events == ["main start", "weather start", "weather stop", "main stop"]


async def test_a_mounted_app_changes_live() -> None:
    events: list[str] = []
    main, weather = main_app(events), weather_app(events)
    main.mount(weather, namespace="w")
    seen: list[str] = []
    async with main.test_client("2025-11-25", on_notification=lambda method, params: seen.append(method)) as client:

        @weather.tool
        def alerts() -> str:
            return "no alerts"

        with anyio.fail_after(5):
            while "notifications/tools/list_changed" not in seen:
                await anyio.sleep(0.01)
        assert [t.name for t in (await client.list_tools()).tools] == ["hello", "w_forecast", "w_alerts"]
        assert text_of((await client.call_tool(name="w_alerts")).content[0]) == "no alerts"
        assert main.disable("w_forecast") == 1  # kept disabled when the mounted app changes again
        weather.remove_tool("alerts")
        await anyio.sleep(0.05)
        assert [t.name for t in (await client.list_tools()).tools] == ["hello"]
        main.enable("w_forecast")
        assert [t.name for t in (await client.list_tools()).tools] == ["hello", "w_forecast"]


def test_what_cannot_be_mounted_is_refused() -> None:
    events: list[str] = []
    main = main_app(events)
    with pytest.raises(AppDefinitionError, match="cannot be mounted in itself"):
        main.mount(main)
    clash = App("clash")

    @clash.tool
    def hello() -> str:
        return "other hello"

    with pytest.raises(AppDefinitionError, match="'hello' of 'clash' is already registered here; mount it with a"):
        main.mount(clash)
    assert [name for name in main.registries.tools] == ["hello"]
    main.mount(clash, namespace="other")
    with pytest.raises(AppDefinitionError, match="'clash' is already mounted here"):
        main.mount(clash, namespace="again")
    with pytest.raises(AppDefinitionError, match="written against MCP 2025-11-25, this app against 2026-07-28"):
        main.mount(App("old", protocol="2025-11-25"), namespace="old")
    with pytest.raises(AppDefinitionError, match="namespace 'a b' must be letters"):
        main.mount(App("spaced"), namespace="a b")
    with pytest.raises(AppDefinitionError, match="cannot be mounted in itself"):
        clash.mount(main, namespace="loop")


async def test_mounting_a_new_kind_after_serving_is_refused() -> None:
    main = main_app([])
    async with main.test_client():
        prompts_only = App("prompts")

        @prompts_only.prompt
        def ask() -> str:
            return "?"

        with pytest.raises(AppDefinitionError, match="already built without prompts"):
            main.mount(prompts_only, namespace="p")
    _: Any = None


# -- resource updates and subscriptions across a mount ------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_mounted_apps_resource_updates_reach_the_parents_subscribers(version: str) -> None:
    settings = App("settings")

    @settings.resource("config://theme")
    def theme() -> str:
        return "dark"

    @settings.resource("config://users/{name}")
    def user(name: str) -> str:
        return f"user {name}"

    main = App("main")
    main.mount(settings, namespace="s")
    seen: list[tuple[str, int]] = []
    stop = settings._mounting.watch_subscribed(lambda uri, holders: seen.append((uri, holders)))  # pyright: ignore[reportPrivateUsage]
    updates: list[str] = []

    def on_notification(method: str, params: Any) -> None:
        if method == "notifications/resources/updated":
            updates.append(params["uri"])

    with anyio.fail_after(20):
        async with main.test_client(version, on_notification=on_notification) as client:
            uris = ["config://s/theme", "config://s/users/ann", "config://elsewhere"]
            async with anyio.create_task_group() as listening:
                if client.session.stateless:  # the stateless era subscribes on a listen stream
                    listening.start_soon(_listen, client, uris)
                else:
                    for uri in uris:
                        await client.subscribe_resource(uri=uri)
                while len(seen) < 2:  # told under its own URIs; a URI not its own is not told
                    await anyio.sleep(0.01)
                assert sorted(seen) == [("config://theme", 1), ("config://users/ann", 1)]
                assert await settings.resource_updated("config://theme") == 1
                assert await settings.resource_updated("config://users/ann") == 1
                assert await settings.resource_updated("config://users/bob") == 0  # nobody holds it
                with anyio.fail_after(5):
                    while len(updates) < 2:
                        await anyio.sleep(0.01)
                assert sorted(updates) == ["config://s/theme", "config://s/users/ann"]
                if not client.session.stateless:
                    await client.unsubscribe_resource(uri="config://s/theme")
                    assert seen[-1] == ("config://theme", 0)
                listening.cancel_scope.cancel()
        with anyio.fail_after(5):  # the session ended: what it held is let go
            while ("config://users/ann", 0) not in seen:
                await anyio.sleep(0.01)
    stop()
    assert ("config://theme", 0) in seen


async def _listen(client: Any, uris: list[str]) -> None:
    async with client.listen({"resourceSubscriptions": uris}) as stream:
        assert stream.agreed == {"resourceSubscriptions": uris}
        await anyio.sleep_forever()
