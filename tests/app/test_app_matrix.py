"""The authoring layer's comparison server (examples/app_server.py: two tools, one with structured
output; a static resource and a template; a prompt with completion; logging; an elicitation inside a
tool) driven by real clients at every protocol version, over stdio and Streamable HTTP:

- the official MCP Python SDK client (mcp==2.3.0, tests/peers/sdk_app_client.py, in the SDK venv
  the interop tests build): every handshake version pinned by hand, and 2026-07-28 with the SDK's
  `Client(mode="2026-07-28")`, which answers the tool's elicitation through `InputRequiredResult`;
- the official TypeScript SDK client (@modelcontextprotocol/sdk, the copy the conformance harness
  pins in .cache/conformance; tests/peers/ts_app_client.mjs) at every handshake version (1.x has no
  2026-07-28);
- our own generated client of each version (`connect_stdio` / `connect_http`).

The handler asks with one `ctx.elicit(...)` and has no version-specific code: the test checks the
question reached each client (a real `elicitation/create` request, or an input request) and the
answer came back into the tool. 2024-11-05 and 2025-03-26 have no elicitation: there the tool's ask
is refused with an error naming the version, and the rest of the scenario runs as on the others.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from typing import Any

import pytest

from mcp_bindings.runtime.app.testing import client_handlers
from mcp_bindings.runtime.client.http import connect_http
from mcp_bindings.runtime.protocol import registry, versions
from mcp_bindings.runtime.stdio.connect import connect_stdio
from tests.peers.harness import HANDSHAKE_VERSIONS, PEERS
from tests.support import REPO_ROOT
from tests.support.http import serve_in_thread
from tests.support.sdk import TS_SDK, node_with_ts_sdk

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.interop]

SERVER = REPO_ROOT / "examples" / "app_server.py"
VERSIONS = [*HANDSHAKE_VERSIONS, "2026-07-28"]
TRANSPORTS = ["stdio", "http"]
ELICITATION = "2025-06-18"  # the first version with elicitation/create


def fresh_app() -> Any:
    """A new instance of the example's `app` (its own server object and state), loaded from the file."""
    spec = importlib.util.spec_from_file_location(f"app_server_{id(object())}", SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.app


_reports: dict[tuple[str, str], dict[str, Any]] = {}


def reports(peer: str, transport: str, argv: list[str], server_argv: list[str]) -> dict[str, Any]:
    """{version: report} of one peer process running the scenario at every version (one process per
    peer and transport keeps the matrix quick); stdio spawns the server per version, HTTP serves
    one fresh app to them all."""
    key = (peer, transport)
    if key not in _reports:
        if transport == "http":
            with serve_in_thread(fresh_app().asgi()) as base:
                done = subprocess.run([*argv, base + "/mcp"], capture_output=True, text=True, timeout=240)
        else:
            done = subprocess.run(
                [*argv, *server_argv, sys.executable, str(SERVER)],
                capture_output=True,
                text=True,
                timeout=240,
                cwd=str(REPO_ROOT),
            )
        assert done.returncode == 0, f"the {peer} client failed:\n{done.stderr[-3000:]}"
        _reports[key] = json.loads(done.stdout.strip().splitlines()[-1])
    return _reports[key]


def text(result: dict[str, Any]) -> str:
    assert "content" in result, result
    return str(result["content"][0]["text"])


def check(report: dict[str, Any], version: str) -> None:
    """What every client must have seen (the SDK peers' reports have the same shape)."""
    assert report["initialize"]["protocolVersion"] == version
    tools = {t["name"]: t for t in report["tools"]["tools"]}
    assert sorted(tools) == ["delete", "weather"]
    assert tools["weather"]["inputSchema"]["required"] == ["city"]
    weather = report["weather"]
    assert json.loads(text(weather)) == {"city": "Oslo", "celsius": 21.5}
    if version >= "2025-06-18":  # structured output exists from 2025-06-18 on
        assert tools["weather"]["outputSchema"]["required"] == ["city", "celsius"]
        assert weather["structuredContent"] == {"city": "Oslo", "celsius": 21.5}
    else:
        assert "outputSchema" not in tools["weather"] and "structuredContent" not in weather
    assert report["weather_bad"]["isError"] is True and "city" in text(report["weather_bad"])
    if version < ELICITATION:
        error = report["delete"].get("mcp_error") or report["delete"].get("error") or {}
        assert version in error.get("message", "") and "elicitation/create" in error["message"]
        assert report["asked"] == []
    else:
        assert text(report["delete"]) == "deleted /tmp/x"
        [asked] = report["asked"]
        assert asked["message"] == "Delete /tmp/x?"
        assert asked["requestedSchema"]["properties"]["value"]["type"] == "boolean"
    assert [r["uri"] for r in report["resources"]["resources"]] == ["config://app"]
    assert [t["uriTemplate"] for t in report["templates"]["resourceTemplates"]] == ["users://{user_id}/profile"]
    assert report["config"]["contents"][0]["text"] == "debug=false"
    assert report["profile"]["contents"][0]["text"] == "profile of ada"
    assert report["review"]["messages"][0]["content"]["text"] == "Review this python code:\nx = 1"
    if version != "2024-11-05":
        assert report["complete"]["completion"]["values"] == ["typescript"]
    assert report["logs"] == ["looking up Oslo"]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("version", VERSIONS)
def test_official_sdk_client(sdk_python: str, version: str, transport: str) -> None:
    argv = [sdk_python, str(PEERS / "sdk_app_client.py"), *(f"--version={v}" for v in VERSIONS)]
    if transport == "http":
        argv.append("--url")
    check(reports("python-sdk", transport, argv, ["--"])[version], version)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)  # the TypeScript SDK 1.x has no 2026-07-28
def test_typescript_sdk_client(version: str, transport: str) -> None:
    node = node_with_ts_sdk()
    argv = [node, str(PEERS / "ts_app_client.mjs"), str(TS_SDK), ",".join(HANDSHAKE_VERSIONS), transport]
    check(reports("typescript-sdk", transport, argv, [])[version], version)


async def own_scenario(client: Any, version: str, asked: list[Any], logs: list[Any]) -> None:
    await client.set_logging_level("info")  # logging/setLevel, or (2026-07-28) the level each request carries
    weather = versions.dump(await client.call_tool(name="weather", arguments={"city": "Oslo"}))
    assert json.loads(text(weather)) == {"city": "Oslo", "celsius": 21.5}
    assert ("structuredContent" in weather) == (version >= "2025-06-18")
    delete = client.call_tool(name="delete", arguments={"path": "/tmp/x"})
    if version < ELICITATION:
        with pytest.raises(Exception, match="elicitation/create"):
            await delete
    else:
        assert text(versions.dump(await delete)) == "deleted /tmp/x"
        assert len(asked) == 1 and asked[0][0] == "Delete /tmp/x?"
    profile = versions.dump(await client.read_resource(uri="users://ada/profile"))
    assert profile["contents"][0]["text"] == "profile of ada"
    review = versions.dump(await client.get_prompt(name="review", arguments={"code": "x = 1", "language": "python"}))
    assert review["messages"][0]["content"]["text"] == "Review this python code:\nx = 1"
    if version != "2024-11-05":
        ref = {"type": "ref/prompt", "name": "review"}
        done = versions.dump(await client.complete(ref=ref, argument={"name": "language", "value": "py"}))
        assert done["completion"]["values"] == ["python"]
    assert [entry.get("data") for entry in logs] == ["looking up Oslo"]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("version", VERSIONS)
async def test_own_client(version: str, transport: str) -> None:
    asked: list[Any] = []
    logs: list[Any] = []

    def elicit(message: str, schema: dict[str, Any]) -> bool:
        asked.append((message, schema))
        return True

    handlers = client_handlers(version, elicit=elicit, on_log=lambda params: logs.append(versions.dump(params)))
    client_cls = importlib.import_module(f"{registry.load_version(version).__name__}.client").Client
    if transport == "stdio":
        command = [sys.executable, str(SERVER)]
        async with connect_stdio(
            command, client_cls, handlers=handlers, protocol_version=version, cwd=str(REPO_ROOT)
        ) as client:
            await own_scenario(client, version, asked, logs)
    else:
        with serve_in_thread(fresh_app().asgi()) as base:
            async with connect_http(base + "/mcp", client_cls, handlers=handlers, protocol_version=version) as client:
                await own_scenario(client, version, asked, logs)
