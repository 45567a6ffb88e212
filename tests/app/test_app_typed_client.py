"""`app.test_client(Client)` is typed as that version's generated `Client` (issue 32, item 6): pyright
strict sees a misspelled method or argument in a test, and the same call runs at 2025-11-25 and
2026-07-28."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_bindings.runtime.app import App
from mcp_bindings.v2025_11_25.client import Client as Client2025
from mcp_bindings.v2026_07_28.client import Client as Client2026
from tests.support.pyright_snippet import strict_errors

pytestmark = pytest.mark.anyio


def make_app() -> App:
    app = App("typed")

    @app.tool
    def add(a: int, b: int) -> int:
        return a + b

    return app


@pytest.mark.parametrize("client_cls", [Client2025, Client2026])
async def test_the_client_class_picks_the_version(client_cls: type[Client2025] | type[Client2026]) -> None:
    async with make_app().test_client(client_cls) as client:
        assert type(client) is client_cls
        result = await client.call_tool(name="add", arguments={"a": 2, "b": 3})
    assert result.structured_content == {"result": 5}


SNIPPET = """
from typing import assert_type

from mcp_bindings.runtime.app import App
from mcp_bindings.v2025_11_25.client import Client
from mcp_bindings.v2025_11_25.models import CallToolResult

app = App("typed")


@app.tool
def add(a: int, b: int) -> int:
    return a + b


async def check() -> None:
    async with app.test_client(Client) as client:
        assert_type(client, Client)
        result = await client.call_tool(name="add", arguments={"a": 2, "b": 3})
        assert_type(result, CallToolResult)
        {mistake}
"""


@pytest.mark.parametrize(
    ("mistake", "reported"),
    [
        ("pass", None),
        ('await client.cal_tool(name="add")', 'Cannot access attribute "cal_tool" for class "Client"'),
        ('await client.call_tool(nme="add")', 'No overloads for "call_tool" match the provided arguments'),
    ],
)
def test_pyright_strict_sees_a_misspelled_call(mistake: str, reported: str | None, tmp_path: Path) -> None:
    errors = strict_errors(tmp_path, SNIPPET.replace("{mistake}", mistake))
    if reported is None:
        assert errors == []
    else:
        assert any(reported in error for error in errors), errors
