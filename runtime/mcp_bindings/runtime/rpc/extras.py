"""What each part of the runtime needs installed, checked where the part is first imported: a missing
dependency names the extra that brings it (`pip install 'mcp-bindgen[http]'`), instead of a bare
`No module named 'anyio'` from deep inside the runtime."""

from __future__ import annotations

import importlib.util

__all__ = ["missing", "require"]


def require(part: str, extra: str, *modules: str) -> None:
    """Raise `ModuleNotFoundError` naming `extra` when one of `modules` is not installed (looked up,
    not imported: the part imports them next)."""
    for name in modules:
        if importlib.util.find_spec(name) is None:
            raise missing(ModuleNotFoundError(name=name), part, extra)


def missing(exc: ModuleNotFoundError, part: str, extra: str) -> ModuleNotFoundError:
    """The error to raise where importing a dependency of `part` failed with `exc`."""
    name = exc.name or "a dependency"
    return ModuleNotFoundError(
        f"{part} needs {name!r}, which is not installed: pip install 'mcp-bindgen[{extra}]'", name=exc.name
    )
