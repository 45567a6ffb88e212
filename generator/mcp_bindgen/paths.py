"""Where the project's inputs and outputs live, for a checkout and for an installed wheel."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def checkout() -> Path | None:
    """The project checkout this generator runs from (`MCP_BINDGEN_ROOT` stands for one, for tests
    that work in a temporary copy); None when it runs from an installed wheel."""
    override = os.environ.get("MCP_BINDGEN_ROOT")
    if override:
        return Path(override).resolve()
    root = _PACKAGE_DIR.parent.parent
    if (root / "pyproject.toml").is_file() and (root / "generator").is_dir():
        return root
    return None


def project_root() -> Path:
    """The checkout this generator runs from, or the current directory for an installed copy."""
    return checkout() or Path.cwd()


def pinned_schema(version: str) -> Path:
    """Where the synced schema.json of a pinned version is: `schema/<version>/` of the checkout, or the
    copy an installed wheel carries (verified by sha256 all the same)."""
    root = checkout()
    if root is None:
        shipped = _PACKAGE_DIR / "_schema" / version / "schema.json"
        if shipped.is_file():
            return shipped
        root = Path.cwd()
    return root / "schema" / version / "schema.json"


def pinned_extension_schema(folder: str) -> Path:
    """Where the synced schema.json of a pinned extension is: `schema/extensions/<folder>/` of the
    checkout (or the copy an installed wheel carries)."""
    root = checkout()
    if root is None:
        shipped = _PACKAGE_DIR / "_schema" / "extensions" / folder / "schema.json"
        if shipped.is_file():
            return shipped
        root = Path.cwd()
    return root / "schema" / "extensions" / folder / "schema.json"


def pinned_file(relative: str) -> Path:
    """A file the project commits under schema/ (`schema/NAME`): the checkout's, or the copy an
    installed wheel carries (`_schema/NAME`)."""
    root = checkout()
    if root is None:
        shipped = _PACKAGE_DIR / "_schema" / Path(relative).relative_to("schema")
        if shipped.is_file():
            return shipped
        root = Path.cwd()
    return root / relative


def templates_dir() -> Path:
    in_checkout = _PACKAGE_DIR.parent.parent / "templates"
    return in_checkout if in_checkout.is_dir() else _PACKAGE_DIR / "_templates"


def manifest_path() -> Path:
    local = project_root() / "schema" / "manifest.json"
    return local if local.is_file() else _PACKAGE_DIR / "_schema" / "manifest.json"


def policy_dir() -> Path:
    return _PACKAGE_DIR / "policy"


def generated_root() -> Path:
    """The src root of `mcp_bindings`."""
    return project_root() / "generated"
