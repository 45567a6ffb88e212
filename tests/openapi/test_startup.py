"""A generated package starts without building its models (issue 49: GitHub's 1,223 tools listed in
under a second): its tools are listed from the schemas written into it at generation time
(`tool_schemas.json`), and a tool's models are built on its first call, which validates and
answers exactly as the tools of a package without the file (analysed when they are registered)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pydantic
import pytest

from mcp_bindings.runtime.app import App, openapi
from mcp_bindings.runtime.app import signature as signature_module
from tests.openapi.conftest import generate, import_generated

# A call of each kind: arguments refused by the inputSchema, refused by the arguments model only
# (a body whose field is not the model's type), and good ones, with a JSON answer and with none.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_item", {"item_id": "four"}),
    ("get_item", {"item_id": 4, "currency": "NOK", "x-trace": "t-1"}),
    ("create_item", {"body": {"name": ["not", "a", "name"], "price": 1}}),
    ("list_items", {"limit": 2}),
    ("brew", {}),
]


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, str]]:
    """tests/openapi/api_app.py on uvicorn at 127.0.0.1 and the package generated from its
    `/openapi.json`: (the API's URL, the project folder, the package name)."""
    import httpx

    from tests.openapi.api_app import api
    from tests.support.http import serve_in_thread

    with serve_in_thread(api) as url:
        spec = tmp_path_factory.mktemp("spec") / "openapi.json"
        spec.write_bytes(httpx.get(f"{url}/openapi.json").content)
        out = tmp_path_factory.mktemp("startup")
        name = generate(spec, out, "--base-url", url, "--env-prefix", "INVENTORY", name="inventory_startup")
        yield url, out, name


def _models_built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The arguments models the runtime builds from now on (a hook on `signature.create_model`)."""
    built: list[str] = []
    create = signature_module.create_model

    def counted(name: str, /, **fields: Any) -> Any:
        built.append(name)
        return create(name, **fields)

    monkeypatch.setattr(signature_module, "create_model", counted)
    return built


@pytest.mark.anyio
async def test_listing_builds_no_model_and_a_call_then_validates(
    package: tuple[str, Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, out, name = package
    built = _models_built(monkeypatch)
    module: ModuleType = import_generated(out, name)
    async with module.app.test_client("2025-11-25") as client:
        listed = (await client.list_tools()).tools
        assert len(listed) == 13
        assert built == []  # 13 tools registered and listed: no arguments model
        assert [m for m in sys.modules if m.startswith(f"{name}.models.")] == []  # nor any model defined
        assert (out / "src" / name / openapi.TOOL_SCHEMAS).is_file()

        refused = await client.call_tool(name="create_item", arguments={"body": {"name": ["x"], "price": 1}})
        assert refused.is_error is True  # refused by the listed inputSchema: nothing analysed for it
        assert "body" in refused.content[0].text
        assert built == []

        answered = await client.call_tool(name="get_item", arguments={"item_id": 4, "currency": "NOK"})
        assert built == ["get_itemArguments"]  # the first call analyses its tool, and only it
        assert answered.is_error is not True
        assert answered.structured_content is not None and answered.structured_content["id"] == 4
        again = await client.call_tool(name="get_item", arguments={"item_id": 4, "currency": "NOK"})
        assert again.structured_content == answered.structured_content
        assert built == ["get_itemArguments"]  # once per tool


def _serve(src: Path, name: str, version: str) -> list[bytes]:
    """`python -m NAME` on stdio: the raw answer lines of tools/list and of each of CALLS."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "startup-test", "version": "0"},
    }
    stateless = version == "2026-07-28"
    lines: list[dict[str, Any]] = []
    if stateless:
        lines.append({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": meta}})
    else:
        info = {"name": "startup-test", "version": "0"}
        params = {"protocolVersion": version, "capabilities": {}, "clientInfo": info}
        lines.append({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        lines.append({"jsonrpc": "2.0", "method": "notifications/initialized"})
    requests: list[tuple[str, dict[str, Any]]] = [("tools/list", {})]
    requests += [("tools/call", {"name": tool, "arguments": arguments}) for tool, arguments in CALLS]
    for number, (method, params) in enumerate(requests, start=1):
        lines.append({"jsonrpc": "2.0", "id": number, "method": method, "params": {**params, "_meta": meta}})
    env = {**os.environ, "PYTHONPATH": str(src)}
    stdin = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    done = subprocess.run(
        [sys.executable, "-m", name], input=stdin, capture_output=True, timeout=120, env=env, check=False
    )
    answers = {json.loads(line)["id"]: line for line in done.stdout.splitlines() if line.startswith(b"{")}
    assert sorted(answers) == list(range(len(requests) + 1)), done.stderr.decode()[-2000:]
    return [answers[number] for number in range(1, len(requests) + 1)]


@pytest.mark.slow
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_the_same_answers_byte_for_byte_with_the_schemas_written_or_not(
    package: tuple[str, Path, str], tmp_path: Path, version: str
) -> None:
    """Over stdio, the package as generated and the same package without its tool_schemas.json (every
    tool analysed at start-up, as before) answer tools/list and each call with the same bytes."""
    _, out, name = package
    without = tmp_path / "src"
    shutil.copytree(out / "src", without)
    (without / name / openapi.TOOL_SCHEMAS).unlink()
    planned, analysed = _serve(out / "src", name, version), _serve(without, name, version)
    listing = json.loads(planned[0])["result"]["tools"]
    assert len(listing) == 13 and all("inputSchema" in tool for tool in listing)
    assert planned[0] == analysed[0]  # tools/list
    refused = json.loads(planned[1])["result"]
    assert refused["isError"] is True and "item_id" in refused["content"][0]["text"]
    assert json.loads(planned[2])["result"]["structuredContent"]["id"] == 4
    for (tool, arguments), mine, theirs in zip(CALLS, planned[1:], analysed[1:], strict=True):
        assert mine == theirs, (tool, arguments)


def test_schemas_written_by_another_pydantic_are_not_used(tmp_path: Path) -> None:
    server, written = str(tmp_path / "server.py"), tmp_path / openapi.TOOL_SCHEMAS
    assert openapi.tool_schemas(server) == {}  # no file
    written.write_text("not JSON")
    assert openapi.tool_schemas(server) == {}
    tools = {"echo": {"inputSchema": {"type": "object"}}}
    written.write_text(json.dumps({"pydantic": "1.0.0", "tools": tools}))
    assert openapi.tool_schemas(server) == {}
    written.write_text(json.dumps({"pydantic": pydantic.VERSION, "tools": tools}))
    assert openapi.tool_schemas(server) == tools


@pytest.mark.anyio
async def test_a_hand_written_tool_with_schemas_given_is_analysed_on_its_first_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`@app.tool(schemas=...)` is the authoring layer's: listed as given, analysed on the first call,
    a mounted copy too (copying it analyses nothing)."""
    built = _models_built(monkeypatch)
    schemas = {
        "inputSchema": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
        "outputSchema": {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]},
    }
    inner = App("inner")

    @inner.tool(schemas=schemas)
    def double(n: int) -> int:
        return 2 * n

    outer = App("outer")
    outer.mount(inner, namespace="inner")
    async with outer.test_client("2025-11-25") as client:
        (tool,) = (await client.list_tools()).tools
        assert tool.name == "inner_double"
        assert tool.input_schema.model_dump(by_alias=True, exclude_none=True) == schemas["inputSchema"]
        assert built == []
        result = await client.call_tool(name="inner_double", arguments={"n": 21})
        assert result.structured_content == {"result": 42}
        assert built == ["inner_doubleArguments"]  # (the copy is analysed under its own name)
        refused = await client.call_tool(name="inner_double", arguments={"n": "x"})
        assert refused.is_error is True and "$.n" in refused.model_dump()["content"][0]["text"]


def test_a_package_that_does_not_import_is_written_without_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_bindgen.openapi.tool_schemas import with_tool_schemas

    files = {"src/broken/__init__.py": "raise RuntimeError('no runtime here')\n", "README.md": "broken\n"}
    assert with_tool_schemas(files, "broken") == files
    warning = capsys.readouterr().err
    assert "the tools' schemas were not written (RuntimeError: no runtime here)" in warning
