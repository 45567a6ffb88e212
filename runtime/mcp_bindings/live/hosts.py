"""`mcp-bindgen install HOST TARGET` / `uninstall HOST NAME`: one server entry in an MCP host's own
configuration file, at the path and in the format each host documents, merged into what is there
(other entries and settings untouched; locked, backed up and rewritten safely by `host_config`).
`install --print` writes the standard `mcpServers` JSON that most other hosts take.

Neither the runtime nor the generator's pipeline is imported (only its `BindgenError`): TARGET is
only turned into a command line (`mcp-bindgen run TARGET`, with absolute paths, as hosts start
servers from anywhere)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_bindgen.errors import BindgenError

from .host_config import ConfigText, parse_config, update_config
from .server_spec import parse_server

Entry = dict[str, Any]


def _home() -> Path:
    return Path(os.environ.get("HOME") or Path.home())


def _app_data(platform: str) -> Path:
    """Where per-user application settings live: the folder under which Claude/ and Code/User/ are."""
    if platform == "darwin":
        return _home() / "Library" / "Application Support"
    if platform == "win32":
        return Path(os.environ.get("APPDATA") or _home() / "AppData" / "Roaming")
    return Path(os.environ.get("XDG_CONFIG_HOME") or _home() / ".config")


def _stdio(command: str, args: list[str], env: dict[str, str], typed: bool) -> Entry:
    entry: Entry = {"type": "stdio"} if typed else {}
    entry.update(command=command, args=args)
    if env:
        entry["env"] = env
    return entry


def _remote(url: str, headers: dict[str, str], *, key: str = "url", typed: bool) -> Entry:
    entry: Entry = {"type": "http"} if typed else {}
    entry[key] = url
    if headers:
        entry["headers"] = headers
    return entry


@dataclass(frozen=True)
class Host:
    """One MCP host: its configuration file per platform, the key holding the servers, and the
    shape of a stdio and of a remote (Streamable HTTP) entry."""

    name: str
    title: str
    path: Callable[[str], Path]
    key: str
    stdio: Callable[[str, list[str], dict[str, str]], Entry]
    remote: Callable[[str, dict[str, str]], Entry] | None

    def config(self, platform: str | None = None) -> Path:
        return self.path(platform or sys.platform)


HOSTS: dict[str, Host] = {
    host.name: host
    for host in (
        # modelcontextprotocol.io "Connect to local MCP servers": claude_desktop_config.json; remote
        # servers are added in the app (Settings > Connectors), not in this file.
        Host(
            "claude-desktop",
            "Claude Desktop",
            lambda p: _app_data(p) / "Claude" / "claude_desktop_config.json",
            "mcpServers",
            lambda c, a, e: _stdio(c, a, e, typed=False),
            None,
        ),
        # Claude Code: user-scope servers are `mcpServers` of ~/.claude.json (`claude mcp add --scope user`).
        Host(
            "claude-code",
            "Claude Code",
            lambda p: _home() / ".claude.json",
            "mcpServers",
            lambda c, a, e: _stdio(c, a, e, typed=True),
            lambda u, h: _remote(u, h, typed=True),
        ),
        # Cursor: the global ~/.cursor/mcp.json.
        Host(
            "cursor",
            "Cursor",
            lambda p: _home() / ".cursor" / "mcp.json",
            "mcpServers",
            lambda c, a, e: _stdio(c, a, e, typed=False),
            lambda u, h: _remote(u, h, typed=False),
        ),
        # VS Code: the user profile's mcp.json, whose servers are under `servers` with a `type`.
        Host(
            "vscode",
            "VS Code",
            lambda p: _app_data(p) / "Code" / "User" / "mcp.json",
            "servers",
            lambda c, a, e: _stdio(c, a, e, typed=True),
            lambda u, h: _remote(u, h, typed=True),
        ),
        # Windsurf: ~/.codeium/windsurf/mcp_config.json; a remote server's URL is `serverUrl`.
        Host(
            "windsurf",
            "Windsurf",
            lambda p: _home() / ".codeium" / "windsurf" / "mcp_config.json",
            "mcpServers",
            lambda c, a, e: _stdio(c, a, e, typed=False),
            lambda u, h: _remote(u, h, key="serverUrl", typed=False),
        ),
    )
}


@dataclass(frozen=True)
class Server:
    """What an entry starts: a command line, or the URL of a remote server."""

    name: str
    command: list[str] | None
    url: str | None
    env: dict[str, str]
    headers: dict[str, str]

    def entry(self, host: Host | None) -> Entry:
        if self.url is not None:
            if host is None:
                return _remote(self.url, self.headers, typed=False)
            if host.remote is None:
                raise BindgenError(
                    f"{host.title} adds remote servers in the app (Settings > Connectors), not in its file: "
                    f"install a stdio command there, e.g. -- npx -y mcp-remote {self.url}"
                )
            return host.remote(self.url, self.headers)
        assert self.command is not None
        if host is None:
            return _stdio(self.command[0], self.command[1:], self.env, typed=False)
        return host.stdio(self.command[0], self.command[1:], self.env)


def _pairs(values: Sequence[str] | None, sep: str, option: str, form: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values or []:
        name, found, content = value.partition(sep)
        if not found or not name.strip():
            raise BindgenError(f"{option} {value!r} must read {form}")
        out[name.strip()] = content.strip() if sep == ":" else content
    return out


def server_of(target: str, name: str | None, env: Sequence[str] | None, headers: Sequence[str] | None) -> Server:
    """TARGET of `install`: SERVER (`server_spec.parse_server`: a URL, or a command line with absolute
    paths) with the entry's name, environment and headers."""
    spec = parse_server(target, name)
    envs = _pairs(env, "=", "--env", "NAME=VALUE")
    heads = _pairs(headers, ":", "--header", "'Name: value'")
    return Server(spec.name, spec.command, spec.url, envs, heads)


def _servers(data: dict[str, Any], host: Host, path: Path) -> dict[str, Any]:
    servers = data.setdefault(host.key, {})
    if not isinstance(servers, dict):
        raise BindgenError(f"`{host.key}` in {path} is not an object: fix it and run again")
    return servers  # pyright: ignore[reportUnknownVariableType]


def _host(args: argparse.Namespace, name: str) -> tuple[Host, Path]:
    if name not in HOSTS:
        raise BindgenError(f"unknown host {name!r}: use one of {', '.join(HOSTS)} (or --print for any other)")
    host = HOSTS[name]
    return host, Path(args.config) if args.config else host.config()


def cmd_install(args: argparse.Namespace) -> int:
    words: list[str] = args.words
    if args.print:
        if len(words) != 1:
            raise BindgenError("--print takes only TARGET: mcp-bindgen install --print server.py")
        server = server_of(words[0], args.name, args.env, args.header)
        print(json.dumps({"mcpServers": {server.name: server.entry(None)}}, indent=2, ensure_ascii=False))
        return 0
    if len(words) != 2:
        raise BindgenError(f"install takes HOST TARGET: mcp-bindgen install {'|'.join(HOSTS)} server.py")
    host, path = _host(args, words[0])
    server = server_of(words[1], args.name, args.env, args.header)
    entry = server.entry(host)
    if args.dry_run:
        config = parse_config(path)
        old = _servers(config.data, host, path).get(server.name)
        print(f"would {'update' if old is not None else 'add'} `{server.name}` in {path} ({host.key}):")
        if old is not None:
            print("- " + config.dumps(old))
        print("+ " + config.dumps(entry))
        return 0

    def add(config: ConfigText) -> str:
        servers = _servers(config.data, host, path)
        verb = "updated" if server.name in servers else "added"
        servers[server.name] = entry
        return verb

    verb, backup = update_config(path, add)
    kept = f" (the previous file is {backup})" if backup else ""
    print(f"{verb} `{server.name}` in {path}{kept}; restart {host.title} to load it")
    return 0


def _entry_of(config: ConfigText, host: Host, path: Path, name: str) -> dict[str, Any]:
    """The servers object holding `name`; one sentence naming the entries there when it is missing."""
    servers = config.data.get(host.key)
    if not isinstance(servers, dict) or name not in servers:
        names = ", ".join(sorted(servers)) if isinstance(servers, dict) and servers else "none"  # pyright: ignore[reportUnknownArgumentType]
        raise BindgenError(f"{path} has no server `{name}` (it has: {names})")
    return servers  # pyright: ignore[reportUnknownVariableType]


def cmd_uninstall(args: argparse.Namespace) -> int:
    host, path = _host(args, args.host)
    if args.dry_run:
        config = parse_config(path)
        old = _entry_of(config, host, path, args.name)[args.name]
        print(f"would remove `{args.name}` from {path}:\n- {config.dumps(old)}")
        return 0

    def remove(config: ConfigText) -> None:
        del _entry_of(config, host, path, args.name)[args.name]

    _, backup = update_config(path, remove)
    print(f"removed `{args.name}` from {path} (the previous file is {backup})")
    return 0
