"""Where the project's inputs and outputs live, for a checkout and for an installed wheel."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def project_root() -> Path:
    """The checkout this generator runs from, or the current directory for an installed copy.

    `MCP_BINDGEN_ROOT` overrides both (used by tests that work in a temporary copy).
    """
    override = os.environ.get("MCP_BINDGEN_ROOT")
    if override:
        return Path(override).resolve()
    checkout = _PACKAGE_DIR.parent.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "generator").is_dir():
        return checkout
    return Path.cwd()


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
