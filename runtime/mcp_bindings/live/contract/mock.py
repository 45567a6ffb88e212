"""`mcp-bindgen mock mcp-lock.json`: serve a locked surface before the real server exists, on stdio
or Streamable HTTP, to clients of every version the runtime has, both eras.

The runtime serves it (`recording.answering.answering_server`: a stub of the lock's newest version
with the lock's capabilities and server name): the handshake or `server/discover`, the version
crossing and the stateless era's per-request fields are its own. Each answer comes from the lock's
surface at the client's version (when the lock has it, else the newest the lock has): the lists are
the lock's; `tools/call` answers with a result generated from the tool's `outputSchema` (as
`structuredContent`, and as JSON text), or a text result for a tool without one; `prompts/get` and
`resources/read` with a placeholder text.

Data comes from `fake.generate` (jsf, on a copy of the schema without the keywords jsf would run
as code, checked against the schema as written), seeded per tool and call from `--seed`, so the
same seed gives the same answers. A lock is untrusted input: `fake`'s doc says what it refuses, and
`load_lock` refuses to start on a lock whose lists, capabilities or server info are not what the
version's models accept (one sentence naming the file and the field), rather than answer -32603 to
each call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from mcp_bindgen.errors import BindgenError
from mcp_bindings.v2025_11_25 import names as v2025
from mcp_bindings.v2026_07_28 import names as v2026

from .fake import SchemaUnsatisfied, generate

LISTS = v2026.LISTS  # list request -> its result's list field (generated from the schema)
# Requests a lock describes nothing of, answered with an empty result.
EMPTY = frozenset({v2025.LOGGING_SET_LEVEL, v2025.RESOURCES_SUBSCRIBE, v2025.RESOURCES_UNSUBSCRIBE})


def load_lock(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BindgenError(
            f"lock file {path} not found: write one with `mcp-bindgen lock -o {path} --from SERVER`"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BindgenError(f"{path} is not a lock file: {exc}") from None
    except RecursionError:
        raise BindgenError(f"{path} is not a lock file: it nests arrays or objects too deeply to read") from None
    versions = data.get("versions") if isinstance(data, dict) else None
    if not isinstance(versions, dict):
        raise BindgenError(f"{path} is not a lock file (no `versions`): write one with `mcp-bindgen lock`")
    from mcp_bindings.runtime.protocol import registry

    known = set(registry.versions())
    served = {v: s for v, s in cast("dict[str, Any]", versions).items() if v in known}
    if not served:
        have = ", ".join(sorted(known))
        raise BindgenError(f"{path} locks no protocol version this runtime serves ({have}): lock the server again")
    for version, surface in served.items():
        check_surface(path, version, surface)
    return served


def check_surface(path: Path, version: str, surface: Any) -> None:
    """`BindgenError` naming the field when the mock could not answer from `surface` (each list as
    its `version`'s list result, `capabilities` and `serverInfo` objects)."""
    import importlib

    from pydantic import ValidationError

    from mcp_bindings.runtime.protocol import registry, versions

    where = f"{path}: versions.{version}"
    again = "write it again with `mcp-bindgen lock`"
    if not isinstance(surface, dict):
        raise BindgenError(f"{where} is not an object (a surface: tools, prompts, capabilities...); {again}")
    fields = cast("dict[str, Any]", surface)
    for key in ("capabilities", "serverInfo"):
        if not isinstance(fields.get(key, {}), dict):
            raise BindgenError(f"{where}.{key} is not an object; {again}")
    protocol = importlib.import_module(registry.load_version(version).__name__ + ".methods").PROTOCOL
    for method, key in LISTS.items():
        spec = protocol.client_requests.get(method)
        if key not in fields or spec is None:
            continue
        try:
            versions.validate(spec.result, {key: fields[key]})
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            at = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
            raise BindgenError(f"{where}{at}: {first['msg']} (what the mock answers {method} with); {again}") from None


class Mock:
    """Answers from a lock: each request from the surface locked at the client's version."""

    def __init__(self, versions: dict[str, dict[str, Any]], seed: int = 0) -> None:
        self.versions = versions
        self.seed = seed
        self.newest = max(versions)
        self.calls: dict[str, int] = {}

    def surface(self, version: str) -> dict[str, Any]:
        return self.versions.get(version) or self.versions[self.newest]

    def identity(self) -> dict[str, Any]:
        # A lock keeps the server's name, not its version (which changes without the surface changing).
        info = {"name": "mock", "version": "0.0.0+mock", **(self.surface(self.newest).get("serverInfo") or {})}
        return {"serverInfo": info}

    def _call_tool(self, surface: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
        name = str(params.get("name"))
        tools = {t["name"]: t for t in surface.get("tools", [])}
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

    def answer(self, method: str, params: dict[str, Any], version: str | None = None) -> dict[str, Any]:
        """The answer to `method` for a client of `version` (default: the lock's newest)."""
        surface = self.surface(version or self.newest)
        if method in LISTS:
            return {LISTS[method]: surface.get(LISTS[method], [])}
        if method == v2026.TOOLS_CALL:
            return self._call_tool(surface, params)
        if method == v2026.PROMPTS_GET:
            text = f"(mock) prompt {params.get('name')} with {json.dumps(params.get('arguments') or {})}"
            return {"messages": [{"role": "user", "content": {"type": "text", "text": text}}]}
        if method == v2026.RESOURCES_READ:
            return {"contents": [{"uri": params.get("uri"), "mimeType": "text/plain", "text": "(mock) resource"}]}
        if method in EMPTY:
            return {}
        raise _Error(-32601, f"the mock serves no {method} (it answers what a lock file describes)")


class _Error(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def mock_server(mock: Mock) -> Any:
    """The runtime's server stub answering from `mock` (serve it with `serve_stdio` or `serve_http`)."""
    from mcp_bindings.runtime.errors import McpError
    from mcp_bindings.runtime.recording.answering import answering_server

    async def answer(method: str, params: dict[str, Any] | None, ctx: Any) -> dict[str, Any]:
        try:
            return mock.answer(method, params or {}, ctx.protocol_version)
        except _Error as exc:
            raise McpError(exc.code, str(exc)) from None

    capabilities = mock.surface(mock.newest).get("capabilities") or {}
    return answering_server(mock.newest, capabilities, mock.identity(), answer, validate_tools=True)
