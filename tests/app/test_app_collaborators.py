"""The authoring layer as collaborators (issue #47 item 3): `App` is one class holding its tables
and the objects it delegates to (no mixin base), and the spellings that moved keep working as
deprecated aliases."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.app.serving import Serving

pytestmark = pytest.mark.anyio


def test_app_has_no_mixin_base() -> None:
    assert App.__mro__ == (App, object)
    app = App("plain")
    assert isinstance(app._serving, Serving)  # pyright: ignore[reportPrivateUsage]


async def test_the_handlers_moved_to_serving_keep_a_deprecated_alias() -> None:
    app = App("calc", protocol="2025-11-25")

    @app.tool
    def add(a: int, b: int) -> int:
        return a + b

    params: Any = app._serving.pkg.CallToolRequestParams(name="add", arguments={"a": 1, "b": 2})  # pyright: ignore[reportPrivateUsage]
    async with app.test_client() as client:
        await client.list_tools()
        ctx: Any = None  # a plain tool without a Context parameter never reads it
        with pytest.warns(DeprecationWarning, match="App.serve_call_tool"):
            result = await app.serve_call_tool(params, ctx)  # pyright: ignore[reportDeprecated]
    assert result.structured_content == {"result": 3}
