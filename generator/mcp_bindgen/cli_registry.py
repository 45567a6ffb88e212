"""The command line of the MCP Registry entry: `registry check [PATH]` (docs/cli.md). Only the
parser lives here; the check (`registry`: the pinned server.json schema and the registry's rules)
is imported when the command runs."""

from __future__ import annotations

import argparse

EXAMPLES = (
    "  mcp-bindgen registry check                       # ./server.json\n"
    "  mcp-bindgen registry check weather/server.json --json"
)


def _cmd_check(args: argparse.Namespace) -> int:
    from .registry import cmd_check

    return cmd_check(args)


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    registry = sub.add_parser(
        "registry",
        help="the server's MCP Registry entry (server.json): check it before `mcp-publisher publish`",
        epilog=f"examples:\n{EXAMPLES}\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    registry_sub = registry.add_subparsers(dest="registry_command", required=True, metavar="SUBCOMMAND")
    check = registry_sub.add_parser(
        "check",
        help="validate a server.json against the registry's published schema and the rules the registry enforces",
        description="Validate a server.json against the MCP Registry's published schema (pinned) and the rules the "
        "registry enforces beyond it: the name's reverse-DNS form, exact versions, each package's registry type, "
        "identifier and transport, and the `mcp-name:` line in a local PyPI package's README (`mcpName` in an npm "
        "package.json). One line per finding, `JSON-POINTER: what to do`; exit 1 on findings, 0 when valid.",
        epilog=f"examples:\n{EXAMPLES}\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument(
        "path",
        nargs="?",
        default="server.json",
        metavar="PATH",
        help="server.json or its folder (default: ./server.json)",
    )
    check.add_argument("--json", action="store_true", help="print the report as JSON (findings with their pointers)")
    check.set_defaults(func=_cmd_check)
