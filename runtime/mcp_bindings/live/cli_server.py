"""The command line of the server tools: `run` and `dev` (serve a server file), `list`, `call`,
`read`, `get-prompt` and `inspect` (talk to any live server), `install` / `uninstall` (a server in
an MCP host's configuration). Only the parsers live here: a command imports what it needs when it
runs (`contract.serving`, `contract.reload`, `contract.live`: the runtime; `hosts`: neither the
runtime nor the generator's pipeline), so `mcp-bindgen --help` and `call` load no generator code."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

# command -> (module, function) run when it is chosen
_HANDLERS = {
    "run": ("mcp_bindings.live.contract.serving", "cmd_run"),
    "dev": ("mcp_bindings.live.contract.reload", "cmd_dev"),
    "list": ("mcp_bindings.live.contract.live", "cmd_list"),
    "call": ("mcp_bindings.live.contract.live", "cmd_call"),
    "read": ("mcp_bindings.live.contract.live", "cmd_read"),
    "get-prompt": ("mcp_bindings.live.contract.live", "cmd_get_prompt"),
    "inspect": ("mcp_bindings.live.contract.live", "cmd_inspect"),
    "install": ("mcp_bindings.live.hosts", "cmd_install"),
    "uninstall": ("mcp_bindings.live.hosts", "cmd_uninstall"),
}
LIVE = ("list", "call", "read", "get-prompt", "inspect")
LIST_KINDS = ("tools", "resources", "templates", "prompts", "groups")
HOSTS = ("claude-desktop", "claude-code", "cursor", "vscode", "windsurf")
EXIT_CODES = (
    "exit codes: 0 ok, 1 the tool answered isError (or another failure), 2 bad arguments, "
    "3 no such tool/prompt/resource, 4 connection failure, 5 authorization required, "
    "6 the server answered a JSON-RPC error"
)
SERVER_HELP = (
    "the server: a server file (server.py[:app], run on stdio), pkg.module:app, an installed command, an http(s) "
    "URL, or a stdio command quoted as one word ('python server.py') or given last after --"
)


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535; 0 picks a free one)")
    return int(text)


def _dispatch(args: argparse.Namespace) -> int:
    module, function = _HANDLERS[args.command]
    return int(getattr(importlib.import_module(module), function)(args))


def _parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],  # pyright: ignore[reportPrivateUsage]
    name: str,
    help_text: str,
    examples: str,
    epilog: str = "",
) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        name,
        help=help_text,
        description=help_text[0].upper() + help_text[1:] + ".",
        epilog=f"examples:\n{examples}" + (f"\n\n{epilog}" if epilog else "") + "\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    parser.set_defaults(func=_dispatch)
    return parser


def _live_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--protocol",
        metavar="V|auto",
        default="auto",
        help="protocol version to speak (default: auto, the newest the server speaks)",
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
        help="environment variable of a stdio server, NAME alone passing ours (repeatable); a server gets "
        "only PATH, HOME, the locale and a few more of ours besides (docs/security.md)",
    )
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output: text for people (default) or json"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="give up on the server after this long: the handshake (default 60 s) and each request (default: none)",
    )
    parser.add_argument(
        "--oauth",
        action="store_true",
        help="a URL server asking for authorization: run the OAuth flow in the browser (tokens kept in "
        "~/.cache/mcp-bindgen/oauth.json for the next run)",
    )


def _discovery_options(parser: argparse.ArgumentParser) -> None:
    """`list tools`' narrowing options (docs/discovery.md)."""
    parser.add_argument(
        "--group",
        metavar="NAME",
        help="tools: only the members of group NAME and of the groups inside it (the groups extension)",
    )
    parser.add_argument(
        "--search",
        metavar="QUERY",
        help="tools: the tools the server's search_tools finds for QUERY, best first (a server behind a tool search)",
    )
    parser.add_argument("--regex", action="store_true", help="with --search: QUERY is a regular expression")
    parser.add_argument("--limit", type=int, metavar="N", help="with --search: at most N tools")


def _target_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target", metavar="TARGET", help="server.py, server.py:app, pkg.module:app, or an installed command"
    )
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio", help="default: stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP: address to bind (default: 127.0.0.1)")
    parser.add_argument("--port", type=_port, default=3001, help="HTTP: port (default: 3001; 0 picks a free one)")
    parser.add_argument("--path", default="/mcp", help="HTTP: path of the MCP endpoint (default: /mcp)")
    parser.add_argument(
        "--forwarded-allow-ips",
        default="",
        metavar="IPS",
        help="HTTP: the proxies (comma-separated IPs or networks) whose X-Forwarded-For names the client "
        "for per-client bounds (default: none, the header is ignored)",
    )


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    run = _parser(
        sub,
        "run",
        "serve the App (or server object) a Python file or module defines, on stdio or Streamable HTTP",
        "  mcp-bindgen run server.py                      # stdio, for a host that starts it\n"
        "  mcp-bindgen run server.py:app --transport http --port 3001\n"
        "  mcp-bindgen run mypkg.server:make_app          # a factory is called\n"
        "  mcp-bindgen run weather                        # an installed command: its module's App",
    )
    _target_options(run)
    run.add_argument("--fd", type=int, help=argparse.SUPPRESS)  # `dev`: serve on an inherited listening socket

    dev = _parser(
        sub,
        "dev",
        "run a server file and restart it when a source file in its folder changes",
        "  mcp-bindgen dev server.py --transport http --port 3001\n"
        "  npx @modelcontextprotocol/inspector mcp-bindgen dev server.py   # stdio, under the Inspector",
        "On stdio the client keeps its connection: the handshake is replayed to the new process, requests "
        "in flight are answered with an error, and list_changed notifications are sent.",
    )
    _target_options(dev)

    listing = _parser(
        sub,
        "list",
        "list a server's tools, resources, resource templates, prompts or groups",
        "  mcp-bindgen list tools server.py\n"
        "  mcp-bindgen list prompts http://127.0.0.1:3001/mcp --format json\n"
        "  mcp-bindgen list resources -- npx -y @modelcontextprotocol/server-everything\n"
        "  mcp-bindgen list tools server.py --search 'refund an order'   # a server behind a tool search\n"
        "  mcp-bindgen list tools server.py --group billing              # a server offering groups",
        EXIT_CODES,
    )
    listing.add_argument("kind", choices=LIST_KINDS, metavar="{tools,resources,templates,prompts,groups}")
    listing.add_argument("server", metavar="SERVER", help=SERVER_HELP)
    _live_options(listing)
    _discovery_options(listing)

    call = _parser(
        sub,
        "call",
        "call one tool of a server; name=value arguments are typed from the tool's input schema",
        "  mcp-bindgen call server.py weather city=Paris\n"
        '  mcp-bindgen call http://127.0.0.1:3001/mcp add a=1 b=2 --json \'{"tags": ["x"]}\'\n'
        "  mcp-bindgen call 'python server.py' echo text=hi --format json",
        EXIT_CODES,
    )
    call.add_argument("server", metavar="SERVER", help=SERVER_HELP)
    call.add_argument("tool", metavar="TOOL", help="the tool's name")
    call.add_argument("arguments", nargs="*", metavar="NAME=VALUE", help="an argument, typed by the schema")
    call.add_argument("--json", metavar="OBJECT", help="arguments as one JSON object (NAME=VALUE words win)")
    call.add_argument("--save-dir", metavar="DIR", help="where binary content is saved (default: a temp dir)")
    _live_options(call)

    read = _parser(
        sub,
        "read",
        "read one resource of a server",
        "  mcp-bindgen read server.py config://app\n  mcp-bindgen read http://127.0.0.1:3001/mcp users://42/profile",
        EXIT_CODES,
    )
    read.add_argument("server", metavar="SERVER", help=SERVER_HELP)
    read.add_argument("uri", metavar="URI", help="the resource's URI")
    read.add_argument("--save-dir", metavar="DIR", help="where blobs are saved (default: a new temp dir)")
    _live_options(read)

    prompt = _parser(
        sub,
        "get-prompt",
        "get one prompt of a server, with name=value arguments",
        "  mcp-bindgen get-prompt server.py review code='print(1)' language=python",
        EXIT_CODES,
    )
    prompt.add_argument("server", metavar="SERVER", help=SERVER_HELP)
    prompt.add_argument("name", metavar="NAME", help="the prompt's name")
    prompt.add_argument("arguments", nargs="*", metavar="NAME=VALUE", help="an argument of the prompt")
    prompt.add_argument("--save-dir", metavar="DIR", help="where images and audio are saved (default: a new temp dir)")
    _live_options(prompt)

    inspect = _parser(
        sub,
        "inspect",
        "show a server's whole surface: its info, capabilities, the protocol versions it speaks, "
        "tools, prompts, resources and templates",
        "  mcp-bindgen inspect server.py\n  mcp-bindgen inspect http://127.0.0.1:3001/mcp --format json",
        EXIT_CODES,
    )
    inspect.add_argument("server", metavar="SERVER", help=SERVER_HELP)
    _live_options(inspect)

    _add_install_parsers(sub)


def _add_install_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    install = _parser(
        sub,
        "install",
        "add (or update) a server in an MCP host's configuration: " + ", ".join(HOSTS),
        "  mcp-bindgen install claude-desktop server.py\n"
        "  mcp-bindgen install cursor server.py:app --name weather --env API_KEY=secret\n"
        "  mcp-bindgen install vscode http://127.0.0.1:3001/mcp --name demo --header 'Authorization: Bearer T'\n"
        "  mcp-bindgen install --print server.py           # the mcpServers JSON for any other host",
        "The host's file is merged: other entries are kept, a backup (FILE.TIMESTAMP.bak, the newest five) is written "
        "first; a read-only file, or one holding NaN or Infinity, is refused (docs/security.md).",
    )
    install.add_argument(
        "words",
        nargs="+",
        metavar="HOST TARGET",
        help=f"HOST: {' | '.join(HOSTS)} (none with --print); TARGET: SERVER as every command takes it: "
        "server.py[:app], pkg.mod:app, an installed command, an http(s) URL, or a stdio command after -- "
        "(written with absolute paths)",
    )
    install.add_argument("--name", help="the entry's name (default: the file's or module's name)")
    install.add_argument("--env", action="append", metavar="NAME=VALUE", help="environment of the server (repeatable)")
    install.add_argument("--header", action="append", metavar="'NAME: VALUE'", help="HTTP header for a URL server")
    install.add_argument("--config", metavar="FILE", help="the host's configuration file (default: its documented one)")
    install.add_argument("--dry-run", action="store_true", help="print the change; write nothing")
    install.add_argument("--print", action="store_true", help="print the standard mcpServers JSON; write nothing")

    uninstall = _parser(
        sub,
        "uninstall",
        "remove a server's entry from an MCP host's configuration",
        "  mcp-bindgen uninstall claude-desktop weather",
    )
    uninstall.add_argument("host", choices=HOSTS, metavar="HOST", help=" | ".join(HOSTS))
    uninstall.add_argument("name", metavar="NAME", help="the entry's name")
    uninstall.add_argument(
        "--config", metavar="FILE", help="the host's configuration file (default: the documented one)"
    )
    uninstall.add_argument("--dry-run", action="store_true", help="print the change; write nothing")


def server_after_dashes(argv: Sequence[str]) -> list[str]:
    """`mcp-bindgen call echo text=hi -- python server.py`: the stdio command after `--` becomes the
    SERVER word (quoted) where the command expects it; `install` takes it as TARGET."""
    import shlex

    args = list(argv)
    if "--" not in args:
        return args
    cut = args.index("--")
    head, command = args[:cut], args[cut + 1 :]
    names = [i for i, word in enumerate(head) if word in (*LIVE, "install")]
    if not names or not command:
        return args
    at = names[0] + 1
    if head[names[0]] == "list":
        kinds = [i for i, word in enumerate(head) if i > names[0] and word in LIST_KINDS]
        at = kinds[0] + 1 if kinds else at
    elif head[names[0]] == "install":
        hosts = [i for i, word in enumerate(head) if i > names[0] and word in HOSTS]
        at = hosts[0] + 1 if hosts else at
    return [*head[:at], shlex.join(command), *head[at:]]
