"""The command line of `mcp-bindgen openapi SPEC -o DIR` (docs/openapi.md). Only the parser lives
here; the generator is imported when the command runs."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .openapi import Options

EXAMPLES = (
    "  mcp-bindgen openapi petstore.yaml -o petstore\n"
    "  mcp-bindgen openapi https://example.com/openapi.json -o example --name example_api\n"
    "  mcp-bindgen openapi api.json -o api --exclude-tag admin --exclude-method DELETE --exclude-path '/internal/*'\n"
    "  mcp-bindgen openapi api.json -o api --routes routes.yaml\n"
    "  mcp-bindgen openapi api.json -o api --check\n"
    "  mcp-bindgen openapi diff old.json new.json"
)


def _package_name(args: argparse.Namespace) -> str:
    from .errors import BindgenError

    name = args.name or re.sub(r"[^0-9a-zA-Z]+", "_", Path(args.out).resolve().name).strip("_").lower()
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name or ""):
        raise BindgenError(f"{name!r} is not a Python package name; pass --name (lower case, digits, _)")
    return name


def _command(args: argparse.Namespace, name: str) -> str:
    """The command that makes the package again (written into its files; the folder is not part of it,
    so `--check` compares the same text wherever the package lives)."""
    words = ["mcp-bindgen", "openapi", args.spec, "--name", name]
    if args.base_url:
        words += ["--base-url", args.base_url]
    for flag, values in (
        ("--exclude-tag", args.exclude_tag),
        ("--exclude-path", args.exclude_path),
        ("--exclude-method", args.exclude_method),
    ):
        for value in values:
            words += [flag, value]
    if args.env_prefix:
        words += ["--env-prefix", args.env_prefix]
    if args.routes:
        words += ["--routes", args.routes]
    return shlex.join(words)


def _options(args: argparse.Namespace, name: str) -> Options:
    from mcp_bindings.openapi.routes import read_routes

    from .openapi import Options, described

    with described():
        routes = read_routes(args.routes) if args.routes else ()
    return Options(
        name=name,
        base_url=args.base_url,
        exclude_tags=frozenset(args.exclude_tag),
        exclude_paths=tuple(args.exclude_path),
        exclude_methods=frozenset(m.upper() for m in args.exclude_method),
        env_prefix=args.env_prefix,
        routes=routes,
    )


def _cmd_diff(args: argparse.Namespace, old: str, new: str) -> int:
    """`openapi diff OLD NEW`: the report on stdout; exit 1 when a change breaks a caller."""
    from .openapi.diff import diff_descriptions

    found = diff_descriptions(old, new, _options(args, args.name or "api"))
    print(found.render(args.format), end="")
    return 1 if found.breaking else 0


def _cmd_openapi(args: argparse.Namespace) -> int:
    from .errors import BindgenError
    from .openapi import differences, generate, write

    words: list[str] = args.spec
    if words[0] == "diff" and len(words) == 3:
        return _cmd_diff(args, words[1], words[2])
    if len(words) != 1 or words[0] == "diff":
        raise BindgenError("expected `openapi SPEC -o DIR` or `openapi diff OLD NEW` (a file named diff: ./diff)")
    if not args.out:
        raise BindgenError("openapi SPEC: pass -o DIR, the project folder to write")
    args.spec = words[0]
    options = _options(args, _package_name(args))
    command = _command(args, options.name)
    generated = generate(args.spec, options, command)
    out = Path(args.out)
    if args.check:
        changed = differences(out, generated.files)
        for rel in changed:
            print(f"differs: {out / rel}", file=sys.stderr)
        print(f"{out}: {'out of date' if changed else 'up to date'} with {args.spec}")
        return 1 if changed else 0
    write(out, generated.files, args.force)
    ir = generated.ir
    print(
        f"wrote {len(generated.files)} files to {out}: {len(ir.operations)} tools, {len(ir.schemes)} security schemes"
    )
    for skipped in ir.skipped:
        print(f"left out {skipped.what}: {skipped.reason}", file=sys.stderr)
    return 0


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    cmd = sub.add_parser(
        "openapi",
        help="generate an MCP server package from an OpenAPI description (3.0, 3.1, Swagger 2.0)",
        description="Generate an MCP server package from an OpenAPI description: pydantic models of its schemas, "
        "one tool per operation (input schema from its parameters and body, output schema from its success "
        "response) calling the API at the base URL fixed here, credentials from environment variables named in "
        "the generated README.",
        epilog=f"examples:\n{EXAMPLES}\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cmd.add_argument(
        "spec",
        nargs="+",
        metavar="SPEC",
        help="the description: a file (JSON or YAML) or an https:// URL; or `diff OLD NEW`: which tools two "
        "descriptions' packages change, each change breaking a caller or additive (exit 1 when one breaks)",
    )
    cmd.add_argument("-o", "--out", metavar="DIR", help="the project folder to write")
    cmd.add_argument("--name", help="the Python package (default: the folder's name)")
    cmd.add_argument("--base-url", metavar="URL", help="the API's base URL (default: the description's first server)")
    cmd.add_argument("--exclude-tag", action="append", default=[], metavar="TAG", help="leave out operations so tagged")
    cmd.add_argument(
        "--exclude-path", action="append", default=[], metavar="GLOB", help="leave out paths matching (fnmatch)"
    )
    cmd.add_argument("--exclude-method", action="append", default=[], metavar="METHOD", help="leave out a method")
    cmd.add_argument("--env-prefix", metavar="PREFIX", help="of the credentials' variables (default: NAME upper case)")
    cmd.add_argument(
        "--routes",
        metavar="FILE",
        help="a route map (JSON or YAML): which operations are tools, resources or left out (default: all tools)",
    )
    cmd.add_argument("--format", choices=("markdown", "json"), default="markdown", help="of the `diff` report")
    cmd.add_argument("--check", action="store_true", help="write nothing; exit 1 when DIR differs from what SPEC makes")
    cmd.add_argument("--force", action="store_true", help="write into a non-empty folder")
    cmd.set_defaults(func=_cmd_openapi)
