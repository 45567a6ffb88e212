"""Writing generated files (`generate`) and comparing them with what is on disk (`check`).

`generate` writes either the pinned versions (into the checkout's `generated/`, or `--out DIR`) or one
version from a schema file (`--schema FILE|DIR --version NAME`): into a src root (`--out DIR`, or the
checkout's `generated/`), or as an installable distribution (`--package NAME`, and by default when
the generator runs from an installed wheel) whose entry point lets the runtime find the version
wherever it is installed. Each run ends with the policy review (`review.py`).
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__, crossing
from .errors import BindgenError
from .ir import SchemaIR
from .origin import install_origin
from .paths import checkout, generated_root
from .pins import Pin, load_extension_pins, load_pins
from .pipeline import (
    PACKAGE,
    RenderedVersion,
    VersionSource,
    build_ir,
    check_mcp_schema,
    crossing_file,
    crossing_files,
    file_source,
    generated_dirs,
    merged_files,
    package_name,
    pinned_extension_patches,
    pinned_source,
    protocol_version_of,
    render_extensions,
    render_ir,
    render_pinned,
    render_pinned_versions,
    slug,
    unsynced_note,
)
from .render.templates import render
from .review import Known, Review, review
from .surface import ProtocolSurface, derive_surface

_DIST_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")


@dataclass
class Generated:
    written: list[Path]
    root: Path  # the src root the version packages went into
    project: Path | None = None  # the installable distribution, when one was written
    review: Review = field(default_factory=Review)
    notes: list[str] = field(default_factory=list[str])  # e.g. an extension not generated: not synced


def _root(out: str | None) -> Path:
    return Path(out).resolve() if out else generated_root()


def pinned_known(skip: str | None = None, built: Iterable[RenderedVersion] = ()) -> list[Known]:
    """The pinned versions whose schema is at hand, as the review sees them. Those in `built` (rendered
    by this run already) are taken as they are; only the others are read here."""
    ready = {r.version: r for r in built}
    known = []
    for version, pin in load_pins().items():
        if version == skip:
            continue
        if version in ready:
            known.append(Known(version, ready[version].ir, ready[version].surface, pinned=True))
        elif pin.local_path.is_file():
            ir = build_ir(pinned_source(version))
            known.append(Known(version, ir, derive_surface(ir), pinned=True))
    return known


def generate_files(
    versions: list[str] | None,
    schema: Path | None,
    out: str | None,
    *,
    package: str | None = None,
    protocol_version: str | None = None,
    force: bool = False,
) -> Generated:
    if schema is None:
        if package or protocol_version or force:
            raise BindgenError("--package, --protocol-version and --force go with --schema FILE --version NAME")
        root = _root(out)
        # Each pinned version's IR is built once, in its worker: the extensions and the review reuse it.
        rendered = render_pinned_versions(versions)
        files = {**merged_files(rendered), **crossing_files(rendered)}
        extensions = render_extensions(versions, {r.version: (r.ir, r.surface) for r in rendered})
        files.update(extensions.files)
        # An extension whose schema is not synced keeps its committed package as it is.
        dirs = [d for d in extensions.dirs if any(rel.startswith(d + "/") for rel in extensions.files)]
        _remove_stale(root, generated_dirs(versions or list(load_pins())) + dirs, files)
        report = review(pinned_known(built=rendered), extensions=extensions.methods, patched=extensions.patches)
        return Generated(_write(root, files), root, review=report, notes=extensions.notes)
    if not versions or len(versions) != 1:
        raise BindgenError("--schema needs exactly one --version NAME for the new version")
    if out and package:
        raise BindgenError("give --out DIR (a src root) or --package NAME (an installable distribution), not both")
    check_version_name(versions[0])
    source = file_source(schema, versions[0], protocol_version)
    _refuse_pinned_overwrite(source, force)
    ir, surface = _read(source)
    files, _ = render_ir(source, ir, surface)
    pinned = pinned_known(skip=source.version)
    this_version = crossing.Version(protocol_version_of(source, ir), ir, surface)
    files.update(
        crossing_file(
            source.version, source.sha256, this_version, [crossing.Version(k.name, k.ir, k.surface) for k in pinned]
        )
    )
    is_pinned = _pin_named(source.version) is not None
    this = Known(source.version, ir, surface, pinned=is_pinned)
    report = review([*pinned, this], new=[] if is_pinned else [source.version], patched=pinned_extension_patches())
    if package is None and (out or checkout() is not None):
        root = _root(out)
        _refuse_ambiguous(root, source.version, protocol_version_of(source, ir), force)
        _remove_stale(root, generated_dirs([source.version]), files)
        return Generated(_write(root, files), root, review=report)
    project = Path(package) if package else Path.cwd() / f"mcp-bindings-{slug(source.version)}"
    return _write_project(project.resolve(), source, protocol_version_of(source, ir), files, report)


def _read(source: VersionSource) -> tuple[SchemaIR, ProtocolSurface]:
    """IR and surface of a user's schema file; anything it cannot be read as is one sentence."""
    what = source.origin or f"the schema of {source.version}"
    try:
        ir = build_ir(source)
        surface = derive_surface(ir)
    except BindgenError:
        raise
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
        raise BindgenError(
            f"{what} is not an MCP schema this generator can read ({type(exc).__name__}: {exc})"
        ) from None
    check_mcp_schema(source, surface)
    protocol_version_of(source, ir)  # say now when the wire version cannot be told
    return ir, surface


def _pin_named(version: str) -> Pin | None:
    """The pin a version name would overwrite: the same name, or a name with the same package."""
    for pin in load_pins().values():
        if version == pin.version or package_name(version) == package_name(pin.version):
            return pin
    return None


_VERSION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def check_version_name(name: str) -> None:
    """A version name given with --schema must name its package unambiguously."""
    if not _VERSION_NAME.fullmatch(name):
        raise BindgenError(
            f"--version {name!r}: a version name holds only letters, digits, '.', '-' and '_' and starts with "
            "a letter or digit (e.g. --version draft); it names the package the version is loaded by"
        )


def _generated_info(package_dir: Path) -> dict[str, str]:
    """The `name` and wire `version` a generated package's about.py declares (read as Python, not
    imported: it is this generator's own output)."""
    about = package_dir / "about.py"
    if not about.is_file():
        return {}
    for node in ast.walk(ast.parse(about.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "VersionInfo":
            return {
                k.arg: k.value.value
                for k in node.keywords
                if k.arg in ("name", "version") and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)
            }
    return {}


def _refuse_ambiguous(root: Path, name: str, wire: str, force: bool) -> None:
    """Refuse a version that another generated package of `root` would be confused with: one that
    takes the same package under another name, or one that serves the same wire version (the
    runtime would load either for it)."""
    if force:
        return
    pinned = {package_name(v) for v in load_pins()}
    mine = package_name(name)
    for package_dir in sorted((root / PACKAGE).glob("v*")):
        if package_dir.name in pinned:
            continue
        info = _generated_info(package_dir)
        other = info.get("name", package_dir.name)
        if package_dir.name == mine and other != name:
            raise BindgenError(
                f"--version {name!r} would replace the package of version {other!r} ({PACKAGE}.{mine}): "
                f"name it differently, or remove {package_dir} first"
            )
        if package_dir.name != mine and info.get("version") == wire:
            raise BindgenError(
                f"{PACKAGE}.{package_dir.name} (version {other!r}) already serves wire version {wire}; two packages "
                f"for one wire version make the runtime load either: remove {package_dir}, or give this schema "
                "another --protocol-version (--force generates it anyway)"
            )


def _refuse_pinned_overwrite(source: VersionSource, force: bool) -> None:
    pin = _pin_named(source.version)
    if pin is None or pin.sha256 == source.sha256 or force:
        return
    raise BindgenError(
        f"refusing to overwrite the pinned version {pin.version} (schema sha256 {pin.sha256}) with "
        f"{source.origin} (sha256 {source.sha256}): pick another --version name, or pass --force to mean it"
    )


def _write(root: Path, files: dict[str, str]) -> list[Path]:
    written = []
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def _write_project(
    project: Path, source: VersionSource, wire_version: str, files: dict[str, str], report: Review
) -> Generated:
    """An installable distribution holding one version: `pip install PROJECT` and the runtime finds it
    (entry point `mcp_bindings.versions`, and the `mcp_bindings` namespace)."""
    dist_name = project.name
    if not _DIST_NAME.match(dist_name):
        raise BindgenError(f"--package {dist_name!r} is not a valid distribution name (letters, digits, . _ -)")
    context = {
        "generator_version": __version__,
        "dist_name": dist_name,
        "name": source.version,
        "wire_version": wire_version,
        "package": package_name(source.version),
        "package_version": __version__,
        "sha256": source.sha256,
        **bindgen_dependency(),
    }
    root = project / "src"
    _remove_stale(root, generated_dirs([source.version]), files)
    written = _write(root, files)
    written += _write(
        project,
        {
            "pyproject.toml": render("version_project/pyproject.toml.j2", **context),
            "README.md": render("version_project/README.md.j2", **context),
        },
    )
    return Generated(written, root, project, report)


def bindgen_dependency() -> dict[str, Any]:
    """A version package's requirement on mcp-bindgen: the wheel this generator was installed from,
    where it was (pip leaves an installed copy of the same wheel alone, and installs it where none is:
    before a release the index has none), else this version or newer (an editable checkout, the index)."""
    origin = install_origin("mcp-bindgen")
    if origin is None or origin.kind != "wheel":
        return {"bindgen_requirement": f"mcp-bindgen>={__version__}", "hatch_metadata": []}
    return {
        "bindgen_requirement": f"mcp-bindgen @ {origin.url}",
        "hatch_metadata": ["", "[tool.hatch.metadata]", "allow-direct-references = true  # mcp-bindgen from a wheel"],
    }


def _remove_stale(root: Path, dirs: list[str], files: dict[str, str]) -> None:
    """Generated version packages hold only what the generator writes: drop leftovers."""
    for rel_dir in dirs:
        for path in sorted((root / rel_dir).rglob("*")) if (root / rel_dir).is_dir() else []:
            if path.is_file() and "__pycache__" not in path.parts and path.relative_to(root).as_posix() not in files:
                path.unlink()


def check_files(out: str | None) -> list[str]:
    """A readable diff per generated file that differs, is missing or should not be there."""
    root = _root(out)
    expected = render_pinned()
    extensions = render_extensions()
    expected.update(extensions.files)
    # The package of an extension whose schema is not synced cannot be verified (`extension_notes`).
    unverified = [d + "/" for d in extensions.dirs if not any(rel.startswith(d + "/") for rel in extensions.files)]
    problems = []
    for rel, text in expected.items():
        path = root / rel
        actual = path.read_text(encoding="utf-8") if path.is_file() else ""
        if actual != text:
            diff = difflib.unified_diff(
                actual.splitlines(keepends=True),
                text.splitlines(keepends=True),
                fromfile=f"committed/{rel}",
                tofile=f"generated/{rel}",
                n=2,
            )
            problems.append(
                f"--- {rel} differs" + ("" if path.is_file() else " (missing)") + "\n" + "".join(list(diff)[:80])
            )
    unpinned = _unpinned_packages(root, expected)
    for package_dir, name in unpinned.items():
        rel = package_dir.relative_to(root).as_posix()
        problems.append(
            f"--- {rel}/ holds version {name!r}, generated with --schema from a schema that is not pinned: "
            f"to keep it, pin it (mcp-bindgen schema pin VERSION --from SCHEMA --commit SHA); else remove {rel}/"
        )
    for path in sorted(root.rglob("*")) if root.is_dir() else []:
        if not path.is_file() or "__pycache__" in path.parts or any(d in path.parents for d in unpinned):
            continue
        rel = path.relative_to(root).as_posix()
        if rel not in expected and not rel.startswith(tuple(unverified)):
            problems.append(f"--- {rel} is not generated by mcp-bindgen (stale or hand-written)")
    return problems


def _unpinned_packages(root: Path, expected: dict[str, str]) -> dict[Path, str]:
    """Version packages this generator wrote from a schema that is not pinned (`generate --schema`):
    folder -> version name."""
    found: dict[Path, str] = {}
    for package_dir in sorted((root / PACKAGE).glob("v*")) if (root / PACKAGE).is_dir() else []:
        rel = package_dir.relative_to(root).as_posix()
        if any(key.startswith(rel + "/") for key in expected):
            continue  # a pinned version's package
        name = _generated_info(package_dir).get("name")
        if name is not None:
            found[package_dir] = name
    return found


def extension_notes() -> list[str]:
    """One line per pinned extension `check` cannot verify (its schema is not synced)."""
    return [note for pin in load_extension_pins().values() if (note := unsynced_note(pin))]


__all__ = ["PACKAGE", "Generated", "check_files", "extension_notes", "generate_files", "pinned_known"]
