"""The staged pipeline: load -> normalise -> IR -> render -> format, for one version or all pinned.

The result is a mapping of paths (relative to the `generated/` src root) to file contents; `generate`
writes it and `check` compares it with what is committed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from . import __version__
from .errors import BindgenError
from .format import format_python
from .ir import SchemaIR
from .lower import lower
from .normalise import normalise
from .pins import load_pins, read_pinned, sha256_of
from .render.models import render_models
from .render.surface_modules import render_about, render_client, render_methods, render_server
from .render.templates import render
from .surface import ProtocolSurface, derive_surface

PACKAGE = "mcp_bindings"


def package_name(version: str) -> str:
    """`2025-11-25` -> `v2025_11_25`; an unpinned name such as `draft` -> `v_draft`."""
    slug = re.sub(r"[^0-9a-zA-Z]+", "_", version).strip("_")
    if not slug:
        raise BindgenError(f"version name {version!r} has no usable characters")
    return f"v{slug}" if slug[0].isdigit() else f"v_{slug}"


@dataclass(frozen=True)
class VersionSource:
    version: str
    raw: bytes
    sha256: str


def pinned_source(version: str) -> VersionSource:
    raw, pin = read_pinned(version)
    return VersionSource(version, raw, pin.sha256)


def file_source(path: Path, version: str) -> VersionSource:
    if not path.is_file():
        raise BindgenError(f"schema file {path} not found")
    raw = path.read_bytes()
    return VersionSource(version, raw, sha256_of(raw))


def build_ir(source: VersionSource) -> SchemaIR:
    return lower(normalise(source.raw, source.version, source.sha256))


def _header(source: str) -> str:
    return render("header.py.j2", generator_version=__version__, source=source).rstrip("\n")


def render_version(source: VersionSource) -> dict[str, str]:
    return render_version_surface(source)[0]


def render_version_surface(source: VersionSource) -> tuple[dict[str, str], ProtocolSurface]:
    ir = build_ir(source)
    package = f"{PACKAGE}/{package_name(source.version)}"
    header = _header(f"the MCP schema {source.version} (schema.json sha256 {source.sha256})")
    surface = derive_surface(ir)
    python_files = {
        f"{package}/about.py": render_about(surface, package_name(source.version), source.sha256, header),
        f"{package}/methods.py": render_methods(ir, surface, header),
        f"{package}/server.py": render_server(ir, surface, header),
        f"{package}/client.py": render_client(ir, surface, header),
        f"{package}/_base.py": render("base.py.j2", header=header, version=source.version),
        f"{package}/models.py": header + "\n\n" + render_models(ir, package.replace("/", ".")),
        f"{package}/__init__.py": render(
            "version_init.py.j2",
            header=header,
            version=source.version,
            names=[{"schema": n, "py": ir.py_name(n)} for n in ir.definitions],
        ),
    }
    files = {path: format_python(text, path) for path, text in python_files.items()}
    files[f"{package}/py.typed"] = ""  # PEP 561, per subpackage of the `mcp_bindings` namespace
    return files, surface


def render_pinned(versions: list[str] | None = None) -> dict[str, str]:
    """Every generated file for the given pinned versions (all when None), plus the package init."""
    pins = load_pins()
    selected = versions or list(pins)
    out: dict[str, str] = {}
    for version in selected:
        out.update(render_version(pinned_source(version)))
    return dict(sorted(out.items()))


def generated_dirs(versions: list[str]) -> list[str]:
    return [f"{PACKAGE}/{package_name(v)}" for v in versions]
