"""`App(lifespan=...)` and `Depends` (issue 32, item 1): the lifespan entered once while the app
serves and its value reaching the functions (`Context[State].lifespan`); dependencies of every
provider kind (function, coroutine, generator, async generator), nested, made once per request (or
once per app, `scope="app"`), cleaned up after the request whatever it did; kept out of the input
schema; on tools, resources, templates and prompts; refused at registration where they cannot work;
a clear error where the lifespan was not started. At 2025-11-25 and 2026-07-28."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

import pytest

from mcp_bindings.runtime.app import App, AppDefinitionError, Context, Depends, ToolError
from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc.errors import McpError
from tests.support.content import text_of

pytestmark = pytest.mark.anyio

VERSIONS = ["2025-11-25", "2026-07-28"]


@dataclass
class Pool:
    log: list[str] = field(default_factory=list)
    out: int = 0


def build(log: list[str]) -> App:
    @asynccontextmanager
    async def lifespan(app: App) -> AsyncIterator[Pool]:
        log.append("lifespan start")
        yield Pool(log)
        log.append("lifespan stop")

    def settings() -> dict[str, str]:  # a plain function
        log.append("settings")
        return {"prefix": ">"}

    async def client_id() -> str:  # a coroutine function, made once while the app serves
        log.append("client made")
        return "client-1"

    def audit(ctx: Context[Pool]) -> Iterator[list[str]]:  # a generator: clean-up after the yield
        ctx.lifespan.log.append("audit open")
        try:
            yield ctx.lifespan.log
        except ToolError as exc:  # the tool failed: raised at the yield, as in a `with` block
            ctx.lifespan.log.append(f"audit saw {exc}")
            raise
        finally:
            ctx.lifespan.log.append("audit close")

    async def connection(
        ctx: Context[Pool], cfg: Annotated[dict[str, str], Depends(settings)]
    ) -> AsyncIterator[str]:  # an async generator, with a dependency of its own
        ctx.lifespan.out += 1
        try:
            yield f"{cfg['prefix']}conn#{ctx.lifespan.out}"
        finally:
            ctx.lifespan.out -= 1
            log.append("connection returned")

    app = App("deps", lifespan=lifespan)

    @app.tool
    async def query(
        sql: str,
        conn: Annotated[str, Depends(connection)],
        again: Annotated[str, Depends(connection)],  # the same provider twice in one request: made once
        client: Annotated[str, Depends(client_id, scope="app")],
        ctx: Context[Pool],
    ) -> str:
        assert conn is again
        return f"{conn} {client} {sql} out={ctx.lifespan.out}"

    @app.tool
    def fail(audit: Annotated[list[str], Depends(audit)]) -> str:
        audit.append("failing")
        raise ToolError("refused")

    @app.resource("pool://status")
    def status(conn: Annotated[str, Depends(connection)]) -> str:
        return f"status via {conn}"

    @app.resource("pool://rows/{row}")
    def row(row: int, conn: Annotated[str, Depends(connection)]) -> str:
        return f"row {row} via {conn}"

    @app.prompt
    def explain(topic: str, conn: Annotated[str, Depends(connection)]) -> str:
        return f"explain {topic} ({conn})"

    return app


@pytest.mark.parametrize("version", VERSIONS)
async def test_lifespan_and_dependencies(version: str) -> None:
    log: list[str] = []
    app = build(log)
    async with app.test_client(version) as client:
        assert log == ["lifespan start"]
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert sorted(tools["query"].input_schema.properties or {}) == ["sql"]
        assert tools["query"].input_schema.required == ["sql"]
        first = await client.call_tool(name="query", arguments={"sql": "select 1"})
        second = await client.call_tool(name="query", arguments={"sql": "select 2"})
        assert first.content[0].text == ">conn#1 client-1 select 1 out=1"
        assert second.content[0].text == ">conn#1 client-1 select 2 out=1"  # the first was given back
        assert log.count("client made") == 1 and log.count("settings") == 2
        assert log.count("connection returned") == 2
        refused = await client.call_tool(name="fail")
        assert refused.is_error and refused.content[0].text == "refused"
        assert log[-4:] == ["audit open", "failing", "audit saw refused", "audit close"]  # told, then cleaned up
        assert (await client.read_resource(uri="pool://status")).contents[0].text == "status via >conn#1"
        assert (await client.read_resource(uri="pool://rows/7")).contents[0].text == "row 7 via >conn#1"
        prompt = await client.get_prompt(name="explain", arguments={"topic": "joins"})
        assert prompt.messages[0].content.text == "explain joins (>conn#1)"
    assert log[-1] == "lifespan stop" and log.count("lifespan start") == 1


async def test_nested_servings_share_one_lifespan() -> None:
    log: list[str] = []
    app = build(log)
    async with app.test_client("2025-11-25") as one, app.test_client("2026-07-28") as two:
        for client in (one, two):
            result = await client.call_tool(name="query", arguments={"sql": "x"})
            assert text_of(result.content[0]).endswith("client-1 x out=1")
        assert log.count("lifespan start") == 1 and log.count("client made") == 1
    assert log.count("lifespan stop") == 1
    async with app.test_client() as again:  # a new run: a new app-scoped value
        await again.call_tool(name="query", arguments={"sql": "y"})
    assert log.count("lifespan start") == 2 and log.count("client made") == 2


async def test_serving_the_server_object_alone_says_the_lifespan_did_not_start() -> None:
    app = build([])
    version = "2025-11-25"
    client_cls: Any = __import__(f"{registry.load_version(version).__name__}.client", fromlist=["Client"]).Client
    async with connect_in_memory(app.server, client_cls, protocol_version=version) as client:
        result = await client.call_tool(name="query", arguments={"sql": "x"})
        assert result.is_error
        assert "the app's lifespan has not started: serve it with app.run()" in result.content[0].text


def test_providers_that_cannot_work_are_refused_at_registration() -> None:
    app = App("bad")

    def needs_argument(limit: int) -> int:
        return limit

    with pytest.raises(AppDefinitionError, match=r"parameter 'limit' is neither the Context nor a dependency"):

        @app.tool
        def one(value: Annotated[int, Depends(needs_argument)]) -> int:
            return value

    def per_app(ctx: Context) -> int:
        return 1

    with pytest.raises(AppDefinitionError, match=r"scope='app' outlives a request: it cannot take the Context"):

        @app.tool
        def two(value: Annotated[int, Depends(per_app, scope="app")]) -> int:
            return value

    def per_request() -> int:
        return 1

    def per_app_on_request(value: Annotated[int, Depends(per_request)]) -> int:
        return value

    with pytest.raises(AppDefinitionError, match=r"\(scope='app'\) cannot depend on .* \(scope='request'\)"):

        @app.tool
        def three(value: Annotated[int, Depends(per_app_on_request, scope="app")]) -> int:
            return value

    with pytest.raises(ValueError, match=r"Depends\(scope='session'\)"):
        Depends(per_request, scope="session")  # type: ignore[arg-type]


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_failing_provider_is_the_tools_failure(version: str) -> None:
    app = App("broken")

    def unreachable() -> str:
        raise ConnectionError("database unreachable")

    @app.tool
    def lookup(conn: Annotated[str, Depends(unreachable)]) -> str:
        return conn

    async with app.test_client(version) as client:
        result = await client.call_tool(name="lookup")
    assert result.is_error
    assert result.content[0].text.startswith("Error executing tool lookup (an unexpected error")


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_resource_provider_failure_is_an_internal_error(version: str) -> None:
    app = App("broken")

    def unreachable() -> str:
        raise McpError(-32603, "database unreachable")

    @app.resource("db://status")
    def status(conn: Annotated[str, Depends(unreachable)]) -> str:
        return conn

    async with app.test_client(version) as client:
        with pytest.raises(McpError, match="database unreachable"):
            await client.read_resource(uri="db://status")
