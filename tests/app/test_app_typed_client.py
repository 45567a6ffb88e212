"""`app.test_client(Client)` and `app.test_client("<version>")` are typed as that version's generated
`Client` (issue 32, item 6): pyright strict sees a misspelled method or argument in a test, and the
same call runs at 2025-11-25 and 2026-07-28. The negotiated version is typed too
(`client.protocol_version`, a `Literal` of the versions the runtime speaks): a comparison with a
version that does not exist fails pyright strict."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.protocol import registry
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


@pytest.mark.parametrize("version", list(registry.versions()))
async def test_the_negotiated_version_on_the_client(version: str) -> None:
    async with make_app().test_client(version) as client:
        assert client.protocol_version == version


def test_the_known_versions_are_the_literal() -> None:
    """Every version the runtime speaks is in each generated `ProtocolVersion` (and nothing else)."""
    from typing import get_args

    for version in registry.versions():
        module = importlib.import_module(f"{registry.load_version(version).__name__}.client")
        assert list(get_args(module.ProtocolVersion)) == list(registry.versions())


def version_snippet(body: str) -> str:
    """`app.test_client("<version>")` for every version the runtime speaks, then `body` per client."""
    lines = ["from typing import assert_type", "", "from mcp_bindings.runtime.app import App"]
    for version in registry.versions():
        package = registry.load_version(version).__name__
        lines.append(f"from {package}.client import Client as C_{package.rsplit('.', 1)[1]}")
        lines.append(f"from {package}.client import ProtocolVersion as V_{package.rsplit('.', 1)[1]}")
    lines += ["", 'app = App("typed")', "", "", "async def check() -> None:"]
    for version in registry.versions():
        short = registry.load_version(version).__name__.rsplit(".", 1)[1]
        lines.append(f'    async with app.test_client("{version}") as client:')
        lines.append(f"        assert_type(client, C_{short})")
        lines.append(f"        assert_type(client.protocol_version, V_{short})")
        lines += ["        " + line for line in body.splitlines()]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("mistake", "reported"),
    [
        ("pass", None),
        ('if client.protocol_version == "2025-11-26":\n    pass', "Condition will always evaluate to False"),
        ('await client.cal_tool(name="add")', 'Cannot access attribute "cal_tool" for class "Client"'),
        ('await client.call_tool(nme="add")', 'No parameter named "nme"'),  # (2026-07-28: "No overloads ...")
    ],
)
def test_pyright_strict_types_the_client_of_a_version_string(
    mistake: str, reported: str | None, tmp_path: Path
) -> None:
    errors = strict_errors(tmp_path, version_snippet(mistake))
    if reported is None:
        assert errors == []
    else:  # reported for each version's client (one line each)
        alike = ("No overloads for", reported)
        lines = {error.split(":", 1)[0] for error in errors if any(text in error for text in alike)}
        assert len(lines) == len(registry.versions()), errors
