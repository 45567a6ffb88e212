"""A stub handler with the wrong shape is refused when its class is defined (issue 34), naming the
class, the handler, its method and the signature to write; it used to fail every call as -32603."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_bindings.runtime.rpc.errors import StubDefinitionError
from mcp_bindings.v2025_11_25 import client as client_stub
from mcp_bindings.v2025_11_25 import server as server_stub


def test_a_handler_without_ctx_is_refused_at_class_definition() -> None:
    with pytest.raises(StubDefinitionError) as caught:

        class Tools(server_stub.Server):
            async def call_tool(self, params: Any) -> Any:  # type: ignore[override]
                return None

    message = str(caught.value)
    assert "Tools.call_tool (the handler of tools/call) takes (self, params)" in message
    assert "async def call_tool(self, params, ctx)" in message


def test_a_handler_that_is_not_async_is_refused() -> None:
    with pytest.raises(StubDefinitionError, match=r"Tools\.list_tools .* is not async; define async def list_tools"):

        class Tools(server_stub.Server):
            def list_tools(self, params: Any, ctx: Any) -> Any:  # type: ignore[override]
                return None


def test_a_client_handler_is_checked_too() -> None:
    with pytest.raises(StubDefinitionError, match=r"Sampler\.create_message .*sampling/createMessage"):

        class Sampler(client_stub.ClientHandlers):
            async def create_message(self) -> Any:  # type: ignore[override]
                return None


def test_handlers_of_the_right_shape_and_other_methods_pass() -> None:
    class Tools(server_stub.Server):
        async def call_tool(self, params: Any, ctx: Any, *extra: Any) -> Any:
            return None

        async def list_tools(self, params: Any, ctx: Any = None) -> Any:
            return None

        def helper(self) -> int:  # not a handler: not checked
            return 1

    assert Tools().helper() == 1
