"""Which protocol versions exist: discovered, not listed.

A version is a package with an `about.INFO` (what the generator writes for each schema). Two routes
find them:

- every subpackage of the `mcp_bindings` namespace, across all of its roots: the pinned versions of
  this distribution and any generated later into another folder on `sys.path`;
- the entry-point group `mcp_bindings.versions` (`name = "<dotted package>"`), which a package made by
  `mcp-bindgen generate --package` declares, so an installed version is found wherever it lives.

Discovery reads only the small `about` modules; a version's models and tables load when it is first
used. A version asked for by name (`info`, `load_version`, `protocol`) that is in the namespace is
found without reading the entry points (`importlib.metadata`); listing every version reads them.

Each version has a name (what it was generated under: `2025-11-25`, `draft`) and a wire protocol
version (`INFO.version`). The runtime speaks wire versions: `versions()`, `handshake_versions()`,
`stateless_versions()` are keyed by them. Several generated versions may share one wire version
(`draft` generated from the same schema as `2026-07-28`): the wire version then stands for the one
named after it, else the first by name; a server or client written on another one's stub speaks it
with its own tables (`protocol(version, own=...)`). `info`, `load_version` and `protocol` take a name
or a wire version.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType

from mcp_bindings.runtime.protocol.spec import NO_CROSSING, Crossing, ProtocolTables, VersionInfo

NAMESPACE = "mcp_bindings"
ENTRY_POINT_GROUP = "mcp_bindings.versions"


@dataclass(frozen=True)
class _Found:
    info: VersionInfo
    module: str  # the dotted name of the version package


@cache
def _on_path() -> dict[str, _Found]:
    """The versions of the `mcp_bindings` namespace by name (no entry points read)."""
    found: dict[str, _Found] = {}
    for item in _from_namespace():
        found.setdefault(item.info.key, item)
    return found


@cache
def _by_name() -> dict[str, _Found]:
    found = dict(_on_path())
    for item in _from_entry_points():
        found.setdefault(item.info.key, item)  # the same version seen by both routes: keep the first
    return {name: found[name] for name in sorted(found, key=lambda n: (found[n].info.version, n))}


@cache
def _discovered() -> dict[str, VersionInfo]:
    """Wire version -> the version that stands for it, oldest first."""
    out: dict[str, VersionInfo] = {}
    for name, item in _by_name().items():
        wire = item.info.version
        if wire not in out or name == wire:
            out[wire] = item.info
    return out


def _from_namespace() -> list[_Found]:
    namespace = importlib.import_module(NAMESPACE)
    found: list[_Found] = []
    for module in sorted(pkgutil.iter_modules(namespace.__path__), key=lambda m: m.name):
        if module.ispkg and module.name.startswith("v"):
            folder = getattr(module.module_finder, "path", None)
            location = Path(folder, module.name) if isinstance(folder, str) else None
            item = _version_at(f"{NAMESPACE}.{module.name}", location)
            if item is not None:
                found.append(item)
    return found


def _from_entry_points() -> list[_Found]:
    from importlib.metadata import entry_points  # only here: most lookups are answered from the namespace (`_find`)

    found: list[_Found] = []
    for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.name, e.value)):
        package = entry.value.split(":", 1)[0].strip()
        try:
            spec = importlib.util.find_spec(package)  # imports the parents only, not the package
        except (ImportError, ValueError):
            spec = None
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        item = _version_at(package, Path(locations[0]) if locations else None)
        if item is not None:
            found.append(item)
    return found


def _version_at(package: str, location: Path | None) -> _Found | None:
    about = _about(package, location)
    info = getattr(about, "INFO", None) if about is not None else None
    return _Found(info, package) if isinstance(info, VersionInfo) else None


def _about(package: str, location: Path | None) -> ModuleType | None:
    """A version package's `about` module, without importing the package (whose `__init__` loads
    every model of the version). It is registered under its own name, so the package, when it is
    imported later, finds and keeps this very module. None for a package that is not a version."""
    name = f"{package}.about"
    if name in sys.modules:
        return sys.modules[name]
    path = location / "about.py" if location is not None else None
    if path is None or not path.is_file():
        try:  # not a plain folder (e.g. a zip): import it the ordinary way
            return importlib.import_module(name)
        except ImportError:
            return None
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        return None
    about = importlib.util.module_from_spec(spec)
    sys.modules[name] = about
    try:
        spec.loader.exec_module(about)
    except BaseException:
        del sys.modules[name]
        raise
    return about


def refresh() -> None:
    """Forget what was discovered (after generating or installing a version into a running process)."""
    for cached in (_on_path, _by_name, _discovered, _protocol, crossing, protocol_version_keys, newest_stateless):
        cached.cache_clear()
    importlib.invalidate_caches()


def versions() -> dict[str, VersionInfo]:
    """Every wire protocol version the runtime speaks, oldest first."""
    return dict(_discovered())


def names() -> dict[str, VersionInfo]:
    """Every generated version by the name it was generated under, by wire version then name."""
    return {name: item.info for name, item in _by_name().items()}


def on_path() -> dict[str, VersionInfo]:
    """The versions of the `mcp_bindings` namespace by name, found without reading the entry points
    (a subset of `names()`; a name here stands for the same version there)."""
    return {name: item.info for name, item in _on_path().items()}


def _find(version: str) -> _Found:
    on_path = _on_path()  # a version by its name in the namespace wins over entry points: no need to read them
    if version in on_path:
        return on_path[version]
    by_name = _by_name()
    if version in by_name:
        return by_name[version]
    wire = _discovered().get(version)
    if wire is not None:
        return by_name[wire.key]
    known = ", ".join(by_name) or "none (run `mcp-bindgen generate`)"
    raise LookupError(f"unknown MCP protocol version {version!r}; known: {known}")


def info(version: str) -> VersionInfo:
    """A version by name (`draft`) or by wire version (`2025-11-25`)."""
    return _find(version).info


def wire_version(version: str) -> str:
    """The wire protocol version of a version given by name or wire version."""
    return _find(version).info.version


def default_version(stateless: bool | None = None) -> str:
    """The version used when none is named: the newest released one (of the era asked for), never a
    draft or a copy generated under another name (`VersionInfo.released`); the newest of all only
    where none is released. Raises LookupError where there is none."""
    found = [(i.version, i.key, i.released) for i in names().values() if stateless is None or i.stateless is stateless]
    if not found:
        raise LookupError("no MCP protocol version is installed (run `mcp-bindgen generate`)")
    released = [f for f in found if f[2]]
    return max(released or found)[1]


def handshake_versions() -> list[str]:
    """Wire versions negotiated with `initialize`, oldest first."""
    return [v for v, i in _discovered().items() if not i.stateless]


def stateless_versions() -> list[str]:
    """Wire versions without a handshake (every request carries its `_meta`), oldest first."""
    return [v for v, i in _discovered().items() if i.stateless]


def load_version(version: str) -> ModuleType:
    """The package of one protocol version, imported on first use: `load_version("2025-11-25")`."""
    return importlib.import_module(_find(version).module)


@cache
def _protocol(version: str) -> ProtocolTables:
    tables = importlib.import_module(f"{_find(version).module}.methods").PROTOCOL
    assert isinstance(tables, ProtocolTables)
    return tables


def protocol(version: str, own: ProtocolTables | None = None) -> ProtocolTables:
    """The generated tables of one protocol version (`methods.PROTOCOL`), imported on first use.

    `own`: the tables of the stub a server or client is written on; when they speak `version` (the
    same wire version), they are the answer, so a version generated under another name (`draft`)
    serves and connects with its own models."""
    if own is not None and (own.version == version or own.info.key == version):
        return own
    return _protocol(version)


@cache
def crossing(source: str, destination: str) -> Crossing:
    """The generated crossing table from version `source` to `destination` (wire versions or names),
    held by the package of the later one (`crossing.py`); an empty one where neither has it."""
    try:
        key = (wire_version(source), wire_version(destination))
    except LookupError:
        return NO_CROSSING
    for version in (destination, source):
        try:
            module = importlib.import_module(f"{_find(version).module}.crossing")
        except (LookupError, ModuleNotFoundError):
            continue
        table = module.CROSSINGS.get(key)
        if isinstance(table, Crossing):
            return table
    return NO_CROSSING


@cache
def protocol_version_keys() -> frozenset[str]:
    """The `_meta` keys that mark a request as stateless-era (its protocol version), across versions.
    Read for every request that arrives without a session: cached."""
    return frozenset(key for i in _discovered().values() if i.stateless and (key := i.meta.protocol_version))


@cache
def newest_stateless() -> ProtocolTables | None:
    """The tables of the newest stateless version (whose error codes and `_meta` keys answer a
    stateless request before its own version is known), or None where there is none. Cached."""
    wires = stateless_versions()
    return protocol(wires[-1]) if wires else None
