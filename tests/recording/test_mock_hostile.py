"""`mcp-bindgen mock` with a lock it did not write (security issue 43, item 1): jsf, which draws the
mock's results, `eval`s `$provider`, `$state` and a string `$fixed`, and opens a `$ref` outside the
schema as a file or URL. A server that lists such an output schema, locked with `lock --from` and
then mocked, or a lock written by hand, must not run code, and a schema the mock cannot draw from is
one error naming the tool, never a traceback."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_bindgen.cli import main
from tests.peers.harness import PEERS

HOSTILE = [sys.executable, str(PEERS / "hostile_lock_server.py")]
RUN = "lambda: (__import__('pathlib').Path('MARKER').write_text('x'), 'sunny')[1]"


async def _call(lock: Path, cwd: Path, tool: str) -> Any:
    from mcp_bindings.runtime.errors import McpError
    from mcp_bindings.runtime.protocol.versions import dump
    from mcp_bindings.runtime.stdio import connect_stdio
    from mcp_bindings.v2025_11_25.client import Client

    command = [sys.executable, "-m", "mcp_bindgen.cli", "mock", str(lock)]
    async with connect_stdio(command, Client, cwd=str(cwd)) as client:
        try:
            return dump(await client.call_tool(name=tool, arguments={"city": "Oslo"}))
        except McpError as exc:
            return exc


def _lock_with(tmp_path: Path, tools: dict[str, dict[str, Any]]) -> Path:
    surface = {
        "serverInfo": {"name": "handwritten"},
        "capabilities": {"tools": {}},
        "tools": [
            {"name": name, "inputSchema": {"type": "object"}, "outputSchema": schema} for name, schema in tools.items()
        ],
    }
    path = tmp_path / "mcp-lock.json"
    path.write_text(json.dumps({"versions": {"2025-11-25": surface}}))
    return path


def test_a_locked_hostile_server_runs_no_code_in_the_mock(tmp_path: Path) -> None:
    lock = tmp_path / "mcp-lock.json"
    assert main(["lock", "-o", str(lock), "--from", *HOSTILE]) == 0
    text = lock.read_text()
    assert "$provider" in text and "$state" in text and "$fixed" in text  # the lock keeps what the server said
    result = anyio.run(_call, lock, tmp_path, "forecast")
    assert list(tmp_path.glob("MARKER*")) == []
    assert isinstance(result, dict), result
    assert set(result["structuredContent"]) <= {"sky", "hours"} and "sky" in result["structuredContent"]


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "$state": {"s": RUN}, "properties": {"a": {"type": "string"}}},
        {"type": "object", "properties": {"a": {"type": "string", "$provider": RUN}}, "required": ["a"]},
        {"type": "object", "properties": {"a": {"type": "array", "$fixed": RUN}}, "required": ["a"]},
        {"type": "object", "properties": {"a": {"anyOf": [{"type": "string", "$provider": RUN}]}}, "required": ["a"]},
    ],
    ids=["state", "provider", "fixed", "nested-provider"],
)
def test_a_handwritten_lock_runs_no_code(tmp_path: Path, schema: dict[str, Any]) -> None:
    result = anyio.run(_call, _lock_with(tmp_path, {"t": schema}), tmp_path, "t")
    assert list(tmp_path.glob("MARKER*")) == []
    assert isinstance(result, dict) and "a" in result["structuredContent"], result


@pytest.mark.parametrize(
    ("schema", "says"),
    [
        ({"type": "object", "properties": {"a": {"type": "array", "minItems": 50000000}}}, "minItems 50000000"),
        (
            {"type": "object", "properties": {"a": {"$ref": "#"}}, "required": ["a"]},
            "no value",
        ),
        ({"type": "object", "properties": {"a": {"$ref": "/etc/passwd#/x"}}}, "only a $ref into the schema"),
        ({"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/s.json#/x"}}}, "only a $ref into"),
        ({"type": "object", "properties": {"a": {"type": "string", "pattern": "(a{1000}){1000}"}}}, "longer than"),
        ({"type": "object", "properties": {"a": {"type": "nonsense"}}}, "not valid JSON Schema"),
        (
            {
                "type": "object",
                "properties": {
                    "a": {"type": "array", "items": {"type": "boolean"}, "minItems": 3, "uniqueItems": True}
                },
                "required": ["a"],
            },
            "no value satisfying",
        ),
    ],
    ids=["huge-minItems", "recursive-ref", "file-ref", "url-ref", "long-pattern", "invalid", "unique-small-domain"],
)
def test_a_schema_the_mock_cannot_draw_from_is_one_error(tmp_path: Path, schema: dict[str, Any], says: str) -> None:
    from mcp_bindings.runtime.errors import McpError

    error = anyio.run(_call, _lock_with(tmp_path, {"t": schema}), tmp_path, "t")
    assert isinstance(error, McpError), error
    assert error.code == -32603 and "the mock cannot answer t:" in str(error) and says in str(error)
    assert "Traceback" not in str(error) and len(str(error)) < 400
