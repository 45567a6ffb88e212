"""The generated versions installed where this generator runs, without importing the runtime.

They are found as the runtime's registry finds them: every `v*` subpackage of the `mcp_bindings`
namespace (across all of its roots), then the packages the entry-point group `mcp_bindings.versions`
names (what `mcp-bindgen generate --package` declares). A version package's `about.py` is the
generator's own output (`templates/about.py.j2`); it is read as text, never executed (executing it
would import the runtime's `spec`).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
from dataclasses import dataclass
from importlib.metadata import Distribution
from pathlib import Path

from .origin import read_origin

NAMESPACE = "mcp_bindings"
ENTRY_POINT_GROUP = "mcp_bindings.versions"


@dataclass(frozen=True)
class InstalledVersion:
    name: str  # what it was generated under (the registry's key): `2025-11-25`, `draft`
    version: str  # the wire protocol version
    package: str  # the subpackage of `mcp_bindings`, e.g. `v2025_11_25`
    # The distribution that declares it (`generate --package`: its entry point), as a requirement
    # (`mcp-bindings-draft @ file:///...` where it was installed from, else `mcp-bindings-draft==0.1.0`);
    # None for the versions of mcp-bindgen itself or of a checkout.
    requirement: str | None = None
    released: bool = False  # a released protocol version, not a draft (its about.py says)


def installed_versions() -> dict[str, InstalledVersion]:
    """Version name -> the installed version, by wire version then name (the registry's `names()`)."""
    found: dict[str, InstalledVersion] = {}
    declared = _entry_point_folders()
    for folder in [*_namespace_folders(), *declared]:
        item = read_about(folder / "about.py")
        if item is not None:
            found.setdefault(item.name, item)  # seen by both routes: keep the first, as the registry does
    for folder, requirement in declared.items():
        item = read_about(folder / "about.py")
        if item is not None and requirement is not None and found[item.name].package == item.package:
            found[item.name] = dataclasses.replace(found[item.name], requirement=requirement)
    return {name: found[name] for name in sorted(found, key=lambda n: (found[n].version, n))}


def _namespace_folders() -> list[Path]:
    try:
        spec = importlib.util.find_spec(NAMESPACE)
    except (ImportError, ValueError):
        return []
    roots = list(spec.submodule_search_locations or []) if spec is not None else []
    folders = []
    for root in roots:
        children = sorted(Path(root).iterdir(), key=lambda p: p.name) if Path(root).is_dir() else []
        folders += [child for child in children if child.name.startswith("v") and (child / "__init__.py").is_file()]
    return sorted(folders, key=lambda p: p.name)


def _entry_point_folders() -> dict[Path, str | None]:
    """The folders the entry points name -> the requirement on the distribution declaring each."""
    from importlib.metadata import entry_points

    folders: dict[Path, str | None] = {}
    for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.name, e.value)):
        package = entry.value.split(":", 1)[0].strip()
        try:
            spec = importlib.util.find_spec(package)  # imports the parents only, not the package
        except (ImportError, ValueError):
            continue
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        if locations:
            folders[Path(locations[0])] = _requirement(entry.dist)
    return folders


def _requirement(dist: Distribution | None) -> str | None:
    """`name @ URL` where the distribution was installed from a wheel, folder or repository (a draft
    package is on no package index), else `name==version`."""
    if dist is None:
        return None
    origin = read_origin(dist.read_text("direct_url.json"))
    return f"{dist.name} @ {origin.url}" if origin is not None else f"{dist.name}=={dist.version}"


def read_about(path: Path) -> InstalledVersion | None:
    """The name, wire version and package an `about.py` states in its `INFO = VersionInfo(...)`;
    None for a file that is no version's `about`."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and [ast.unparse(t) for t in node.targets] == ["INFO"]
            and isinstance(node.value, ast.Call)
        ):
            stated = {
                k.arg: k.value.value
                for k in node.value.keywords
                if k.arg in ("version", "package", "name", "released") and isinstance(k.value, ast.Constant)
            }
            version, package, name = stated.get("version"), stated.get("package"), stated.get("name")
            if isinstance(version, str) and isinstance(package, str):
                name = name if isinstance(name, str) and name else version
                return InstalledVersion(name, version, package, released=stated.get("released") is True)
    return None


def default_version(versions: dict[str, InstalledVersion]) -> str:
    """The version used when none is named, as the runtime's registry picks it: the newest released
    one, never a draft (the newest of all only where none is released)."""
    released = [name for name, v in versions.items() if v.released]
    return (released or list(versions))[-1]
