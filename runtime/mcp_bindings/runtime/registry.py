"""Which protocol versions exist: discovered, not listed.

A version is a subpackage of the `mcp_bindings` namespace with an `about.INFO` (what the generator
writes for each schema). Every root that contributes to the namespace counts: the pinned versions
of this distribution and any generated later into another folder on `sys.path`. Discovery reads
only the small `about` modules; a version's models and tables load when it is first used.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

from .spec import ProtocolTables, VersionInfo

NAMESPACE = "mcp_bindings"


@cache
def _discovered() -> dict[str, VersionInfo]:
    namespace = importlib.import_module(NAMESPACE)
    found: list[VersionInfo] = []
    for module in pkgutil.iter_modules(namespace.__path__):
        if module.ispkg and module.name.startswith("v"):
            about = _about(module)
            info = getattr(about, "INFO", None) if about is not None else None
            if isinstance(info, VersionInfo):
                found.append(info)
    return {info.version: info for info in sorted(found, key=lambda info: info.version)}


def _about(module: pkgutil.ModuleInfo) -> ModuleType | None:
    """A version package's `about` module, without importing the package (whose `__init__` loads
    every model of the version). It is registered under its own name, so the package, when it is
    imported later, finds and keeps this very module. None for a package that is not a version."""
    name = f"{NAMESPACE}.{module.name}.about"
    if name in sys.modules:
        return sys.modules[name]
    folder = getattr(module.module_finder, "path", None)
    path = Path(folder, module.name, "about.py") if isinstance(folder, str) else None
    if path is None or not path.is_file():
        try:  # not a plain folder (e.g. a zip): import it the ordinary way
            return importlib.import_module(name)
        except ModuleNotFoundError:
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
    """Forget what was discovered (after generating a version into a running process's path)."""
    for cached in (_discovered, protocol_version_keys, newest_stateless):
        cached.cache_clear()


def versions() -> dict[str, VersionInfo]:
    """Every known protocol version, oldest first."""
    return dict(_discovered())


def info(version: str) -> VersionInfo:
    try:
        return _discovered()[version]
    except KeyError:
        known = ", ".join(_discovered()) or "none (run `mcp-bindgen generate`)"
        raise LookupError(f"unknown MCP protocol version {version!r}; known: {known}") from None


def handshake_versions() -> list[str]:
    """Versions negotiated with `initialize`, oldest first."""
    return [v for v, i in _discovered().items() if not i.stateless]


def stateless_versions() -> list[str]:
    """Versions without a handshake (every request carries its `_meta`), oldest first."""
    return [v for v, i in _discovered().items() if i.stateless]


def load_version(version: str) -> ModuleType:
    """The package of one protocol version, imported on first use: `load_version("2025-11-25")`."""
    return importlib.import_module(f"{NAMESPACE}.{info(version).package}")


@cache
def protocol(version: str) -> ProtocolTables:
    """The generated tables of one protocol version (`methods.PROTOCOL`), imported on first use."""
    methods = importlib.import_module(f"{NAMESPACE}.{info(version).package}.methods")
    tables = methods.PROTOCOL
    assert isinstance(tables, ProtocolTables)
    return tables


@cache
def protocol_version_keys() -> frozenset[str]:
    """The `_meta` keys that mark a request as stateless-era (its protocol version), across versions.
    Read for every request that arrives without a session: cached."""
    return frozenset(key for i in _discovered().values() if i.stateless and (key := i.meta.protocol_version))


@cache
def newest_stateless() -> ProtocolTables | None:
    """The tables of the newest stateless version (whose error codes and `_meta` keys answer a
    stateless request before its own version is known), or None where there is none. Cached."""
    names = stateless_versions()
    return protocol(names[-1]) if names else None
