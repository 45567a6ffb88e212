"""The recorded-session commands (`record`, `replay`, `replay-client`, `diff-sessions`): parse the
options, run the runtime's `recording` package, turn its errors into one-sentence CLI errors."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import anyio

from mcp_bindgen.errors import BindgenError
from mcp_bindings.runtime.recording.compare import DEFAULT_IGNORED, MatchRules
from mcp_bindings.runtime.recording.redaction import DEFAULT, Redaction, RedactionError, load_redaction
from mcp_bindings.runtime.recording.session_file import Recording, SessionFileError, read_recording
from mcp_bindings.v2025_11_25 import names as v2025
from mcp_bindings.v2026_07_28 import names as v2026

from ..server_spec import parse_server
from .connection import parse_env as _env  # the one --env parser of the commands that start a server
from .connection import parse_headers as _headers  # the one --header parser of the commands


def _server(args: argparse.Namespace, what: str) -> list[str]:
    """The server after `--` / `--from`: SERVER (`server_spec.parse_server`), as the words the
    runtime's recording connectors take: a URL alone, a server file's `mcp-bindgen run` line, or a
    command as written (a session file's header records it so, free of this machine's paths)."""
    server = [part for part in args.server]
    if server and server[0] == "--":
        server = server[1:]
    if not server:
        where = "--from SERVER" if what == "replay-client" else "-- SERVER"
        raise BindgenError(f"no server given: put it last (mcp-bindgen {what} ... {where})")
    spec = parse_server(server)  # checked: what names no server is the one SERVER error
    return server if len(server) > 1 else spec.words


def _redaction(args: argparse.Namespace) -> Redaction:
    try:
        base = load_redaction(args.redaction) if args.redaction else DEFAULT
    except RedactionError as exc:
        raise BindgenError(str(exc)) from None
    missing = [name for name in args.redact_env if name not in os.environ]
    if missing:
        raise BindgenError(f"--redact-env {missing[0]}: that environment variable is not set")
    return base.with_rules(
        headers=args.redact_header, fields=args.redact_field, values=[os.environ[name] for name in args.redact_env]
    )


def _address(value: str, option: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not port.isdigit():
        raise BindgenError(f"{option} {value!r} must read HOST:PORT, e.g. 127.0.0.1:8800")
    return host or "127.0.0.1", int(port)


def _read(path: str) -> Recording:
    try:
        return read_recording(path)
    except SessionFileError as exc:
        raise BindgenError(str(exc)) from None


def _rules(args: argparse.Namespace) -> MatchRules:
    return MatchRules(ignore=(*DEFAULT_IGNORED, *args.ignore), method_only=args.match == "method")


def cmd_record(args: argparse.Namespace) -> int:
    server = _server(args, "record")
    redaction = _redaction(args)
    if server[0].startswith(("http://", "https://")):
        from mcp_bindings.runtime.recording.http_proxy import record_http

        if len(server) > 1:
            raise BindgenError("a URL server takes no further arguments: mcp-bindgen record -o FILE -- URL")
        host, port = _address(args.listen or "127.0.0.1:0", "--listen")
        anyio.run(lambda: record_http(server[0], args.output, redaction=redaction, host=host, port=port))
        return 0
    from mcp_bindings.runtime.recording.stdio_proxy import record_stdio

    try:
        anyio.run(lambda: record_stdio(server, args.output, redaction=redaction))
    except (RuntimeError, ConnectionError) as exc:
        raise BindgenError(f"{exc}; check the command after `--`") from None
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    try:
        return _replay(args)
    except SessionFileError as exc:  # a recording the replay refuses (a delay too long to keep, say)
        raise BindgenError(str(exc)) from None


def _replay(args: argparse.Namespace) -> int:
    from mcp_bindings.runtime.recording.replay_server import replay_stdio

    recording = _read(args.session)
    rules = _rules(args)
    live = parse_server(args.live).words if args.live else None
    record_to = Path(args.session) if live else None
    if args.http:
        from mcp_bindings.runtime.recording.http_fallback import HttpLiveFallback, is_url
        from mcp_bindings.runtime.recording.http_replay import serve_replay_http
        from mcp_bindings.runtime.recording.replay_server import ServerReplay

        host, port = _address(args.http, "--http")
        if live and not is_url(live):
            raise BindgenError(
                "--new-episodes with --http takes the live server's URL: give http://HOST:PORT/PATH after it"
            )
        fallback = HttpLiveFallback(live[0]) if live else None
        server = {"url": live[0]} if live else None
        replay = ServerReplay(recording, rules=rules, order=args.order, timing=args.timing, fallback=fallback)
        anyio.run(lambda: serve_replay_http(replay, host=host, port=port, record_to=record_to, server=server))
        return 0
    anyio.run(
        lambda: replay_stdio(
            recording, live=live, record_to=record_to, rules=rules, order=args.order, timing=args.timing
        )
    )
    return 0


def cmd_replay_client(args: argparse.Namespace) -> int:
    from mcp_bindings.runtime.recording.replay_client import replay_client

    recording = _read(args.session)
    server = _server(args, "replay-client")
    try:
        headers, env = _headers(args.header), _env(args.env)
        ignore = tuple(args.ignore_result)
        report = anyio.run(lambda: replay_client(recording, server, ignore=ignore, env=env, headers=headers))
    except (RuntimeError, ConnectionError) as exc:
        raise BindgenError(f"{exc}; check the command after `--`") from None
    if args.format == "json":
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(report.text())
    return 0 if report.ok else 1


LISTED = v2026.LISTS  # list request -> its result's list field (generated from the schema)


def session_surface(recording: Recording) -> dict[str, Any]:
    """What the server showed of its surface in a session (the lock's shape): the lists it answered
    (every page), and the capabilities of its `initialize` answer. Keys it never showed are absent."""
    methods = {e.id: e.method for e in recording.entries if e.dir == "client" and e.is_request}
    surface: dict[str, Any] = {}
    for entry in recording.entries:
        result = (entry.message or {}).get("result")
        if entry.dir != "server" or not entry.is_response or not isinstance(result, dict):
            continue
        method = methods.get(entry.id)
        if method == v2025.INITIALIZE:
            surface["capabilities"] = result.get("capabilities") or {}
        elif method is not None and method in LISTED:
            key = LISTED[method]
            name = "uri" if key == "resources" else "uriTemplate" if key == "resourceTemplates" else "name"
            listed = surface.setdefault(key, {})
            for item in result.get(key) or []:
                if isinstance(item, dict):
                    listed[str(item.get(name))] = item
    return {k: list(v.values()) if isinstance(v, dict) and k != "capabilities" else v for k, v in surface.items()}


def surface_changes(a: Recording, b: Recording) -> list[Any]:
    """The lock's classification (`compat.compare_surfaces`) of what both sessions showed."""
    from mcp_bindgen.compat import compare_surfaces

    old, new = session_surface(a), session_surface(b)
    shared = set(old) & set(new)
    version = (b.versions or a.versions or ["?"])[-1]
    return compare_surfaces({k: old[k] for k in shared}, {k: new[k] for k in shared}, version)


def cmd_diff_sessions(args: argparse.Namespace) -> int:
    from mcp_bindings.runtime.recording.session_diff import diff_sessions

    a, b = _read(args.a), _read(args.b)
    report = diff_sessions(a, b)
    changes = surface_changes(a, b)
    breaking = bool(report.breaking) or any(c.kind == "breaking" for c in changes)
    if args.format == "json":
        print(json.dumps({**report.to_json(), "surface": [c.as_json() for c in changes]}, indent=2))
    else:
        print(report.text())
        if changes:
            print("the surface, as `mcp-bindgen lock --check` classifies it:")
            for change in changes:
                at = f"[{change.version}] " if change.version else ""
                print(f"  {change.kind}: {at}{change.where}: {change.what}")
    return 1 if breaking else 0


def cmd_mock(args: argparse.Namespace) -> int:
    from .fake import require_extra
    from .mock import Mock, load_lock, mock_server

    require_extra()
    server = mock_server(Mock(load_lock(Path(args.lock)), seed=args.seed))
    if args.http:
        from mcp_bindings.runtime.http.serving import serve_http

        host, port = _address(args.http, "--http")
        serve_http(server, host=host, port=port)
        return 0
    from mcp_bindings.runtime.stdio.serve import serve_stdio

    serve_stdio(server)
    return 0
