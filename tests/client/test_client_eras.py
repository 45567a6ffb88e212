"""Typed calls across eras (issue 30): with `protocol_version="auto"` a client written on either
stub may land on either lifecycle era; a call's availability, params and result follow the
negotiated version, the stub only chooses the Python types (`client.eras`).

Against the project's own `App` in memory, restricted to one era (`supported_versions`), so that
`auto` negotiates it: the 2025-11-25 handshake or the 2026-07-28 stateless era.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.app import App, Context
from mcp_bindings.runtime.app.testing import client_handlers
from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.rpc.errors import McpError, NotExpressible
from mcp_bindings.v2025_11_25 import client as client_25
from mcp_bindings.v2025_11_25 import models as m25
from mcp_bindings.v2026_07_28 import client as client_26
from mcp_bindings.v2026_07_28 import models as m26

pytestmark = pytest.mark.anyio
LIMIT = 20
HANDSHAKE, STATELESS = "2025-11-25", "2026-07-28"
STUBS = {HANDSHAKE: client_25.Client, STATELESS: client_26.Client}
PAIRS = [(stub, era) for stub in STUBS for era in (HANDSHAKE, STATELESS)]

app = App("eras", version="1.0")


@app.tool
async def weather(city: str, ctx: Context) -> str:
    await ctx.debug(f"cache miss for {city}")
    await ctx.info(f"looking up {city}")
    await ctx.warning(f"{city} is windy")
    return f"{city}: 21.5"


@app.resource("config://app")
def config() -> str:
    return "debug=false"


def connect(stub: str, era: str, **hooks: Any) -> Any:
    """A client on `stub`'s types, in `auto`, to the app serving only `era`."""
    handlers = client_handlers(stub, **hooks) if hooks else None
    return connect_in_memory(
        app.server, STUBS[stub], handlers=handlers, protocol_version="auto", supported_versions=[era]
    )


@pytest.mark.parametrize(("stub", "era"), PAIRS)
async def test_set_logging_level_follows_the_session_not_the_stub(stub: str, era: str) -> None:
    logs: list[Any] = []
    with anyio.fail_after(LIMIT):
        async with connect(stub, era, on_log=lambda params: logs.append(versions.dump(params))) as client:
            assert client.session.version == era
            await client.set_logging_level("warning")
            await client.call_tool(name="weather", arguments={"city": "Oslo"})
            await client.set_logging_level("info")  # a lower level: one more message comes through
            await client.call_tool(name="weather", arguments={"city": "Bergen"})
            # logging/setLevel went out at 2025-11-25 only; at 2026-07-28 each request carries the level.
            assert (client.session.log_level is None) == (era == HANDSHAKE)
    assert [entry["data"] for entry in logs] == ["Oslo is windy", "looking up Bergen", "Bergen is windy"]


@pytest.mark.parametrize(("stub", "era"), PAIRS)
async def test_ping_where_the_session_has_it(stub: str, era: str) -> None:
    with anyio.fail_after(LIMIT):
        async with connect(stub, era) as client:
            if era == HANDSHAKE:
                await client.ping()
            else:
                with pytest.raises(NotExpressible, match=f"ping does not exist in MCP {STATELESS}") as raised:
                    await client.ping()
                assert raised.value.version == STATELESS


@pytest.mark.parametrize(("stub", "era"), PAIRS)
async def test_subscribe_resource_on_a_handshake_session_from_either_stub(stub: str, era: str) -> None:
    updates: list[tuple[str, Any]] = []
    with anyio.fail_after(LIMIT):
        async with connect(stub, era, on_notification=lambda method, params: updates.append((method, params))) as c:
            if era == STATELESS:
                with pytest.raises(NotExpressible, match=f"resources/subscribe does not exist in MCP {STATELESS}"):
                    await c.subscribe_resource(uri="config://app")
                return
            await c.subscribe_resource(uri="config://app")
            assert await app.resource_updated("config://app") == 1
            while not updates:
                await anyio.sleep(0.01)
            await c.unsubscribe_resource(uri="config://app")
    assert updates[0][0] == "notifications/resources/updated"
    assert versions.dump(updates[0][1])["uri"] == "config://app"


@pytest.mark.parametrize(("stub", "era"), PAIRS)
async def test_listen_on_a_stateless_session_yields_the_stubs_types(stub: str, era: str) -> None:
    with anyio.fail_after(LIMIT):
        async with connect(stub, era) as client:
            if era == HANDSHAKE:
                with pytest.raises(NotExpressible, match=f"subscriptions/listen does not exist in MCP {HANDSHAKE}"):
                    async with client.listen({"resourceSubscriptions": ["config://app"]}):
                        pass
                return
            async with client.listen({"resourceSubscriptions": ["config://app"]}) as stream:
                assert await app.resource_updated("config://app") == 1
                notification = await anext(aiter(stream))
    expected = m25.ResourceUpdatedNotification if stub == HANDSHAKE else m26.ResourceUpdatedNotification
    assert type(notification) is expected
    assert notification.params.uri == "config://app"


async def test_the_other_eras_tasks_are_refused_naming_the_session_version() -> None:
    with anyio.fail_after(LIMIT):
        async with connect(STATELESS, STATELESS) as client:
            with pytest.raises(NotExpressible, match=f"tasks/get does not exist in MCP {STATELESS}"):
                await client.get_task(task_id="t1")
        async with connect(STATELESS, HANDSHAKE) as client:
            # 2025-11-25 has tasks/list: sent, and this server advertises no tasks (a capability error).
            with pytest.raises(McpError, match="tasks"):
                await client.list_tasks()


@pytest.mark.parametrize("stub", [HANDSHAKE, STATELESS])
async def test_a_bad_level_is_an_invalid_param_from_either_stub(stub: str) -> None:
    with anyio.fail_after(LIMIT):
        async with connect(stub, STATELESS) as client:
            with pytest.raises(McpError) as raised:
                await client.set_logging_level("loud")  # type: ignore[arg-type]
                await client.list_tools()  # the 2026-07-28 stub: checked with the next request's `_meta`
    assert raised.value.code == -32602 and "evel: Input should be 'alert'" in raised.value.message


async def test_a_param_the_session_cannot_carry_is_refused_before_it_is_sent() -> None:
    sent: list[str] = []

    class Spy:
        def wrap(self, spec: Any, send: Any) -> Any:
            async def spy(call: Any) -> Any:
                sent.append(call.method)
                return await send(call)

            return spy

    with anyio.fail_after(LIMIT):
        async with connect_in_memory(
            app.server, client_26.Client, protocol_version="auto", supported_versions=[HANDSHAKE], hooks=[Spy()]
        ) as client:
            runtime = client.session
            spec = runtime.stub.client_requests["tools/call"]  # 2026-07-28's: it has `requestState`
            with pytest.raises(NotExpressible, match=f"tools/call in MCP {HANDSHAKE}.*params.requestState") as raised:
                await runtime.call(spec, {"name": "weather", "arguments": {"city": "Oslo"}, "requestState": "s"})
            assert raised.value.version == HANDSHAKE
            listed = await client.list_tools()  # the stub's type, crossed from 2025-11-25's result
    assert type(listed) is m26.ListToolsResult and sent == ["tools/list"]
