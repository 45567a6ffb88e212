"""Deprecated aliases of module paths that moved: `moved(alias, name, home)` is what an alias module's
`__getattr__` returns, with a `DeprecationWarning` naming the new home, so a path users wrote keeps
working (the same object) while it warns."""

from __future__ import annotations

import warnings
from types import ModuleType
from typing import Any

__all__ = ["moved"]


def moved(alias: str, name: str, home: ModuleType | None) -> Any:
    """`name` of alias module `alias`, now in `home` (None: the alias never had it)."""
    if home is None or not hasattr(home, name):
        raise AttributeError(f"module {alias!r} has no attribute {name!r}")
    warnings.warn(f"{alias} is deprecated: import {name} from {home.__name__}", DeprecationWarning, stacklevel=3)
    return getattr(home, name)
