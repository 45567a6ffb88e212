"""The typed client's discovery methods (`client.search_tools`, `list_groups`, `tools_in_group`) and
`mcp-bindgen list tools --search / --group`, `list groups`, `call` of a tool found behind a tool
search and `inspect`'s groups, against servers in their own processes (stdio, and Streamable HTTP
on 127.0.0.1 served by `mcp-bindgen run`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_bindings.runtime.client.discovery import SearchError, declare_groups
from mcp_bindings.runtime.stdio import connect_stdio
from mcp_bindings.v2026_07_28.client import Client, ClientHandlers
from tests.support.cli import SCRIPT, bindgen, served

pytestmark = pytest.mark.anyio

SERVERS = '''
from mcp_bindings.runtime.app import App
from mcp_bindings.runtime.discovery import Group, Groups, ToolSearch

VERBS = ("list", "get", "create", "update", "delete")
RESOURCES = ("invoice", "customer", "order", "shipment", "product", "coupon", "payment", "webhook")


def catalog(app: App) -> App:
    for i in range(200):
        verb, resource = VERBS[i % 5], RESOURCES[(i // 5) % len(RESOURCES)]
        name = f"{verb}_{resource}_{i}"

        def fn(name: str = name) -> str:
            return f"called {name}"

        app.tool(name=name, description=f"{verb.capitalize()} a {resource} (variant {i}).")(fn)

    @app.tool
    def rotate_signing_keys(keyring: str, grace_period_days: int = 7) -> str:
        """Rotate the cryptographic signing keys of a keyring, keeping the old ones valid for a grace period."""
        return f"rotated {keyring!r} ({grace_period_days} days)"

    @app.tool
    def ping() -> str:
        """Check that the server answers."""
        return "pong"

    return app


searching = catalog(App("searching", version="1.0", extensions=[ToolSearch(pinned=["ping"])]))

grouped = App(
    "grouped",
    version="1.0",
    extensions=[Groups([Group("finance", title="Finance"), Group("billing", parents=["finance"]), Group("ops")])],
)


@grouped.tool(group="billing")
def refund(order: str) -> str:
    """Refund an order."""
    return f"refunded {order}"


@grouped.tool(group="finance")
def balance() -> int:
    """The account's balance."""
    return 42


@grouped.tool(group="ops")
def restart(service: str) -> str:
    """Restart a service."""
    return f"restarted {service}"
'''


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("discovery") / "servers.py"
    path.write_text(SERVERS)
    return path


@pytest.fixture(scope="module")
def searching_url(servers: Path) -> Iterator[str]:
    with served(["run", f"{servers}:searching"]) as (url, _process):
        yield url


def ok_json(*args: str | Path) -> dict[str, Any]:
    done = bindgen(*args, "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def refused(code: int, *args: str | Path) -> str:
    """The one `mcp-bindgen:` line of a command that exits with `code` (no traceback)."""
    done = bindgen(*args)
    assert done.returncode == code, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    [line] = [line for line in done.stderr.splitlines() if line.startswith("mcp-bindgen:")]
    return line


async def test_the_typed_client_searches_a_server_in_its_own_process(servers: Path) -> None:
    async with connect_stdio([str(SCRIPT), "run", f"{servers}:searching"], Client) as client:
        found = await client.search_tools("rotate the signing keys of a keyring", limit=3)
        assert found[0].name == "rotate_signing_keys"
        assert set(found[0].input_schema.properties or {}) == {"keyring", "grace_period_days"}
        matched = await client.search_tools(r"^delete_webhook_\d+$", mode="regex", limit=20)
        assert [t.name for t in matched] == [f"delete_webhook_{i}" for i in range(39, 200, 40)]
        with pytest.raises(SearchError, match="not a regular expression"):
            await client.search_tools("(unclosed", mode="regex")


async def test_the_typed_client_lists_groups_and_their_tools(servers: Path) -> None:
    handlers = ClientHandlers()
    declare_groups(handlers)
    async with connect_stdio([str(SCRIPT), "run", f"{servers}:grouped"], Client, handlers=handlers) as client:
        assert [g.name for g in await client.list_groups()] == ["finance", "billing", "ops"]
        assert [t.name for t in await client.tools_in_group("finance")] == ["refund", "balance"]
        assert [t.name for t in await client.tools_in_group("finance", nested=False)] == ["balance"]


@pytest.mark.slow  # several mcp-bindgen processes, each starting a server
def test_list_tools_search_over_stdio_and_http(servers: Path, searching_url: str) -> None:
    for server in (f"{servers}:searching", searching_url):
        tools = ok_json("list", "tools", server, "--search", "rotate signing keys", "--limit", "2")["tools"]
        assert tools[0]["name"] == "rotate_signing_keys"
        assert "keyring" in tools[0]["inputSchema"]["properties"]
    listed = ok_json("list", "tools", searching_url)["tools"]
    assert [t["name"] for t in listed] == ["ping", "search_tools", "describe_tool", "call_tool"]
    regex = ok_json("list", "tools", searching_url, "--search", "^create_coupon_", "--regex")["tools"]
    assert [t["name"] for t in regex] == [f"create_coupon_{i}" for i in (27, 67, 107, 147, 187)]
    people = bindgen("list", "tools", searching_url, "--search", "rotate signing keys")
    assert people.returncode == 0, people.stderr
    assert people.stdout.splitlines()[1].split()[:3] == ["rotate_signing_keys", "keyring*:", "string,"]


@pytest.mark.slow  # several mcp-bindgen processes, each starting a server
def test_call_types_a_found_tools_arguments_from_its_definition(searching_url: str) -> None:
    # keyring is a string: typed from the definition describe_tool answers, "2024" stays a string
    done = bindgen("call", searching_url, "rotate_signing_keys", "keyring=2024", "grace_period_days=3")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "rotated '2024' (3 days)"


@pytest.mark.slow  # several mcp-bindgen processes, each starting a server
def test_list_groups_and_tools_by_group(servers: Path) -> None:
    server = f"{servers}:grouped"
    assert [t["name"] for t in ok_json("list", "tools", server, "--group", "finance")["tools"]] == ["refund", "balance"]
    assert [t["name"] for t in ok_json("list", "tools", server, "--group", "ops")["tools"]] == ["restart"]
    groups = bindgen("list", "groups", server)
    assert groups.returncode == 0, groups.stderr
    assert [line.split()[:3] for line in groups.stdout.splitlines()] == [
        ["GROUP", "TITLE", "IN"],
        ["finance", "Finance"],
        ["billing", "finance"],
        ["ops"],
    ]
    report = ok_json("inspect", server)
    assert [g["name"] for g in report["groups"]] == ["finance", "billing", "ops"]
    # a plain list is what it was without the extension: no membership in `_meta`
    assert all("_meta" not in t for t in ok_json("list", "tools", server)["tools"])


@pytest.mark.slow  # several mcp-bindgen processes, each starting a server
def test_refusals_name_what_is_missing(servers: Path) -> None:
    grouped, searching = f"{servers}:grouped", f"{servers}:searching"
    assert "no group 'nope' (it has: finance, billing, ops)" in refused(3, "list", "tools", grouped, "--group", "nope")
    assert "lists no search_tools tool" in refused(3, "list", "tools", grouped, "--search", "refund")
    assert "offers no groups" in refused(3, "list", "tools", searching, "--group", "finance")
    assert "not a regular expression" in refused(1, "list", "tools", searching, "--search", "(x", "--regex")
    assert "not of prompts" in refused(2, "list", "prompts", grouped, "--group", "finance")
    assert "not both" in refused(2, "list", "tools", grouped, "--group", "a", "--search", "b")
    assert "go with --search" in refused(2, "list", "tools", grouped, "--regex")
