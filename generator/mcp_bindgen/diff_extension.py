"""`mcp-bindgen diff` of an extension's schema: what changed in a generated extension package
(`mcp_bindings.ext.*`: tasks, MCP Apps, Skills) between its pinned schema and another one (a new
release of the extension, an edit of a project-owned schema), or between two files of it.

    mcp-bindgen diff io.modelcontextprotocol/ui path/to/new/schema.json
    mcp-bindgen diff old.json new.json --extension io.modelcontextprotocol/skills

Each side is read as generation reads it (`pipeline.render_extension`): the IR of the schema, less
the core definitions it splices in verbatim, and its methods with who sends each
(`policy/extension_methods.json`; a method the policy does not know yet is shown with sender `?` and
noted). The report is `diff`'s (methods, types, fields); capabilities, error codes and the
lifecycle are the core version's and stay empty.
"""

from __future__ import annotations

from pathlib import Path

from .diff import Diff, MethodFacts, Side, compare
from .errors import BindgenError
from .extension import ExtensionMethod, extension_methods, spliced
from .ir import SchemaIR
from .pins import ExtensionPin, load_extension_pins, read_extension, sha256_of
from .pipeline import VersionSource, build_ir, pinned_source, schema_file

__all__ = ["diff_extension_specs", "extension_of"]


def extension_of(old: str, new: str, extension: str | None) -> str | None:
    """The extension a `diff OLD NEW` is about: `--extension`, else a side naming a pinned extension;
    None for a diff of core versions."""
    pins = load_extension_pins()
    named = [spec for spec in (old, new) if spec in pins]
    if extension is not None:
        if extension not in pins:
            raise BindgenError(f"--extension {extension}: not a pinned extension (pinned: {', '.join(pins)})")
        if any(spec != extension for spec in named):
            raise BindgenError(f"--extension {extension}: the other side names another extension ({named[0]})")
        return extension
    if len(set(named)) > 1:
        raise BindgenError(
            f"{old} and {new} are two different extensions; compare one extension's schemas "
            f"(e.g. mcp-bindgen diff {old} path/to/its/new/schema.json)"
        )
    return named[0] if named else None


def _source(pin: ExtensionPin, spec: str) -> tuple[VersionSource, str]:
    """One side's bytes: the pinned (synced) schema when `spec` is the identifier, else a file."""
    if spec == pin.identifier:
        raw = read_extension(pin)
        if raw is None:
            raise BindgenError(
                f"extension {pin.identifier} is not synced ({pin.local_path} is missing): run `mcp-bindgen schema sync`"
            )
        return VersionSource(pin.identifier, raw, pin.sha256, pin.core_version, str(pin.local_path)), (
            f"{pin.identifier} (pinned)"
        )
    path = schema_file(Path(spec))
    raw = path.read_bytes()
    return VersionSource(pin.identifier, raw, sha256_of(raw), pin.core_version, str(path)), f"{pin.identifier} ({spec})"


def _facts(identifier: str, m: ExtensionMethod) -> MethodFacts:
    """A method as `diff` compares it; its gate is the extension (sent only where it is declared)."""
    direction = f"bridge:{m.direction}" if m.bridge and m.direction != "?" else m.direction
    role = (direction, m.kind)
    return MethodFacts(m.method, role, m.params_type, m.params_required, m.result_type, False, identifier)


def load_extension_side(pin: ExtensionPin, spec: str, core: SchemaIR) -> Side:
    source, shown = _source(pin, spec)
    ir = build_ir(source)
    own = set(ir.definitions) - spliced(ir, core)
    methods = extension_methods(pin.identifier, ir, own, lenient=True)
    notes = [
        f"{pin.identifier}: who sends {m.method} ({m.message_type}) is not known: add it to "
        "generator/mcp_bindgen/policy/extension_methods.json before generating"
        for m in methods
        if m.direction == "?"
    ]
    facts: dict[str, dict[tuple[str, str], MethodFacts]] = {}
    for m in methods:
        fact = _facts(pin.identifier, m)
        facts.setdefault(m.method, {})[fact.role] = fact
    return Side(pin.identifier, shown, ir, facts, {}, {}, False, False, tuple(notes))


def diff_extension_specs(identifier: str, old: str, new: str) -> Diff:
    """The diff of one pinned extension's schemas: `old` and `new` are its identifier (the pinned
    schema) or schema files."""
    pin = load_extension_pins()[identifier]
    core = build_ir(pinned_source(pin.core_version))
    return compare(load_extension_side(pin, old, core), load_extension_side(pin, new, core))
