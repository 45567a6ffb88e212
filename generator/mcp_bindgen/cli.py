"""The `mcp-bindgen` command line: the generator's commands, and those other packages register under
the entry point group `mcp_bindgen.commands` (`Commands`): the live-server tools (`run`, `call`,
`record`, `mock`, ...) are `mcp_bindings.live.cli`, on the runtime's side."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeAlias

from . import __version__
from .errors import BindgenError

# Modules of each extra (pyproject.toml): a command that needs one says which extra to install.
_EXTRAS = {
    "black": "generator",
    "jinja2": "generator",
    "libcst": "generator",
    "datamodel_code_generator": "generator",
    "anyio": "runtime",
    "orjson": "runtime",
    "cryptography": "runtime",
    "jsonschema": "runtime",
    "referencing": "runtime",
    "starlette": "http",
    "uvicorn": "http",
    "httpx": "http",
    "jwt": "http",
    "jsf": "mock",
    "faker": "mock",
}


COMMANDS_GROUP = "mcp_bindgen.commands"

SubParsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"  # pyright: ignore[reportPrivateUsage]


class Commands(Protocol):
    """Subcommands a package adds to `mcp-bindgen`, registered under the entry point group
    `mcp_bindgen.commands` (or passed to `build_parser`): its parsers (each `set_defaults(func=...)`,
    run by `main` with the generator's error handling), and how it reads the words after `--`."""

    def add_parsers(self, sub: SubParsers) -> None: ...

    def rewrite_argv(self, argv: list[str]) -> list[str]: ...


def registered_commands() -> list[Commands]:
    """The command sets of the entry point group, by name; one that fails to load is reported and left out."""
    from importlib.metadata import entry_points

    found: list[Commands] = []
    for point in sorted(entry_points(group=COMMANDS_GROUP), key=lambda p: p.name):
        try:
            found.append(point.load())
        except Exception as exc:  # noqa: BLE001 - another package's plug-in must not take the generator down
            print(f"mcp-bindgen: warning: commands {point.value!r} not loaded: {exc}", file=sys.stderr)
    return found


def missing_extra(exc: ModuleNotFoundError) -> str | None:
    """The extra that provides the module an import missed, if it is one of ours."""
    return _EXTRAS.get((exc.name or "").split(".", 1)[0])


def _cmd_sync(args: argparse.Namespace) -> int:
    from .pins import sync_extensions, sync_from_dir, sync_from_upstream, verify_registry_schemas

    if args.source_dir:
        written = sync_from_dir(Path(args.source_dir), args.version)
    else:
        written = sync_from_upstream(args.version)
    for path in written:
        print(f"synced {path}")
    for line in sync_extensions(Path(args.source_dir) if args.source_dir else None, args.version):
        print(line)
    for line in verify_registry_schemas():
        print(line)
    return 0


def _cmd_pin(args: argparse.Namespace) -> int:
    from .diff import render
    from .release import pin_version

    done = pin_version(
        args.version,
        commit=args.commit,
        repository=args.repository,
        path=args.path,
        source=Path(args.source) if args.source else None,
        force=args.force,
    )
    pin = done.pin
    print(f"pinned {pin.version}: {pin.repository}@{pin.commit}:{pin.path} sha256 {pin.sha256} (schema/manifest.json)")
    print(f"wrote {len(done.written)} files for {pin.version}")
    if done.diff is not None:
        print()
        sys.stdout.write(render(done.diff))
    print()
    sys.stdout.write(done.review.render(f"policy review of {pin.version}"))
    return 0


def _cmd_generate(args: argparse.Namespace) -> int:
    from .output import generate_files
    from .policy import OVERLAY_ENV, check_overlay

    if args.policy:
        check_overlay(Path(args.policy))
        os.environ[OVERLAY_ENV] = str(Path(args.policy).resolve())  # read by every policy loader, in workers too

    done = generate_files(
        versions=args.version or None,
        schema=Path(args.schema) if args.schema else None,
        out=args.out,
        package=args.package,
        protocol_version=args.protocol_version,
        force=args.force,
    )
    if done.project is not None:
        print(f"wrote {len(done.written)} files to {done.project}")
        print(f"install it with: pip install {done.project}")
    else:
        print(f"wrote {len(done.written)} files to {done.root}")
    for note in done.notes:
        print(note)
    sys.stdout.write(done.review.render())
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from .output import check_files, extension_notes

    problems = check_files(out=args.out)
    for note in extension_notes():
        print(note)
    if problems:
        print("\n".join(problems))
        print(
            f"\nmcp-bindgen check: {len(problems)} problem(s); `mcp-bindgen generate` rewrites what differs "
            "(where a line above says otherwise, do what it says)",
            file=sys.stderr,
        )
        return 1
    print("mcp-bindgen check: generated files are up to date")
    return 0


def _cmd_diff(args: argparse.Namespace) -> int:
    from .diff import diff_specs, render
    from .diff_extension import diff_extension_specs, extension_of

    extension = extension_of(args.old, args.new, args.extension)
    if extension is not None:
        report = diff_extension_specs(extension, args.old, args.new)
    else:
        report = diff_specs(args.old, args.new, old_name=args.old_name, new_name=args.new_name)
    text = render(report, args.format)
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
        registry_name=args.registry_name,
    )
    written = scaffold(options)
    print(f"wrote {len(written)} files to {options.path}")
    print(options.next_steps())
    return 0


class _Version(argparse.Action):
    """`--version`: the generator's version and the protocol versions installed (read as text)."""

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from .installed import installed_versions

        installed = installed_versions().values()
        versions = sorted({v.version for v in installed if v.released})
        drafts = sorted(f"{v.name} ({v.version})" for v in installed if not v.released)
        more = f"; drafts, used only when named: {', '.join(drafts)}" if drafts else ""
        print(f"mcp-bindgen {__version__} (MCP protocol versions: {', '.join(versions)}{more})")
        parser.exit()


def build_parser(commands: Sequence[Commands] | None = None) -> argparse.ArgumentParser:
    """The parser of the generator's commands and of `commands` (default: the registered ones)."""
    parser = argparse.ArgumentParser(
        prog="mcp-bindgen", description="Generate typed Python bindings for every MCP protocol version."
    )
    parser.add_argument("--version", action=_Version, help="show the generator's version and the protocol versions")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for more in registered_commands() if commands is None else commands:
        more.add_parsers(sub)  # the live-server tools: run, dev, list, call, ..., record, replay, mock

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
    pin = schema_sub.add_parser(
        "pin",
        help="release day: pin a new upstream version (repository, commit, path, sha256), regenerate it, "
        "and report the diff and the policy review",
    )
    pin.add_argument("version", metavar="VERSION", help="the protocol version to pin, e.g. 2026-12-01")
    pin.add_argument("--commit", required=True, metavar="SHA", help="upstream commit the schema is taken at")
    pin.add_argument("--repository", metavar="OWNER/NAME", help="upstream repository (default: that of the newest pin)")
    pin.add_argument("--path", metavar="PATH", help="path in the repository (default: schema/VERSION/schema.json)")
    pin.add_argument(
        "--from", dest="source", metavar="FILE", help="read the schema.json (or its folder) instead of downloading"
    )
    pin.add_argument("--force", action="store_true", help="re-pin a pinned version whose schema changed")
    pin.set_defaults(func=_cmd_pin)

    gen = sub.add_parser(
        "generate",
        help="regenerate the bindings of every pinned version (or one), or generate a new version from a schema",
    )
    gen.add_argument(
        "--version", action="append", metavar="V", help="only this version (repeatable); with --schema, its name"
    )
    gen.add_argument(
        "--schema",
        metavar="FILE|DIR",
        help="generate a version from this schema.json (or the folder holding it); needs --version NAME",
    )
    gen.add_argument(
        "--protocol-version",
        metavar="WIRE",
        help="with --schema: the wire protocol version, where the schema does not state it and is no pinned schema",
    )
    where_to = gen.add_mutually_exclusive_group()
    where_to.add_argument("--out", metavar="DIR", help="src root to write into (default: the checkout's generated/)")
    where_to.add_argument(
        "--package",
        metavar="NAME",
        help="with --schema: write an installable distribution NAME (a folder; the default when run from an "
        "installed wheel) that registers the version for the runtime",
    )
    gen.add_argument(
        "--force", action="store_true", help="with --schema: overwrite a pinned version with a different schema"
    )
    gen.add_argument(
        "--policy",
        metavar="DIR",
        help="policy files in DIR extend the project's for this run (a new version's entries before they are "
        "committed, e.g. DIR/reshapes.json)",
    )
    gen.set_defaults(func=_cmd_generate)

    check = sub.add_parser("check", help="regenerate in memory and fail with a diff if committed files differ")
    check.add_argument("--out", metavar="DIR", help="src root to compare (default: the checkout's generated/)")
    check.set_defaults(func=_cmd_check)

    diff = sub.add_parser(
        "diff",
        help="what changed between two protocol versions, or two schemas of an extension "
        "(methods, capabilities, error codes, types, fields)",
    )
    diff.add_argument(
        "old",
        metavar="OLD",
        help="a pinned version (e.g. 2025-11-25), a pinned extension (e.g. io.modelcontextprotocol/ui) "
        "or a schema.json file / its folder",
    )
    diff.add_argument(
        "new",
        metavar="NEW",
        help="a pinned version or extension, or a schema.json file / its folder (e.g. an upstream draft)",
    )
    diff.add_argument(
        "--extension",
        metavar="ID",
        help="compare two schema files of this pinned extension (default: the extension OLD or NEW names)",
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

    new = sub.add_parser("new", help="scaffold a runnable MCP server project written on the authoring layer")
    new.add_argument("path", metavar="PATH", help="directory to create (must be absent or empty unless --force)")
    new.add_argument(
        "--name",
        metavar="NAME",
        help="distribution name (default: the directory name); the package is its snake_case form",
    )
    new.add_argument(
        "--protocol", metavar="VERSION", help="protocol version the app is written against (default: the newest)"
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
        help="comma-separated subset of tools,resources,prompts,completion,logging (default: all of these), "
        "and the extensions ui (a tool opening an MCP Apps UI) and skills (a skills/ folder served)",
    )
    new.add_argument(
        "--bindgen",
        metavar="SPEC",
        help="where the project gets mcp-bindgen: a path to a checkout or a wheel (file:// requirement), a version "
        "(==X) or a full requirement (default: the wheel, folder or repository this mcp-bindgen was installed from, "
        "else this version from the package index)",
    )
    new.add_argument(
        "--registry-name",
        metavar="NAME",
        help="the server's name in the MCP Registry, written to server.json and README.md "
        "(default: io.github.your-github-user/DIST, to be replaced)",
    )
    new.add_argument("--force", action="store_true", help="write into an existing non-empty directory")
    new.set_defaults(func=_cmd_new)

    from .cli_registry import add_parsers as add_registry_parsers

    add_registry_parsers(sub)  # `registry check`: the server.json of the MCP Registry
    from .cli_openapi import add_parsers as add_openapi_parsers

    add_openapi_parsers(sub)  # `openapi SPEC -o DIR`: an MCP server package from an OpenAPI description
    _add_examples(parser, sub)
    return parser


# An example for each of the generator's commands that does not write its own.
_EXAMPLES = {
    "schema": "mcp-bindgen schema sync --from ../shared/mcp-schema\nmcp-bindgen schema pin 2026-12-01 --commit SHA",
    "generate": "mcp-bindgen generate\nmcp-bindgen generate --schema draft/schema.json --version draft",
    "check": "mcp-bindgen check",
    "diff": "mcp-bindgen diff 2025-11-25 2026-07-28\n"
    "mcp-bindgen diff 2025-06-18 2025-11-25 --format json -o diff.json\n"
    "mcp-bindgen diff io.modelcontextprotocol/ui new-ext-apps/schema.json",
    "new": "mcp-bindgen new weather\nmcp-bindgen new weather --transport http --features tools,resources\n"
    "mcp-bindgen new dashboard --features tools,ui,skills\n"
    "mcp-bindgen new weather --registry-name io.github.alice/weather",
}


def add_examples(sub: SubParsers, examples: Mapping[str, str]) -> None:
    """End the `--help` of each command named in `examples` with its example lines."""
    for name, text in examples.items():
        command = sub.choices[name]
        command.formatter_class = argparse.RawDescriptionHelpFormatter
        command.epilog = "examples:\n" + "\n".join(f"  {line}" for line in text.splitlines())


def _add_examples(parser: argparse.ArgumentParser, sub: SubParsers) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = (
        "examples:\n  mcp-bindgen new weather && mcp-bindgen call weather/src/weather/server.py add a=1 b=2\n"
        "  mcp-bindgen run server.py --transport http --port 3001\n"
        "  mcp-bindgen install claude-desktop server.py\n\n"
        "`mcp-bindgen COMMAND --help` shows each command's options and examples."
    )
    add_examples(sub, _EXAMPLES)


def main(argv: list[str] | None = None) -> int:
    commands = registered_commands()
    words = list(sys.argv[1:] if argv is None else argv)
    for extra_commands in commands:
        words = extra_commands.rewrite_argv(words)
    parser = build_parser(commands)
    args, extra = parser.parse_known_args(words)
    # Positional words after an option (`call S T a=1 --format json b=2`, `install HOST --name x TARGET`)
    spill = getattr(args, "arguments", getattr(args, "words", None))
    if extra and isinstance(spill, list) and not any(w.startswith("-") for w in extra):
        spill.extend(extra)
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return int(args.func(args))
    except BindgenError as exc:
        if args.debug:
            raise
        print(f"mcp-bindgen: error: {exc}", file=sys.stderr)
        return int(getattr(exc, "exit_code", 1))
    except ModuleNotFoundError as exc:
        extra = missing_extra(exc)
        if extra is None or args.debug:
            raise
        print(
            f"mcp-bindgen: error: `mcp-bindgen {args.command}` needs the {extra} extra (no module {exc.name!r}): "
            f"install mcp-bindgen[{extra}]",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - a bug or an unforeseen failure: one line, the traceback on --debug
        if args.debug:
            raise
        text = " ".join(str(exc).split())[:400]
        print(
            f"mcp-bindgen: error: {type(exc).__name__}: {text} (run again with --debug for the traceback)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
