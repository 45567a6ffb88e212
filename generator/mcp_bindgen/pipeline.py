"""The staged pipeline: load -> normalise -> IR -> render -> format, for one version or all pinned.

The result is a mapping of paths (relative to the `generated/` src root) to file contents; `generate`
writes it and `check` compares it with what is committed.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from . import __version__, crossing
from .errors import BindgenError
from .ir import Const, ObjectDef, SchemaIR
from .lower import lower
from .normalise import normalise
from .pins import ExtensionPin, load_extension_pins, load_pins, read_extension, read_pinned, sha256_of
from .surface import ProtocolSurface, derive_surface, lifecycle_era

T = TypeVar("T")
R = TypeVar("R")

PACKAGE = "mcp_bindings"


def package_name(version: str) -> str:
    """`2025-11-25` -> `v2025_11_25`; an unpinned name such as `draft` -> `v_draft`."""
    slug = re.sub(r"[^0-9a-zA-Z]+", "_", version).strip("_")
    if not slug:
        raise BindgenError(f"version name {version!r} has no usable characters")
    return f"v{slug}" if slug[0].isdigit() else f"v_{slug}"


@dataclass(frozen=True)
class VersionSource:
    version: str  # the name it is generated under (`--version`): the package is named after it
    raw: bytes
    sha256: str
    protocol_version: str | None = None  # the wire version, when the caller says (`--protocol-version`)
    origin: str = ""  # where the bytes come from, for messages


def pinned_source(version: str) -> VersionSource:
    raw, pin = read_pinned(version)
    return VersionSource(version, raw, pin.sha256, version, str(pin.local_path))


def schema_file(path: Path) -> Path:
    """A schema.json, or a folder holding one (as upstream lays them out: `schema/<version>/schema.json`)."""
    if path.is_dir():
        if (path / "schema.json").is_file():
            return path / "schema.json"
        raise BindgenError(f"{path} is a folder without a schema.json")
    if not path.is_file():
        raise BindgenError(f"schema file {path} not found")
    return path


def file_source(path: Path, version: str, protocol_version: str | None = None) -> VersionSource:
    path = schema_file(path)
    raw = path.read_bytes()
    return VersionSource(version, raw, sha256_of(raw), protocol_version, str(path))


_DATE_VERSION = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def stated_protocol_version(ir: SchemaIR) -> str | None:
    """The protocol version a schema states itself: a constant on a `protocolVersion` field (or a
    reserved `.../protocolVersion` `_meta` key). None where it says nothing (no pinned schema does)."""
    stated = set()
    for definition in ir.definitions.values():
        if not isinstance(definition, ObjectDef):
            continue
        for f in definition.fields:
            if f.wire_name.rsplit("/", 1)[-1] == "protocolVersion" and isinstance(f.type, Const):
                if isinstance(f.type.value, str):
                    stated.add(f.type.value)
    if len(stated) > 1:
        raise BindgenError(f"{ir.version}: the schema states several protocol versions ({', '.join(sorted(stated))})")
    return stated.pop() if stated else None


def known_versions(wire: str) -> list[str]:
    """The wire versions a generated client can speak: every pinned protocol version, and its own."""
    return sorted({version for version in load_pins() if _DATE_VERSION.match(version)} | {wire})


def protocol_version_of(source: VersionSource, ir: SchemaIR) -> str:
    """The wire protocol version of a source: what its schema says, else `--protocol-version`, else the
    pinned version whose schema has the very same bytes, else the name when it is a protocol version."""
    stated = stated_protocol_version(ir)
    if stated is not None:
        if source.protocol_version not in (None, stated):
            raise BindgenError(
                f"the schema of {source.version} states protocol version {stated}, not {source.protocol_version}"
            )
        return stated
    if source.protocol_version:
        return source.protocol_version
    same = [pin.version for pin in load_pins().values() if pin.sha256 == source.sha256]
    if same:
        return same[0]
    if _DATE_VERSION.match(source.version):
        return source.version
    raise BindgenError(
        f"the schema of {source.version} does not state its wire protocol version and is not a pinned schema: "
        "pass --protocol-version (e.g. --protocol-version 2026-09-30)"
    )


def build_ir(source: VersionSource) -> SchemaIR:
    return lower(normalise(source.raw, source.version, source.sha256, label=source.origin or None))


def _header(source: str) -> str:
    from .render.templates import render

    return render("header.py.j2", generator_version=__version__, source=source).rstrip("\n")


def render_version(source: VersionSource) -> dict[str, str]:
    return render_version_surface(source)[0]


def render_version_surface(source: VersionSource) -> tuple[dict[str, str], ProtocolSurface]:
    ir = build_ir(source)
    return render_ir(source, ir, derive_surface(ir))


def render_ir(source: VersionSource, ir: SchemaIR, surface: ProtocolSurface) -> tuple[dict[str, str], ProtocolSurface]:
    # The renderers need the `generator` extra (jinja2, datamodel-code-generator, libcst, black);
    # reading a schema into the IR (`diff`) does not.
    from .format import format_python
    from .render.models import render_models_module
    from .render.names import version_names
    from .render.split import split_models
    from .render.surface_modules import (
        render_about,
        render_client,
        render_messages,
        render_methods,
        render_server,
    )
    from .render.templates import render

    package = f"{PACKAGE}/{package_name(source.version)}"
    header = _header(f"the MCP schema {source.version} (schema.json sha256 {source.sha256})")
    wire = protocol_version_of(source, ir)
    python_files = {
        f"{package}/about.py": render_about(
            surface, package_name(source.version), source.sha256, header, wire, ir.dialect
        ),
        f"{package}/methods.py": render_methods(ir, surface, header),
        f"{package}/names.py": version_names(ir, surface, header),
        f"{package}/server.py": render_server(ir, surface, header),
        f"{package}/client.py": render_client(ir, surface, header, known_versions(wire)),
        f"{package}/_base.py": render("base.py.j2", header=header, version=source.version),
        f"{package}/__init__.py": render(
            "version_init.py.j2",
            header=header,
            version=source.version,
            names=[{"schema": n, "py": ir.py_name(n)} for n in ir.definitions],
        ),
    }
    models = split_models(render_models_module(ir, package.replace("/", ".")), ir, header)
    python_files.update({f"{package}/{path}": text for path, text in models.items()})
    messages = render_messages(ir, surface, header)
    if messages is not None:
        python_files[f"{package}/_messages.py"] = messages
    files = {path: format_python(text, path) for path, text in sorted(python_files.items())}
    files[f"{package}/py.typed"] = ""  # PEP 561, per subpackage of the `mcp_bindings` namespace
    return files, surface


def check_mcp_schema(source: VersionSource, surface: ProtocolSurface) -> None:
    """One clear sentence for a schema that is not an MCP schema (before any rendering)."""
    what = source.origin or f"the schema of {source.version}"
    if not surface.table("client_to_server", "request"):
        raise BindgenError(
            f"{what} is not an MCP schema: it defines no `ClientRequest` union of the requests a client sends"
        )
    if lifecycle_era(surface) is None:
        raise BindgenError(
            f"{what} is not an MCP schema: it defines neither `initialize` nor `server/discover`, "
            "so its lifecycle cannot be told"
        )


# A core version's IR and surface, as an extension plugging into it needs them.
Core = tuple[SchemaIR, ProtocolSurface]


@dataclass(frozen=True)
class RenderedVersion:
    """One pinned version as `generate` renders it: its files, and the IR and surface they came from
    (handed on to the extensions plugging into it and to the policy review, so nothing builds it again)."""

    version: str
    files: dict[str, str]
    ir: SchemaIR
    surface: ProtocolSurface


def render_pinned(versions: list[str] | None = None) -> dict[str, str]:
    """Every generated file for the given pinned versions (all when None), plus the package init."""
    rendered = render_pinned_versions(versions)
    return {**merged_files(rendered), **crossing_files(rendered)}


def crossing_files(rendered: list[RenderedVersion]) -> dict[str, str]:
    """The `crossing.py` of each rendered pinned version: its crossings with every pinned version
    before it (in pin order), both ways."""
    ready = {r.version: crossing.Version(r.version, r.ir, r.surface) for r in rendered}
    earlier: list[crossing.Version] = []
    out: dict[str, str] = {}
    for version, pin in load_pins().items():
        this = ready.get(version)
        if this is None and pin.local_path.is_file():
            ir = build_ir(pinned_source(version))
            this = crossing.Version(version, ir, derive_surface(ir))
        if this is None:
            continue
        if version in ready:
            out.update(crossing_file(version, pin.sha256, this, earlier))
        earlier.append(this)
    return out


def crossing_file(name: str, sha256: str, this: crossing.Version, others: list[crossing.Version]) -> dict[str, str]:
    """`crossing.py` of the version package `name`: its crossings with each of `others`, both ways."""
    from .format import format_python
    from .render.crossing_module import render_crossing

    path = f"{PACKAGE}/{package_name(name)}/crossing.py"
    header = _header(f"the MCP schema {name} (schema.json sha256 {sha256}) and the versions before it")
    text = render_crossing(this.wire, header, crossing.pairs_of(this, others))
    return {path: format_python(text, path)}


def render_pinned_versions(versions: list[str] | None = None) -> list[RenderedVersion]:
    """The given pinned versions (all when None), rendered, in pin order.

    Each version is rendered in its own worker process (rendering is CPU-bound pure Python and one
    version does not depend on another)."""
    return _in_workers(_render_pinned_version, versions or list(load_pins()))


def merged_files(rendered: list[RenderedVersion]) -> dict[str, str]:
    """The files of several rendered versions, merged in a fixed order."""
    out: dict[str, str] = {}
    for version in rendered:
        out.update(version.files)
    return dict(sorted(out.items()))


def _render_pinned_version(version: str) -> RenderedVersion:
    source = pinned_source(version)
    ir = build_ir(source)
    files, surface = render_ir(source, ir, derive_surface(ir))
    return RenderedVersion(version, files, ir, surface)


def _in_workers(fn: Callable[[T], R], items: list[T]) -> list[R]:
    """`[fn(item) for item in items]`, spread over up to one process per CPU."""
    workers = min(len(items), os.cpu_count() or 1)
    if workers <= 1:
        return [fn(item) for item in items]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, items))


@dataclass
class ExtensionRender:
    files: dict[str, str]
    # One line per pinned extension that could not be generated, saying why (not synced).
    notes: list[str]
    # The extension packages (paths relative to the src root) rendered or left as they are.
    dirs: list[str]
    # Extension identifier -> the methods its schema defines (None: not synced, not read); every
    # pinned extension plugging into the versions asked for. The policy review reads it.
    methods: dict[str, frozenset[str] | None] = field(default_factory=dict)
    # The schema patches (JSON pointers) the extension schemas had applied: the policy review counts
    # them as attached.
    patches: set[str] = field(default_factory=set)


def extension_dir(identifier: str) -> str:
    from .extension import EXT_PACKAGE, extension_package

    return f"{PACKAGE}/{EXT_PACKAGE}/{extension_package(identifier)}"


def render_extension(
    pin: ExtensionPin, raw: bytes, core: Core
) -> tuple[dict[str, str], frozenset[str], tuple[str, ...]]:
    """The files of one extension package, plugging into the pinned core version it names (`core`:
    that version's IR and surface), the methods its schema defines and the schema patches it had."""
    from .extension import extension_methods, references, spliced
    from .format import format_python
    from .render.extension_modules import (
        ExtensionView,
        render_ext_about,
        render_ext_client,
        render_ext_init,
        render_ext_methods,
        render_ext_models,
        render_ext_server,
    )
    from .render.names import extension_names

    source = VersionSource(pin.identifier, raw, sha256_of(raw), pin.core_version, str(pin.local_path))
    ir = build_ir(source)
    shared = spliced(ir, core[0])
    own = set(ir.definitions) - shared
    imports = set().union(*(references(ir.definitions[n]) for n in own)) & shared if own else set()
    methods = extension_methods(pin.identifier, ir, own)
    package = extension_dir(pin.identifier)
    view = ExtensionView(
        identifier=pin.identifier,
        core_version=pin.core_version,
        core_package=f"{PACKAGE}.{package_name(pin.core_version)}",
        package=package.replace("/", "."),
        source=pin.source,
        sha256=source.sha256,
        header=_header(f"the MCP extension {pin.identifier} schema ({pin.source}, sha256 {source.sha256})"),
    )
    python_files = {
        f"{package}/about.py": render_ext_about(view),
        f"{package}/models.py": render_ext_models(ir, own, shared, imports, view),
        f"{package}/methods.py": render_ext_methods(ir, methods, view),
        f"{package}/names.py": extension_names(pin.identifier, ir, methods, view.header),
        f"{package}/server.py": render_ext_server(ir, methods, view),
        f"{package}/client.py": render_ext_client(ir, methods, view, core),
        f"{package}/__init__.py": render_ext_init(ir, own, view),
    }
    files = {path: format_python(text, path) for path, text in python_files.items()}
    files[f"{package}/py.typed"] = ""
    return files, frozenset(m.method for m in methods), ir.patches


def pinned_extension_patches() -> set[str]:
    """The schema patches (JSON pointers) that apply to a synced pinned extension schema: what the
    policy review counts as attached when a run renders no extension (one new version)."""
    from .normalise import load_patches, patch_applies

    docs = [json.loads(raw) for pin in load_extension_pins().values() if (raw := read_extension(pin)) is not None]
    return {p.pointer for p in load_patches() for doc in docs if patch_applies(doc, p)}


def unsynced_note(pin: ExtensionPin) -> str:
    """The line saying an extension's package is neither generated nor verified ("" when synced)."""
    if pin.local_path.is_file():
        return ""
    return (
        f"extension {pin.identifier}: not verified: schema not synced ({pin.local_path} is missing; "
        "run `mcp-bindgen schema sync`)"
    )


def render_extensions(versions: list[str] | None = None, cores: Mapping[str, Core] | None = None) -> ExtensionRender:
    """Every pinned extension plugging into one of `versions` (all when None) whose schema is
    synced; one note per extension that is not (its committed package is then left alone).

    `cores` are the IR and surface of the core versions already built (`RenderedVersion`); a core
    version not among them is built here."""
    done = ExtensionRender({}, [], [])
    for pin in load_extension_pins().values():
        if versions and pin.core_version not in versions:
            continue
        done.dirs.append(extension_dir(pin.identifier))
        raw = read_extension(pin)
        done.methods[pin.identifier] = None
        if raw is None:
            done.notes.append(unsynced_note(pin))
            continue
        core = (cores or {}).get(pin.core_version) or _core(pin.core_version)
        files, done.methods[pin.identifier], patches = render_extension(pin, raw, core)
        done.files.update(files)
        done.patches.update(patches)
    done.files = dict(sorted(done.files.items()))
    return done


def _core(version: str) -> Core:
    ir = build_ir(pinned_source(version))
    return ir, derive_surface(ir)


def slug(version: str) -> str:
    """`draft` -> `draft`, `2026-09-30` -> `2026-09-30`, `My Next` -> `my-next`: for folder and
    distribution names."""
    text = re.sub(r"[^0-9a-zA-Z]+", "-", version).strip("-").lower()
    if not text:
        raise BindgenError(f"version name {version!r} has no usable characters")
    return text


def generated_dirs(versions: list[str]) -> list[str]:
    return [f"{PACKAGE}/{package_name(v)}" for v in versions]
