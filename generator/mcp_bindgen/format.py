"""Formatting of every generated Python file (black, the project's line length)."""

from __future__ import annotations

import black
from black.mode import TargetVersion
from black.parsing import InvalidInput

_MODE = black.Mode(line_length=100, target_versions={TargetVersion.PY311})


def format_python(source: str, origin: str) -> str:
    try:
        return black.format_str(source, mode=_MODE)
    except InvalidInput as exc:  # a generator bug: say which file
        raise SyntaxError(f"generated {origin} is not valid Python: {exc}") from exc
