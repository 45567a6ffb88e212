"""A server's own surface: what it offers at one protocol version (tools with their schemas and
annotations, prompts, resources, resource templates, capabilities), read from the live server or
from a saved file, as plain wire JSON in a canonical order.

    surface = capture(["python", "server.py"], "2025-11-25")       # or an http(s):// URL
    surface = load_surface(Path("mcp-lock.json"), "2025-11-25")   # a lock file (or a single surface)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp_bindgen.errors import BindgenError

from ..server_spec import ServerSpec
from .connection import CONNECT_TIMEOUT, innermost, one_line, open_client
from .connection import known_versions as known_versions  # re-exported: the contract tests and lock use it

Surface = dict[str, Any]
MAX_PAGES = 1000  # a server whose cursors never end is refused, not followed forever
LISTS = {  # surface key -> (client method, result field, sort key, capability)
    "tools": ("list_tools", "tools", "name", "tools"),
    "prompts": ("list_prompts", "prompts", "name", "prompts"),
    "resources": ("list_resources", "resources", "uri", "resources"),
    "resourceTemplates": ("list_resource_templates", "resource_templates", "uriTemplate", "resources"),
}


def newest_handshake_version() -> str:
    from mcp_bindings.runtime.protocol import registry

    return [v for v, info in registry.versions().items() if not info.stateless][-1]


def wire(value: Any) -> Any:
    """A validated model back to the wire JSON it was read from (explicit nulls kept)."""
    return value.model_dump(mode="json", by_alias=True, exclude_unset=True)


async def list_all(client: Any, key: str) -> list[Any]:
    """Every page of one list (a `LISTS` key) as wire JSON, in the server's order."""
    method, field, _sort_key, _capability = LISTS[key]
    items: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        page = await getattr(client, method)(cursor=cursor)
        items.extend(wire(item) for item in getattr(page, field))
        cursor = page.next_cursor
        if cursor is None:
            return items
        if cursor in seen:
            raise BindgenError(f"the server repeated the cursor {cursor!r} while listing {key}")
        seen.add(cursor)
    raise BindgenError(f"the server listed {key} over more than {MAX_PAGES} pages")


async def _read_lists(client: Any) -> Surface:
    session = client.session
    capabilities = dict(client.server_capabilities)
    surface: Surface = {
        "protocolVersion": session.version,
        "serverInfo": dict(session.server_info),
        "capabilities": _wire_dict(capabilities),
    }
    for key, (_method, _field, sort_key, capability) in LISTS.items():
        items = await list_all(client, key) if capability in capabilities else []
        surface[key] = sorted(items, key=lambda item: str(item.get(sort_key, "")))
    return canonical(surface)


def _wire_dict(value: Any) -> Any:
    return json.loads(json.dumps(value, default=wire))


async def _read_surface(
    server: ServerSpec, version: str, headers: dict[str, str] | None, env: dict[str, str] | None
) -> Surface:
    import anyio

    with anyio.fail_after(CONNECT_TIMEOUT):
        from mcp_bindings.runtime.stdio.connect import TAIL_ONLY

        # A stdio server's stderr is not echoed: an error names its last lines once.
        async with open_client(server, version, headers, stderr=TAIL_ONLY, env=env) as client:
            return await _read_lists(client)


def capture(
    server: ServerSpec,
    version: str | None = None,
    headers: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
) -> Surface:
    """The surface of a live server at `version` (default: the newest handshake version); a stdio
    server gets `env` over the safe variables of ours (`connect_stdio`'s policy)."""
    import anyio

    chosen = version or newest_handshake_version()
    try:
        return anyio.run(_read_surface, server, chosen, headers, env)
    except BindgenError:
        raise
    except TimeoutError as exc:
        raise BindgenError(
            f"the server `{server.text}` did not answer within {CONNECT_TIMEOUT:.0f} s: check the command"
        ) from exc
    except Exception as exc:  # spawn failures, transport errors, refused handshakes: one sentence
        raise BindgenError(f"could not read the surface of `{server.text}`: {one_line(exc, server)}") from exc


def speaks(
    server: ServerSpec, version: str, headers: dict[str, str] | None = None, env: dict[str, str] | None = None
) -> Surface | None:
    """The surface at `version` when the server negotiates exactly that version, else None."""
    from mcp_bindings.runtime.client.runtime import LegacyServerError, ProtocolVersionError

    try:
        surface = capture(server, version, headers, env)
    except BindgenError as exc:
        if isinstance(innermost(exc.__cause__), (ProtocolVersionError, LegacyServerError)):
            return None  # it chose a version this client does not speak, or has no server/discover
        raise
    return surface if surface["protocolVersion"] == version else None


def canonical(value: Any) -> Any:
    """Keys sorted at every level (lists keep their order: the caller sorts lists by name)."""
    result: Any = json.loads(json.dumps(value, sort_keys=True))
    return result


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def load_surface(path: Path, version: str | None = None) -> Surface:
    """One surface from a file: a lock file (`versions` -> surface; `version` picks one, default the
    newest) or a single surface as `mcp-bindgen lock` stores per version."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise BindgenError(f"surface file {path} not found") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BindgenError(f"{path} is not a JSON surface or lock file: {one_line(exc)}") from exc
    if isinstance(data, dict) and isinstance(data.get("versions"), dict):
        versions: dict[str, Any] = data["versions"]
        if not versions:
            raise BindgenError(f"{path} records no protocol version")
        if version is None:
            version = sorted(versions)[-1]
        if version not in versions:
            raise BindgenError(f"{path} has no surface for {version}: it has {', '.join(sorted(versions))}")
        data = versions[version]
    if not isinstance(data, dict) or not isinstance(data.get("tools"), list):
        raise BindgenError(f"{path} is not a surface: expected an object with a `tools` list (or a lock file)")
    surface: Surface = data
    surface.setdefault("protocolVersion", version or newest_handshake_version())
    for key in LISTS:
        surface.setdefault(key, [])
    return surface
