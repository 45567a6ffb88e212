"""`mcp-bindgen list | call | read | get-prompt | inspect SERVER`: one request (or a few) to a live
server through the typed client of the negotiated version (`connection.open_client`), printed for
people (`show`) or as wire JSON (`--format json`); a failure is one line and an exit code."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ..server_spec import ServerSpec, parse_server
from .arguments import prompt_arguments, typed_arguments
from .connection import ExitCode, LiveError, failure, open_client, parse_env, parse_headers
from .discovery import GROUPS, check_options, described, groups, narrowed, offers_groups
from .show import Saver, render_call, render_contents, render_groups, render_inspect, render_list, render_prompt
from .surface import list_all, wire

KINDS = {"tools": "tools", "resources": "resources", "templates": "resourceTemplates", "prompts": "prompts"}
CAPABILITY = {"tools": "tools", "resources": "resources", "resourceTemplates": "resources", "prompts": "prompts"}
RESOURCE_NOT_FOUND = -32002
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602


def _run(args: argparse.Namespace, use: Callable[[Any], Awaitable[Any]], extensions: Sequence[str] = ()) -> Any:
    """`use(client)` on a connection to the command's server (declaring `extensions`); failures as `LiveError`s."""
    import anyio

    server = parse_server(args.server)
    headers = parse_headers(args.header)
    env = parse_env(args.env)
    timeout = args.timeout

    async def session() -> Any:
        options: dict[str, Any] = {"oauth": args.oauth, "env": env, "request_timeout": timeout}
        options["extensions"] = extensions
        async with open_client(server, args.protocol, headers, **options) as client:
            return await use(client)

    started = time.monotonic()
    try:
        return anyio.run(session)
    except LiveError:
        raise
    except Exception as exc:
        raise failure(exc, server, timeout, time.monotonic() - started) from exc


def _emit(args: argparse.Namespace, data: Any, human: Callable[[], str]) -> None:
    if args.format == "json":
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(human())


async def _items(client: Any, key: str) -> list[dict[str, Any]]:
    """Every item of one list; none where the server declares no such capability. A session pinned
    to a stateless version over HTTP knows no capabilities (no `server/discover`): it asks, and a
    method the server does not serve lists nothing."""
    from mcp_bindings.runtime.rpc.errors import McpError

    if client.session.capabilities_known or client.server_capabilities:
        return await list_all(client, key) if CAPABILITY[key] in client.server_capabilities else []
    try:
        return await list_all(client, key)
    except McpError as exc:
        if exc.code == METHOD_NOT_FOUND:
            return []
        raise


def _named(items: list[dict[str, Any]], name: str, what: str) -> dict[str, Any]:
    for item in items:
        if item.get("name") == name:
            return item
    offered = ", ".join(sorted(str(item.get("name")) for item in items)) or "none"
    raise LiveError(f"the server has no {what} {name!r} (it has: {offered})", ExitCode.NOT_FOUND)


def cmd_list(args: argparse.Namespace) -> int:
    check_options(args)
    if args.kind == "groups":
        found: list[dict[str, Any]] = _run(args, groups, (GROUPS,))
        _emit(args, {"groups": found}, lambda: render_groups(found))
        return 0
    key = KINDS[args.kind]

    async def use(client: Any) -> list[dict[str, Any]]:
        if args.group is not None or args.search is not None:  # docs/discovery.md
            return await narrowed(client, args)
        return await _items(client, key)

    items: list[dict[str, Any]] = _run(args, use, (GROUPS,) if args.group is not None else ())
    _emit(args, {key: items}, lambda: render_list(args.kind, items))
    return 0


def cmd_call(args: argparse.Namespace) -> int:
    from mcp_bindings.runtime.rpc.errors import McpError

    async def use(client: Any) -> dict[str, Any]:
        tools = await _items(client, "tools")
        listed = [tool for tool in tools if tool.get("name") == args.tool] or await described(client, tools, args.tool)
        # A tool not listed to us is called all the same (its arguments JSON when they parse): an
        # app-only tool (MCP Apps) is listed only to a client with a view, and its refusal says so.
        arguments = typed_arguments(listed[0] if listed else {"name": args.tool}, args.arguments, args.json)
        try:
            with client.session.progress(_progress):
                result = wire(await client.call_tool(name=args.tool, arguments=arguments))
        except McpError as exc:
            if listed:
                raise
            raise _unlisted(tools, args.tool, exc.message if exc.code == INVALID_PARAMS else None) from exc
        if not listed and result.get("isError"):
            raise _unlisted(tools, args.tool, None)
        return result

    result: dict[str, Any] = _run(args, use)
    _emit(args, result, lambda: render_call(result, Saver(args.save_dir)))
    if result.get("isError"):
        print(f"mcp-bindgen: the tool {args.tool!r} answered an error (isError)", file=sys.stderr)
        return int(ExitCode.TOOL_ERROR)
    return 0


def _unlisted(tools: list[dict[str, Any]], name: str, refusal: str | None) -> LiveError:
    """A call of a tool that is not listed failed: app-only (the server's refusal names its
    visibility), or no such tool."""
    if refusal is not None and "visibility" in refusal:
        return LiveError(f"the tool {name!r} is app-only, not listed to this client: {refusal}", ExitCode.NOT_FOUND)
    try:
        _named(tools, name, "tool")
    except LiveError as exc:
        return exc
    return LiveError(f"the server has no tool {name!r}", ExitCode.NOT_FOUND)


async def _progress(progress: float, total: float | None, message: str | None) -> None:
    done = f"{progress:g}/{total:g}" if total else f"{progress:g}"
    print(f"progress {done}{f' {message}' if message else ''}", file=sys.stderr, flush=True)


def cmd_read(args: argparse.Namespace) -> int:
    from mcp_bindings.runtime.rpc.errors import McpError

    async def use(client: Any) -> dict[str, Any]:
        if client.session.capabilities_known and "resources" not in client.server_capabilities:
            raise LiveError("the server offers no resources", ExitCode.NOT_FOUND)
        try:
            return wire(await client.read_resource(uri=args.uri))
        except McpError as exc:
            if exc.code == RESOURCE_NOT_FOUND or "not found" in exc.message.lower():
                raise LiveError(f"the server has no resource {args.uri!r}: {exc.message}", ExitCode.NOT_FOUND) from exc
            raise

    result: dict[str, Any] = _run(args, use)
    _emit(args, result, lambda: render_contents(result.get("contents") or [], Saver(args.save_dir)) + "\n")
    return 0


def cmd_get_prompt(args: argparse.Namespace) -> int:
    async def use(client: Any) -> dict[str, Any]:
        prompt = _named(await _items(client, "prompts"), args.name, "prompt")
        arguments = prompt_arguments(prompt, args.arguments)
        return wire(await client.get_prompt(name=args.name, arguments=arguments or None))

    result: dict[str, Any] = _run(args, use)
    _emit(args, result, lambda: render_prompt(result, Saver(args.save_dir)))
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    async def use(client: Any) -> dict[str, Any]:
        session = client.session
        report: dict[str, Any] = {
            "serverInfo": dict(session.server_info),
            "protocolVersion": session.version,
            "capabilities": json.loads(json.dumps(dict(client.server_capabilities), default=wire)),
            "instructions": session.instructions,
        }
        for key in ("tools", "prompts", "resources", "resourceTemplates"):
            report[key] = await _items(client, key)
        if offers_groups(client):
            report["groups"] = await groups(client)
        return report

    report: dict[str, Any] = _run(args, use, (GROUPS,))
    server, headers = parse_server(args.server), parse_headers(args.header)
    report["versions"] = spoken_versions(server, headers, oauth=args.oauth, env=parse_env(args.env))
    _emit(args, report, lambda: render_inspect(report))
    return 0


def spoken_versions(
    server: ServerSpec, headers: dict[str, str] | None, *, oauth: bool = False, env: dict[str, str] | None = None
) -> list[str]:
    """The protocol versions of this client that the server negotiates when offered each alone."""
    import anyio

    from .connection import known_versions

    spoken: list[str] = []

    async def probe(version: str) -> None:
        try:
            with anyio.fail_after(30):
                async with open_client(server, version, headers, stderr=_devnull(), oauth=oauth, env=env) as client:
                    if client.session.version == version:
                        spoken.append(version)
        except Exception:  # refused, another version chosen, no answer: not spoken
            return

    async def probe_all() -> None:
        async with anyio.create_task_group() as group:
            for version in known_versions():
                group.start_soon(probe, version)

    anyio.run(probe_all)
    return sorted(spoken)


def _devnull() -> Any:
    import subprocess

    return subprocess.DEVNULL
