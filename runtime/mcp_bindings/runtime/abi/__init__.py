"""The runtime as the generated bindings see it: every runtime name a generated module imports
(`generated/mcp_bindings/v*/`, `ext/`; the templates under `templates/`) comes from this package and
from nowhere else in the runtime, so the generated surface and the runtime's own layout can change
apart: moving a name inside the runtime is one line here, not a regeneration of every version. A
contract says so (`generated code imports only the runtime's façade`, `[tool.importlinter]`).

One module per layer the names come from (`abi.protocol`, `abi.server`, `abi.client`): a runtime
module that imports a generated one (the client's extension clients, the protocol's names tables)
reaches through it only the layer it could import anyway, so the layer contract still holds.

Each name loads its home module on first use (PEP 562), as the direct imports did: a version's
`about.py`, which the registry reads to discover the version, loads the descriptors and nothing else.
A façade module names each home twice: in its `TYPE_CHECKING` imports, which the type checker and
the import contracts read, and in the table its `__getattr__` loads from (`exports`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def exports(namespace: dict[str, Any], homes: Mapping[str, tuple[str, ...]]) -> Callable[[str], object]:
    """The module `__getattr__` of a façade module whose globals are `namespace`: `homes` maps each
    home module (relative to the façade's package) to the names taken from it. A name is taken from
    its home (loaded then) and kept; any other is an AttributeError."""
    home_of = {name: home for home, names in homes.items() for name in names}

    def __getattr__(name: str) -> object:
        home = home_of.get(name)
        if home is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home, namespace["__package__"]), name)
        namespace[name] = value  # the next lookup is a plain attribute
        return value

    return __getattr__
