"""The pinned protocol versions, and the generator pipeline's results per pinned version, computed
once per test session.

Rendering one whole schema takes seconds; tests that only read the result share these. Treat what
they return as read-only (the IR is a plain dataclass; the rendered files come as a read-only view).
The generator is imported lazily: runtime-only test runs need not have its extra (`mcp_bindgen.pins`
needs nothing beyond the standard library)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from mcp_bindgen.pins import load_pins

if TYPE_CHECKING:
    from mcp_bindgen.ir import SchemaIR
    from mcp_bindgen.pipeline import VersionSource

# Every version of the pin manifest (schema/manifest.json), oldest first.
PINNED_VERSIONS: list[str] = sorted(load_pins())


@functools.cache
def cached_source(version: str) -> VersionSource:
    """`pipeline.pinned_source(version)`, read once (the checkout's pinned schema.json)."""
    from mcp_bindgen.pipeline import pinned_source

    return pinned_source(version)


@functools.cache
def pinned_ir(version: str) -> SchemaIR:
    """`pipeline.build_ir` of a pinned version, once per session."""
    from mcp_bindgen.pipeline import build_ir

    return build_ir(cached_source(version))


@functools.cache
def rendered(version: str) -> Mapping[str, str]:
    """`pipeline.render_version` of a pinned version (path -> file text), once per session."""
    from mcp_bindgen.pipeline import render_version

    return MappingProxyType(render_version(cached_source(version)))


def rendered_pinned(versions: list[str] | None = None) -> dict[str, str]:
    """`pipeline.render_pinned` built from `rendered`: a drop-in for tests that run `check`."""
    from mcp_bindgen.pipeline import RenderedVersion, crossing_files
    from mcp_bindgen.surface import derive_surface

    out: dict[str, str] = {}
    ready = []
    for version in versions or list(load_pins()):
        out.update(rendered(version))
        ready.append(RenderedVersion(version, {}, pinned_ir(version), derive_surface(pinned_ir(version))))
    out.update(crossing_files(ready))
    return dict(sorted(out.items()))


def name_table(ir: SchemaIR) -> str:
    """One line per definition: name, object/alias, where it comes from, and its class name if renamed."""
    from mcp_bindgen.ir import ObjectDef

    lines = []
    for name, definition in ir.definitions.items():
        kind = "object" if isinstance(definition, ObjectDef) else "alias"
        origin = f"hoisted from {definition.origin}" if definition.hoisted else "schema"
        py = ir.py_name(name)
        lines.append(f"{name}\t{kind}\t{origin}" + (f"\tclass {py}" if py != name else ""))
    return "\n".join(lines) + "\n"
