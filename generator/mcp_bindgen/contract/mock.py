"""`mcp-bindgen mock mcp-lock.json`: serve a locked surface on stdio before the real server exists.

The handshake answers with the lock's capabilities and server info at the client's version (when the
lock has it, else the newest the lock has); the lists are the lock's; `tools/call` answers with a
result generated from the tool's `outputSchema` (as `structuredContent`, and as JSON text), or a
text result for a tool without one; `prompts/get` and `resources/read` with a placeholder text.

Data comes from jsf (JSON Schema Faker: a maintained generator covering the usual keywords, $ref,
formats and patterns), seeded per tool and call from `--seed`, so the same seed gives the same
answers; each value is checked against its schema (jsonschema) and drawn again, up to
`ATTEMPTS` times, if it does not satisfy it."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any, cast

import anyio
from jsonschema import Draft202012Validator

from ..errors import BindgenError

ATTEMPTS = 20
HANDSHAKE_VERSIONS_BEFORE = "2026-07-28"  # the stateless era has no initialize; the mock serves handshake versions


class SchemaUnsatisfied(Exception):
    pass


def generate(schema: dict[str, Any], seed: str) -> Any:
    """A value satisfying `schema`, the same for the same `seed`."""
    from faker import Faker
    from jsf import JSF

    validator = Draft202012Validator(schema)
    for attempt in range(ATTEMPTS):
        number = int.from_bytes(hashlib.sha256(f"{seed}/{attempt}".encode()).digest()[:8], "big")
        random.seed(number)
        Faker.seed(number)
        value = JSF(schema).generate()
        if validator.is_valid(value):
            return value
    raise SchemaUnsatisfied(f"no value satisfying the schema was found in {ATTEMPTS} draws")


def load_lock(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BindgenError(
            f"lock file {path} not found: write one with `mcp-bindgen lock -o {path} --from SERVER`"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BindgenError(f"{path} is not a lock file: {exc}") from None
    versions = data.get("versions") if isinstance(data, dict) else None
    if not isinstance(versions, dict):
        raise BindgenError(f"{path} is not a lock file (no `versions`): write one with `mcp-bindgen lock`")
    served = {v: s for v, s in cast("dict[str, Any]", versions).items() if v < HANDSHAKE_VERSIONS_BEFORE}
    if not served:
        raise BindgenError(f"{path} locks no handshake-era version (the mock serves 2024-11-05 to 2025-11-25)")
    return served


class Mock:
    """Answers one client's JSON-RPC messages from a lock."""

    def __init__(self, versions: dict[str, dict[str, Any]], seed: int = 0) -> None:
        self.versions = versions
        self.seed = seed
        self.surface = versions[max(versions)]
        self.calls: dict[str, int] = {}

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        version = asked if asked in self.versions else max(self.versions)
        self.surface = self.versions[version]
        # A lock keeps the server's name, not its version (which changes without the surface changing).
        info = {"name": "mock", "version": "0.0.0+mock", **(self.surface.get("serverInfo") or {})}
        return {"protocolVersion": version, "capabilities": self.surface.get("capabilities", {}), "serverInfo": info}

    def _call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        name = str(params.get("name"))
        tools = {t["name"]: t for t in self.surface.get("tools", [])}
        if name not in tools:
            raise _Error(-32602, f"unknown tool {name!r}: the lock has {', '.join(sorted(tools)) or 'no tools'}")
        count = self.calls[name] = self.calls.get(name, 0) + 1
        seed = f"{self.seed}/{name}/{count}"
        schema = tools[name].get("outputSchema")
        try:
            if isinstance(schema, dict):
                value = generate(cast("dict[str, Any]", schema), seed)
                return {"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": value}
            text = generate({"type": "string", "minLength": 1}, seed)
        except SchemaUnsatisfied as exc:
            raise _Error(-32603, f"the mock cannot answer {name}: {exc}") from None
        return {"content": [{"type": "text", "text": text}]}

    def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        surface = self.surface
        if method == "initialize":
            return self._initialize(params)
        if method == "ping":
            return {}
        lists = {
            "tools/list": "tools",
            "prompts/list": "prompts",
            "resources/list": "resources",
            "resources/templates/list": "resourceTemplates",
        }
        if method in lists:
            return {lists[method]: surface.get(lists[method], [])}
        if method == "tools/call":
            return self._call_tool(params)
        if method == "prompts/get":
            text = f"(mock) prompt {params.get('name')} with {json.dumps(params.get('arguments') or {})}"
            return {"messages": [{"role": "user", "content": {"type": "text", "text": text}}]}
        if method == "resources/read":
            return {"contents": [{"uri": params.get("uri"), "mimeType": "text/plain", "text": "(mock) resource"}]}
        if method == "logging/setLevel":
            return {}
        raise _Error(-32601, f"the mock serves no {method} (it answers what a lock file describes)")


class _Error(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


async def serve_mock(mock: Mock) -> None:
    from mcp_bindings.runtime.stdio.serve import open_stdio_transport

    transport = await open_stdio_transport()
    try:
        while True:
            try:
                frame = await transport.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
            try:
                message = json.loads(frame)
            except ValueError as exc:
                error = {"code": -32700, "message": f"Parse error: {exc}"}
                await transport.send(json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode())
                continue
            if not isinstance(message, dict) or "method" not in message or "id" not in message:
                continue  # notifications and answers need nothing
            message = cast("dict[str, Any]", message)
            params = message.get("params") if isinstance(message.get("params"), dict) else {}
            try:
                reply: dict[str, Any] = {"result": mock.answer(str(message["method"]), cast("dict[str, Any]", params))}
            except _Error as exc:
                reply = {"error": {"code": exc.code, "message": str(exc)}}
            await transport.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], **reply}).encode())
    finally:
        await transport.aclose()
