"""The command line of the contract tools (`client`, `lock`, `lint`: a server's own contract,
docs/contract.md). Only the parsers live here; a command imports `contract` (which talks to live
servers through the runtime) when it runs, so the generator's own commands never load it."""

from __future__ import annotations

import argparse


def _cmd_client(args: argparse.Namespace) -> int:
    from .contract.commands import cmd_client

    return cmd_client(args)


def _cmd_lock(args: argparse.Namespace) -> int:
    from .contract.commands import cmd_lock

    return cmd_lock(args)


def _cmd_lint(args: argparse.Namespace) -> int:
    from .contract.commands import cmd_lint

    return cmd_lint(args)


def _source_options(parser: argparse.ArgumentParser, *, from_file: bool) -> None:
    if from_file:
        parser.add_argument(
            "--from-file", metavar="FILE", help="read a saved surface (a lock file) instead of a live server"
        )
    parser.add_argument(
        "--header",
        action="append",
        metavar="'NAME: VALUE'",
        help="HTTP header for a URL server, e.g. 'Authorization: Bearer TOKEN' (repeatable)",
    )
    parser.add_argument(
        "--env",
        action="append",
        metavar="NAME[=VALUE]",
        help="environment variable of a stdio server, NAME alone passing ours (repeatable; docs/security.md)",
    )
    parser.add_argument(
        "--from",
        dest="target",
        nargs=argparse.REMAINDER,
        metavar="SERVER",
        help="the server (put it last): a server file (server.py[:app]), pkg.module:app, an installed command, "
        "an http(s) URL, or a stdio command with its arguments",
    )


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    client = sub.add_parser("client", help="generate a typed Python client module for one server's tools and prompts")
    client.add_argument("-o", "--output", required=True, metavar="PATH", help="the module to write (a .py file)")
    client.add_argument("--protocol", metavar="V", help="protocol version to speak (default: the newest handshake one)")
    client.add_argument(
        "--class-name", metavar="NAME", help="name of the client class (default: from the server's name)"
    )
    _source_options(client, from_file=True)
    client.add_argument(
        "--strict-names", action="store_true", help="fail (write nothing) when tool names map to one identifier"
    )
    client.set_defaults(func=_cmd_client)

    lock = sub.add_parser("lock", help="write a server's surface to a lock file, or --check a live server against it")
    lock.add_argument(
        "-o", "--output", default="mcp-lock.json", metavar="FILE", help="lock file (default: mcp-lock.json)"
    )
    lock.add_argument(
        "--check", action="store_true", help="compare the live server with the lock; exit 1 on breaking changes"
    )
    lock.add_argument(
        "--protocol", dest="protocol_list", action="append", metavar="V", help="only this protocol version (repeatable)"
    )
    lock.add_argument("--format", choices=("markdown", "json"), default="markdown", help="report format of --check")
    _source_options(lock, from_file=False)
    lock.set_defaults(func=_cmd_lock)

    lint = sub.add_parser("lint", help="report tool schema constructs known to break common MCP hosts")
    lint.add_argument("--protocol", metavar="V", help="protocol version to speak (default: the newest handshake one)")
    lint.add_argument("--format", choices=("markdown", "json"), default="markdown", help="output format")
    _source_options(lint, from_file=True)
    lint.set_defaults(func=_cmd_lint)
