"""The `client`, `lock` and `lint` commands: read a surface, act, write atomically."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mcp_bindgen.errors import BindgenError

from ..files import write_atomic
from ..server_spec import FORMS, parse_server
from .connection import parse_env, parse_headers
from .surface import Surface, capture, load_surface


def _surface(args: argparse.Namespace) -> Surface:
    if args.from_file:
        return load_surface(Path(args.from_file), args.protocol)
    if not args.target:
        raise BindgenError(f"no server given: pass --from SERVER ({FORMS}) or --from-file FILE")
    return capture(parse_server(args.target), args.protocol, parse_headers(args.header), parse_env(args.env))


def cmd_client(args: argparse.Namespace) -> int:
    from .render import render_client

    out = Path(args.output)
    if out.suffix != ".py":
        raise BindgenError(f"-o {out} must name a Python module (a .py file)")
    module = render_client(_surface(args), args.class_name)
    if module.collisions and args.strict_names:
        raise BindgenError(
            f"{module.collisions[0].message()}; rename the tools or drop --strict-names to accept the suffixes"
        )
    for collision in module.collisions:
        print(f"mcp-bindgen: note: {collision.message()}", file=sys.stderr)
    for note in module.notes:
        print(f"mcp-bindgen: note: {note}", file=sys.stderr)
    write_atomic(out, module.source)
    print(f"wrote {out}")
    return 0


def cmd_lock(args: argparse.Namespace) -> int:
    from .lock import build_lock, check_lock, current_surfaces, lock_text, read_lock

    path = Path(args.output)
    if args.check:
        old = read_lock(path)
        if not args.target:
            raise BindgenError(f"--check needs the live server: pass --from SERVER ({FORMS})")
        versions = args.protocol_list or sorted(old["versions"])
        old["versions"] = {v: s for v, s in old["versions"].items() if v in versions}  # --protocol: only those
        live = current_surfaces(parse_server(args.target), versions, parse_headers(args.header), parse_env(args.env))
        result = check_lock(old, live)
        sys.stdout.write(result.render(args.format))
        return 1 if result.breaking else 0
    if not args.target:
        raise BindgenError(f"no server given: pass --from SERVER ({FORMS})")
    lock = build_lock(parse_server(args.target), args.protocol_list, parse_headers(args.header), parse_env(args.env))
    write_atomic(path, lock_text(lock))
    print(f"wrote {path} ({', '.join(lock['versions'])})")
    return 0


def cmd_lint(args: argparse.Namespace) -> int:
    from .lint import lint_surface, render_findings

    surface = _surface(args)
    findings = lint_surface(surface)
    sys.stdout.write(render_findings(findings, len(surface.get("tools") or []), args.format))
    return 1 if any(f.severity == "error" for f in findings) else 0
