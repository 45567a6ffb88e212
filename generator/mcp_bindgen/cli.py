"""The `mcp-bindgen` command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .errors import BindgenError


def _cmd_sync(args: argparse.Namespace) -> int:
    from .pins import sync_from_dir, sync_from_upstream

    if args.source_dir:
        written = sync_from_dir(Path(args.source_dir), args.version)
    else:
        written = sync_from_upstream(args.version)
    for path in written:
        print(f"synced {path}")
    return 0


def _cmd_generate(args: argparse.Namespace) -> int:
    from .output import generate_files

    written = generate_files(
        versions=args.version or None, schema=Path(args.schema) if args.schema else None, out=args.out
    )
    print(f"wrote {len(written)} files")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from .output import check_files

    problems = check_files(out=args.out)
    if problems:
        print("\n".join(problems))
        print(
            f"\nmcp-bindgen check: {len(problems)} generated file(s) differ; run `mcp-bindgen generate`",
            file=sys.stderr,
        )
        return 1
    print("mcp-bindgen check: generated files are up to date")
    return 0


def _cmd_diff(args: argparse.Namespace) -> int:
    from .diff import diff_specs, render

    text = render(diff_specs(args.old, args.new, old_name=args.old_name, new_name=args.new_name), args.format)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return 0


def _cmd_new(args: argparse.Namespace) -> int:
    from .scaffold import ScaffoldOptions, scaffold

    options = ScaffoldOptions.from_cli(
        path=Path(args.path),
        name=args.name,
        protocol=args.protocol,
        transport=args.transport,
        features=args.features,
        bindgen=args.bindgen,
        force=args.force,
    )
    written = scaffold(options)
    print(f"wrote {len(written)} files to {options.path}")
    print(options.next_steps())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-bindgen", description="Generate typed Python bindings for every MCP protocol version."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    schema = sub.add_parser("schema", help="manage the pinned official schemas")
    schema_sub = schema.add_subparsers(dest="schema_command", required=True, metavar="SUBCOMMAND")
    sync = schema_sub.add_parser(
        "sync", help="place every pinned schema.json under schema/<version>/, verifying its sha256"
    )
    where = sync.add_mutually_exclusive_group(required=True)
    where.add_argument("--from", dest="source_dir", metavar="DIR", help="copy from DIR/<version>/schema.json")
    where.add_argument("--upstream", action="store_true", help="download from the upstream repository by pinned commit")
    sync.add_argument("--version", action="append", metavar="V", help="only this version (repeatable)")
    sync.set_defaults(func=_cmd_sync)

    gen = sub.add_parser("generate", help="regenerate the bindings of every pinned version (or one)")
    gen.add_argument(
        "--version", action="append", metavar="V", help="only this version (repeatable); with --schema, its name"
    )
    gen.add_argument(
        "--schema", metavar="PATH", help="generate an unpinned version from this schema.json (needs --version NAME)"
    )
    gen.add_argument("--out", metavar="DIR", help="src root to write into (default: the checkout's generated/)")
    gen.set_defaults(func=_cmd_generate)

    check = sub.add_parser("check", help="regenerate in memory and fail with a diff if committed files differ")
    check.add_argument("--out", metavar="DIR", help="src root to compare (default: the checkout's generated/)")
    check.set_defaults(func=_cmd_check)

    diff = sub.add_parser(
        "diff", help="what changed between two protocol versions (methods, capabilities, error codes, types, fields)"
    )
    diff.add_argument(
        "old", metavar="OLD", help="a pinned version (e.g. 2025-11-25) or a schema.json file / its folder"
    )
    diff.add_argument(
        "new", metavar="NEW", help="a pinned version or a schema.json file / its folder (e.g. an upstream draft)"
    )
    diff.add_argument(
        "--format", choices=("markdown", "json"), default="markdown", help="output format (default: markdown)"
    )
    diff.add_argument(
        "--old-name", metavar="NAME", help="version name for a schema file given as OLD (default: its folder name)"
    )
    diff.add_argument(
        "--new-name", metavar="NAME", help="version name for a schema file given as NEW (default: its folder name)"
    )
    diff.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    diff.set_defaults(func=_cmd_diff)

    new = sub.add_parser("new", help="scaffold a runnable MCP server project built on the generated bindings")
    new.add_argument("path", metavar="PATH", help="directory to create (must be absent or empty unless --force)")
    new.add_argument(
        "--name",
        metavar="NAME",
        help="distribution name (default: the directory name); the package is its snake_case form",
    )
    new.add_argument(
        "--protocol", metavar="VERSION", help="protocol version whose server stub to subclass (default: the newest)"
    )
    new.add_argument(
        "--transport",
        choices=("stdio", "http", "both"),
        default="stdio",
        help="how the server is served (default: stdio)",
    )
    new.add_argument(
        "--features",
        metavar="LIST",
        default="tools,resources,prompts,completion,logging",
        help="comma-separated subset of tools,resources,prompts,completion,logging (default: all)",
    )
    new.add_argument(
        "--bindgen",
        metavar="SPEC",
        help="where the project gets mcp-bindgen: a path (file:// requirement), a version (==X) or a full requirement "
        "(default: this checkout when run from one, else the installed version)",
    )
    new.add_argument("--force", action="store_true", help="write into an existing non-empty directory")
    new.set_defaults(func=_cmd_new)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except BindgenError as exc:
        print(f"mcp-bindgen: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
