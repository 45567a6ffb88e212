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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any


def exports(namespace: dict[str, Any], homes: Mapping[str, Callable[[], ModuleType]]) -> Callable[[str], object]:
    """The module `__getattr__` of a façade module whose globals are `namespace`: a name of `homes`
    is taken from its home module (loaded then) and kept; any other is an AttributeError."""

    def __getattr__(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = getattr(home(), name)
        namespace[name] = value  # the next lookup is a plain attribute
        return value

    return __getattr__
