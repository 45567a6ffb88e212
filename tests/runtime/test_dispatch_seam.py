"""The dispatch seam (`mcp_bindings.runtime.server.seam`, architecture issue #29 item 3): a feature
registered on the server host from outside the runtime wraps a handler and serves a method of its
own, with no edit of the dispatch core; the runtime's own features (tool schema checks, tasks,
runtime-kept subscriptions, custom methods) are such plug-ins too."""

from __future__ import annotations

import importlib
from typing import Any

import anyio
import pytest

from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.rpc.jsonrpc import Request, dumps
from mcp_bindings.runtime.rpc.session import Session
from mcp_bindings.runtime.server.calls import ServerCall
from mcp_bindings.runtime.server.host import host_for
from mcp_bindings.runtime.server.peer import PeerView
from mcp_bindings.runtime.server.runtime import ServerRuntime
from mcp_bindings.runtime.server.seam import Plan, ServerFeature, ServerNext
from tests.support.seam import echo_server

pytestmark = pytest.mark.anyio
VERSION = "2025-11-25"


class Recording(ServerFeature):
    """Counts tools/call around the handler, upper-cases the echo, and serves `acme/hello` itself."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def serve(self, runtime: ServerRuntime, method: str, spec: Any, view: PeerView) -> Plan | None:
        if method != "acme/hello":
            return None

        async def hello(runtime: ServerRuntime, request: Request, view: PeerView, session: Session) -> bytes:
            return dumps({"hello": view.version})

        return Plan(_hello_spec(), _hello_spec(), False, hello)

    def wrap(self, runtime: ServerRuntime, plan: Plan, view: PeerView) -> None:
        if plan.spec.method == "tools/call":
            plan.wrap(self.recorded)

    async def recorded(self, call: ServerCall, next: ServerNext) -> object:
        assert call.raw is not None
        self.calls.append(str(call.raw["name"]))
        result: Any = await next(call)
        result.content[0].text = result.content[0].text.upper()
        return result


def _hello_spec() -> Any:
    from mcp_bindings.runtime.protocol.custom_methods import request

    return request("acme/hello", None, None, extension="com.acme/hello").spec


async def test_a_feature_registered_from_outside_wraps_a_handler_and_serves_a_method() -> None:
    server = echo_server()
    feature = Recording()
    host_for(server).use(feature)
    client_module: Any = importlib.import_module("mcp_bindings.v2025_11_25.client")
    with anyio.fail_after(10):
        async with connect_in_memory(server, client_module.Client, protocol_version=VERSION) as client:
            await client.list_tools()
            result = await client.call_tool(name="echo", arguments={"text": "hi"})
            assert result.content[0].text == "HI"
            assert await client.session.session.request("acme/hello", None) == {"hello": VERSION}
    assert feature.calls == ["echo"]


async def test_the_runtime_features_are_plugins_on_the_seam() -> None:
    server = echo_server()
    runtime = ServerRuntime(server)
    names = [type(feature).__name__ for feature in runtime.features]
    assert names[:4] == ["CustomMethods", "RuntimeSubscriptions", "ToolChecks", "Tasks"]
    # the tool schema checks still run, as a wrapper: a bad argument is refused before the handler
    client_module: Any = importlib.import_module("mcp_bindings.v2025_11_25.client")
    with anyio.fail_after(10):
        async with connect_in_memory(server, client_module.Client, protocol_version=VERSION) as client:
            await client.list_tools()
            result = await client.call_tool(name="echo", arguments={"text": 1})
            assert result.is_error
