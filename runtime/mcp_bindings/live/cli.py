"""The live-server tools' subcommands of `mcp-bindgen` (docs/cli.md). The generator's command line
finds them through the entry point group `mcp_bindgen.commands` (`mcp_bindgen.cli.Commands`,
pyproject.toml) and knows nothing else of them; this module satisfies that protocol.

Only parsers load here, so `mcp-bindgen --help` loads neither the runtime nor the generator: a
command imports what it needs when it runs (`contract/`, `hosts`)."""

from __future__ import annotations

import argparse

from mcp_bindgen.cli import add_examples

from . import cli_contract, cli_server, cli_sessions

# An example for each command that does not write its own (the server commands do, in cli_server.py).
_EXAMPLES = {
    "client": "mcp-bindgen client -o shop_client.py --from .venv/bin/python server.py",
    "lock": "mcp-bindgen lock --from .venv/bin/python server.py\n"
    "mcp-bindgen lock --check --from .venv/bin/python server.py",
    "lint": "mcp-bindgen lint --from .venv/bin/python server.py",
    "record": "mcp-bindgen record -o shop.mcpsession -- .venv/bin/python server.py\n"
    "mcp-bindgen record -o shop.mcpsession --listen 127.0.0.1:8765 http://127.0.0.1:3001/mcp",
    "replay": "mcp-bindgen replay shop.mcpsession\n"
    "mcp-bindgen replay shop.mcpsession --http 127.0.0.1:8765 --order strict\n"
    "mcp-bindgen replay shop.mcpsession --http 127.0.0.1:8765 --new-episodes http://127.0.0.1:3001/mcp",
    "replay-client": "mcp-bindgen replay-client shop.mcpsession --from .venv/bin/python server.py",
    "diff-sessions": "mcp-bindgen diff-sessions before.mcpsession after.mcpsession",
    "mock": "mcp-bindgen mock mcp-lock.json --seed 7\nmcp-bindgen mock mcp-lock.json --http 127.0.0.1:8765",
}


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    """`run`, `dev`, `list`, `call`, `read`, `get-prompt`, `inspect`, `install`, `uninstall` (a live
    server, an MCP host's configuration); `client`, `lock`, `lint` (a server's own contract,
    docs/contract.md); `record`, `replay`, `replay-client`, `diff-sessions`, `mock` (recorded
    sessions, docs/testing-with-recordings.md)."""
    cli_server.add_parsers(sub)
    cli_contract.add_parsers(sub)
    cli_sessions.add_parsers(sub)
    add_examples(sub, _EXAMPLES)


def rewrite_argv(argv: list[str]) -> list[str]:
    """The stdio command after `--` becomes the SERVER word of a live command (`cli_server`)."""
    return cli_server.server_after_dashes(argv)
