"""The command line of recorded sessions (`record`, `replay`, `replay-client`, `diff-sessions`, `mock`;
docs/testing-with-recordings.md). Only the parsers live here; a command imports
`contract.sessions` (which runs the runtime's `recording` package) when it runs."""

from __future__ import annotations

import argparse


def _run(name: str):  # noqa: ANN202 - a small dispatcher of lazily imported commands
    def command(args: argparse.Namespace) -> int:
        from .contract import sessions

        return int(getattr(sessions, name)(args))

    return command


def _match_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="PATH",
        help="a dotted params path left out when requests are matched, e.g. arguments.timestamp (repeatable); "
        "_meta and initialize's clientInfo are always left out",
    )
    parser.add_argument(
        "--match",
        choices=("params", "method"),
        default="params",
        help="match requests by method and params (default) or by method alone",
    )


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    record = sub.add_parser(
        "record", help="proxy a stdio server or an HTTP endpoint and record every message to a file"
    )
    record.add_argument("-o", "--output", required=True, metavar="FILE", help="the session file to write (.mcpsession)")
    record.add_argument("--redaction", metavar="FILE", help="redaction rules (JSON) on top of the defaults")
    record.add_argument("--redact-field", action="append", default=[], metavar="NAME", help="a JSON field to redact")
    record.add_argument("--redact-header", action="append", default=[], metavar="NAME", help="an HTTP header to redact")
    record.add_argument(
        "--redact-env",
        action="append",
        default=[],
        metavar="VAR",
        help="redact the value of this environment variable wherever it appears (repeatable)",
    )
    record.add_argument("--listen", metavar="HOST:PORT", help="for a URL server: where the recording proxy listens")
    record.add_argument("server", nargs="*", metavar="-- CMD... | URL", help="the server to record")
    record.set_defaults(func=_run("cmd_record"))

    replay = sub.add_parser(
        "replay", help="serve the recorded server side of a session file (stdio, or Streamable HTTP)"
    )
    replay.add_argument("session", metavar="FILE", help="a session file (.mcpsession)")
    replay.add_argument("--order", choices=("any", "strict"), default="any", help="request order (default: any)")
    replay.add_argument(
        "--timing", choices=("fast", "preserved"), default="fast", help="answer at once or keep the recorded delays"
    )
    _match_options(replay)
    replay.add_argument(
        "--http", metavar="HOST:PORT", help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio"
    )
    replay.add_argument(
        "--new-episodes",
        dest="live",
        nargs=argparse.REMAINDER,
        default=[],
        metavar="SERVER...",
        help="send what the recording cannot answer to this live server (a stdio command, or a Streamable HTTP "
        "URL; with --http, a URL) and write the whole session back to FILE (put it last)",
    )
    replay.set_defaults(func=_run("cmd_replay"))

    client = sub.add_parser(
        "replay-client", help="drive a server with the recorded client side; report where its answers differ"
    )
    client.add_argument("session", metavar="FILE", help="a session file (.mcpsession)")
    client.add_argument("--format", choices=("text", "json"), default="text", help="report format")
    client.add_argument(
        "--ignore-result",
        action="append",
        default=[],
        metavar="PATH",
        help="a dotted path of results not compared, e.g. result.content (repeatable)",
    )
    client.add_argument(
        "--from",
        dest="server",
        nargs=argparse.REMAINDER,
        default=[],
        metavar="SERVER",
        help="the server to drive (put it last): a server file (server.py[:app]), pkg.module:app, an installed "
        "command, an http(s) URL, or a stdio command with its arguments",
    )
    client.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="HTTP header for a URL server, e.g. 'Authorization: Bearer TOKEN' (repeatable)",
    )
    client.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME[=VALUE]",
        help="environment variable of a stdio server, NAME alone passing ours (repeatable; docs/security.md)",
    )
    client.set_defaults(func=_run("cmd_replay_client"))

    diff = sub.add_parser("diff-sessions", help="compare two session files message by message, ids and timings ignored")
    diff.add_argument("a", metavar="A", help="the reference session file")
    diff.add_argument("b", metavar="B", help="the session file compared with it")
    diff.add_argument("--format", choices=("text", "json"), default="text", help="report format")
    diff.set_defaults(func=_run("cmd_diff_sessions"))

    mock = sub.add_parser(
        "mock",
        help="serve a lock file's surface (stdio or HTTP, every version), tool results generated from their schemas",
    )
    mock.add_argument("lock", metavar="LOCK", help="a lock file (mcp-bindgen lock)")
    mock.add_argument("--seed", type=int, default=0, help="the seed of the generated results (default: 0)")
    mock.add_argument(
        "--http", metavar="HOST:PORT", help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio"
    )
    mock.set_defaults(func=_run("cmd_mock"))
