"""Deprecated alias: the tasks extension's wire shapes moved to `mcp_bindings.runtime.tasks.core.wire`
(issue 47, tasks in one home). `from mcp_bindings.runtime.protocol.tasks_wire import EXTENSION`, as
docs/extensions.md showed, keeps working with a `DeprecationWarning`; nothing in the runtime imports
this module."""

from __future__ import annotations

import warnings
from typing import Any

from mcp_bindings.runtime.tasks.core import wire


def __getattr__(name: str) -> Any:
    if name not in wire.__all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"{__name__} is deprecated: import {name} from {wire.__name__}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(wire, name)
