"""Extensions by registration: how the runtime's own features (tasks) and third-party extensions
plug into a server, through one typed protocol, never by a module named in a string.

An `Extension` says what it adds to a server:

- `capabilities(protocol)`: capabilities merged into the server's (an `"extensions"` entry, MCP
  extension identifier -> settings, is placed where the client's version puts extensions:
  `extensions` from 2026-07-28, `experimental` before);
- `methods()`: custom methods it serves (`extensions.request(...)` / `notification(...)` -> handler);
- `features()`: what it wraps or serves on the dispatch seam (`seam.ServerFeature`);
- `attach(server, host)`: where it sets up the state it keeps on the server host, typed by its own
  class (`host.state_of(MyState)`), once, when it is registered.

Every member has a default (nothing), so an extension subclasses `Extension` and overrides what it
needs. It is registered explicitly (`extend(server, extension)`, the authoring layer's
`App(extensions=[...])` / `app.add(extension)`) or discovered: every server host loads the
extensions named in the entry point group `mcp_bindings.extensions` of the installed
distributions (the runtime's tasks plug-in is one, declared in pyproject.toml), each entry point a
callable of no argument returning the `Extension`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from mcp_bindings.runtime.protocol.custom_methods import EXTENSIONS, CustomMethod, Handler
from mcp_bindings.runtime.protocol.spec import ProtocolTables
from mcp_bindings.runtime.server.host import host_for

if TYPE_CHECKING:
    from mcp_bindings.runtime.server.host import ServerHost
    from mcp_bindings.runtime.server.seam import ServerFeature
    from mcp_bindings.runtime.server.stubs import ServerStub

__all__ = ["GROUP", "Extension", "discovered", "extend", "install"]

GROUP = "mcp_bindings.extensions"  # the entry point group every server host loads


class Extension(Protocol):
    """A feature of a server, registered on it (see the module); override what it adds."""

    def capabilities(self, protocol: ProtocolTables) -> Mapping[str, Any]:
        """Capabilities the server advertises with it (merged into the server's); `"extensions"`:
        identifier -> settings of the MCP extensions it implements."""
        return {}

    def methods(self) -> Mapping[CustomMethod[Any, Any], Handler]:
        """The custom methods it serves, each with its handler `(params, ctx) -> result`."""
        return {}

    def features(self) -> Sequence[ServerFeature]:
        """What it wraps around handlers or serves itself on the dispatch seam."""
        return ()

    def attach(self, server: ServerStub, host: ServerHost) -> None:
        """Registered on `server`: set up what it keeps on the host (`host.state_of(...)`)."""
        return None


def extend(server: ServerStub, extension: Extension) -> None:
    """Register `extension` on `server` (before it serves: plans already built keep what they had)."""
    host = host_for(server)
    install(server, host, extension)
    for feature in extension.features():
        host.use(feature)


def install(server: ServerStub, host: ServerHost, extension: Extension) -> None:
    """What an extension adds to a server apart from its features: capabilities, methods, state."""
    host.extensions.append(extension)
    for key, value in extension.capabilities(server.protocol).items():
        if key == EXTENSIONS:  # placed per client version (`server_capabilities`)
            for identifier, settings in cast("Mapping[str, Mapping[str, Any]]", value).items():
                server.use_extension(identifier, settings)
        elif isinstance(value, Mapping):
            server.capabilities[key] = {**server.capabilities.get(key, {}), **cast("Mapping[str, Any]", value)}
        else:
            server.capabilities[key] = value
    for method, handler in extension.methods().items():
        server.register_method(method, handler)
    extension.attach(server, host)


@functools.cache
def discovered(group: str = GROUP) -> tuple[Callable[[], Extension], ...]:
    """The extension factories the installed distributions declare in entry point `group` (read
    once per process; each is loaded here, so a broken entry point fails the first server)."""
    from importlib import metadata  # imported when first read, not with this module (docs/performance.md)

    return tuple(cast("Callable[[], Extension]", point.load()) for point in metadata.entry_points(group=group))
