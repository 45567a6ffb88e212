"""`mcp-bindgen diff OLD NEW`: what changed between two protocol versions, read from the IR and the
protocol surface (never from the raw schema text).

OLD and NEW are pinned version names or schema.json files (an unpinned upstream draft, say); an
extension's schemas are compared the same way (`diff_extension.py`). The
report lists methods added / removed / moved to another direction or role and their changed
signatures, capability paths, error codes, lifecycle flags, types added / removed / changed, and
fields added / removed / retyped / made (non-)required. It is rendered as Markdown for people or
as JSON for tools; both are deterministic (sorted), so they can serve as golden files.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from .errors import BindgenError
from .ir import (
    NO_DEFAULT,
    AliasDef,
    ArrayOf,
    Const,
    Definition,
    Enum,
    Extra,
    Field,
    MapOf,
    ObjectDef,
    Ref,
    Scalar,
    SchemaIR,
    TypeExpr,
    UnionOf,
)
from .normalise import load_patches
from .pins import load_pins
from .pipeline import VersionSource, build_ir, file_source, pinned_source
from .surface import Gate, ProtocolSurface, derive_surface

Format = Literal["markdown", "json"]

# How a method travels: one of these per (direction, kind), plus the 2026-07-28 input requests that
# ride inside an InputRequiredResult instead of being sent as wire requests.
ROLE_LABELS = {
    ("client_to_server", "request"): "client -> server request",
    ("client_to_server", "notification"): "client -> server notification",
    ("server_to_client", "request"): "server -> client request",
    ("server_to_client", "notification"): "server -> client notification",
    ("input", "request"): "input request in InputRequiredResult",
    # An extension's methods (diff_extension.py): those of its own channel (MCP Apps' view <-> host
    # bridge, the view playing the client), and those no policy entry gives a sender yet.
    ("bridge:client_to_server", "request"): "client -> server request on the extension's channel",
    ("bridge:client_to_server", "notification"): "client -> server notification on the extension's channel",
    ("bridge:server_to_client", "request"): "server -> client request on the extension's channel",
    ("bridge:server_to_client", "notification"): "server -> client notification on the extension's channel",
    ("?", "request"): "request, sender not in policy/extension_methods.json",
    ("?", "notification"): "notification, sender not in policy/extension_methods.json",
}
_ROLE_ORDER = list(ROLE_LABELS)


# -- sources -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    """One side of the comparison: its name (used for the version-scoped policy) and what to show."""

    name: str
    shown: str
    ir: SchemaIR
    methods: dict[str, dict[tuple[str, str], MethodFacts]]
    capability_paths: dict[str, tuple[str, ...]]
    error_codes: dict[str, int]
    stateless: bool
    batches: bool
    notes: tuple[str, ...]
    patches: tuple[tuple[str, str], ...] = ()  # (pointer, reason) of the schema patches applied to it


@dataclass(frozen=True)
class MethodFacts:
    method: str
    role: tuple[str, str]
    params_type: str | None
    params_required: bool
    result_type: str | None
    input_required: bool
    gate: str | None  # "server:tools", None when ungated, "?" when the policy has no rule for it


def resolve_source(spec: str, name: str | None = None) -> VersionSource:
    """A pinned version name, a schema.json file, or a folder holding one."""
    pins = load_pins()
    if spec in pins and name in (None, spec):
        return pinned_source(spec)
    path = Path(spec)
    if path.is_dir() and (path / "schema.json").is_file():
        path = path / "schema.json"
    if path.is_file():
        return file_source(path, name or default_name(path))
    raise BindgenError(f"{spec!r} is neither a pinned protocol version ({', '.join(pins)}) nor a schema.json file")


def default_name(path: Path) -> str:
    """`.../draft/schema.json` -> `draft`; `next.json` -> `next`."""
    return path.parent.name if path.name == "schema.json" and path.parent.name else path.stem


def load_side(source: VersionSource, shown: str) -> Side:
    """One side as generation sees it: the IR after the schema patches that apply to it, and the
    surface after the capability policy (what no rule covers yet is noted, with gate `?`)."""
    ir = build_ir(source)
    surface = derive_surface(ir)
    notes = [f"{ir.version}: {gap.subject}: {gap.what}" for gap in surface.gaps]
    patches = tuple((p.pointer, p.reason) for p in load_patches() if p.pointer in ir.patches)
    return Side(
        source.version,
        shown,
        ir,
        _methods_from_surface(surface),
        dict(surface.capability_paths),
        dict(surface.error_codes),
        surface.stateless,
        surface.batches,
        tuple(notes),
        patches,
    )


def _gate_text(gate: Gate | None, governed: bool) -> str | None:
    if not governed:
        return "?"
    return str(gate) if gate else None


def _methods_from_surface(surface: ProtocolSurface) -> dict[str, dict[tuple[str, str], MethodFacts]]:
    out: dict[str, dict[tuple[str, str], MethodFacts]] = {}
    for m in surface.methods:
        role = (m.direction, m.kind)
        out.setdefault(m.method, {})[role] = MethodFacts(
            m.method,
            role,
            m.params_type,
            m.params_required,
            m.result_type,
            m.input_required,
            _gate_text(m.gate, m.governed),
        )
    for r in surface.input_requests:
        role = ("input", "request")
        out.setdefault(r.method, {})[role] = MethodFacts(
            r.method,
            role,
            r.params_type,
            r.params_type is not None,
            r.result_type,
            False,
            _gate_text(r.gate, r.governed),
        )
    return out


# -- the comparison ------------------------------------------------------------------------------


def render_type(expr: TypeExpr) -> str:
    """A compact, stable spelling of a type expression."""
    if isinstance(expr, Ref):
        return expr.name
    if isinstance(expr, Scalar):
        text = expr.kind if expr.format is None else f"{expr.kind} ({expr.format})"
        if expr.constraints:
            text += "[" + ", ".join(f"{k}={json.dumps(v)}" for k, v in expr.constraints) + "]"
        return text
    if isinstance(expr, Const):
        return json.dumps(expr.value)
    if isinstance(expr, Enum):
        return " | ".join(json.dumps(v) for v in expr.values)
    if isinstance(expr, ArrayOf):
        text = f"list[{render_type(expr.items)}]"
        if expr.constraints:
            text += "[" + ", ".join(f"{k}={json.dumps(v)}" for k, v in expr.constraints) + "]"
        return text
    if isinstance(expr, MapOf):
        return f"map[{render_type(expr.values)}]"
    members = [render_type(m) for m in expr.members]
    return " | ".join(f"({m})" if " | " in m else m for m in members)


def type_key(expr: TypeExpr) -> str:
    """`render_type` with union members sorted: a reordered union is the same type."""
    if isinstance(expr, UnionOf):
        return " | ".join(sorted(f"({k})" if " | " in k else k for k in (type_key(m) for m in expr.members)))
    if isinstance(expr, ArrayOf):
        return render_type(ArrayOf(Ref(type_key(expr.items)), expr.constraints))
    if isinstance(expr, MapOf):
        return f"map[{type_key(expr.values)}]"
    return render_type(expr)


def _render_extra(extra: Extra) -> str:
    if extra == "allow":
        return "open (unknown keys kept)"
    if extra == "forbid":
        return "closed (unknown keys rejected)"
    return f"typed extra keys ({render_type(extra)})"


def _extra_key(extra: Extra) -> str:
    return extra if extra in ("allow", "forbid") else type_key(extra)  # type: ignore[return-value, arg-type]


def schema_required(f: Field) -> bool:
    """Required by the schema; the IR turns a required field with a policy default into an optional one."""
    return f.required or f.default is not NO_DEFAULT


def _requirement(f: Field) -> str:
    if f.required:
        return "required"
    if f.default is not NO_DEFAULT:
        return f"required (Python default {json.dumps(f.default)})"
    return "optional"


@dataclass
class Diff:
    old: str
    new: str
    lifecycle: list[dict[str, Any]] = field(default_factory=list)
    methods_added: list[dict[str, Any]] = field(default_factory=list)
    methods_removed: list[dict[str, Any]] = field(default_factory=list)
    methods_moved: list[dict[str, Any]] = field(default_factory=list)
    methods_changed: list[dict[str, Any]] = field(default_factory=list)
    capabilities_added: list[dict[str, str]] = field(default_factory=list)
    capabilities_removed: list[dict[str, str]] = field(default_factory=list)
    error_codes_added: list[dict[str, Any]] = field(default_factory=list)
    error_codes_removed: list[dict[str, Any]] = field(default_factory=list)
    error_codes_changed: list[dict[str, Any]] = field(default_factory=list)
    types_added: list[dict[str, Any]] = field(default_factory=list)
    types_removed: list[dict[str, Any]] = field(default_factory=list)
    types_changed: list[dict[str, Any]] = field(default_factory=list)
    fields_added: list[dict[str, Any]] = field(default_factory=list)
    fields_removed: list[dict[str, Any]] = field(default_factory=list)
    fields_retyped: list[dict[str, Any]] = field(default_factory=list)
    fields_requirement: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not any(v for k, v in asdict(self).items() if k not in ("old", "new", "notes"))


def _method_entry(f: MethodFacts) -> dict[str, Any]:
    entry: dict[str, Any] = {"method": f.method, "role": ROLE_LABELS[f.role], "params": f.params_type}
    if f.role[1] == "request":
        entry["result"] = f.result_type
        entry["input_required"] = f.input_required
    entry["gate"] = f.gate
    return entry


def _compare_methods(old: Side, new: Side, out: Diff) -> None:
    for method in sorted(set(old.methods) | set(new.methods)):
        before, after = old.methods.get(method, {}), new.methods.get(method, {})
        if not before:
            out.methods_added += [_method_entry(after[r]) for r in _sorted_roles(after)]
            continue
        if not after:
            out.methods_removed += [_method_entry(before[r]) for r in _sorted_roles(before)]
            continue
        if set(before) != set(after):
            out.methods_moved.append(
                {
                    "method": method,
                    "old": [ROLE_LABELS[r] for r in _sorted_roles(before)],
                    "new": [ROLE_LABELS[r] for r in _sorted_roles(after)],
                }
            )
        # Signature changes: role by role where the role survives, else between the single roles.
        pairs = [(before[r], after[r]) for r in _sorted_roles(before) if r in after]
        if not pairs and len(before) == 1 and len(after) == 1:
            pairs = [(next(iter(before.values())), next(iter(after.values())))]
        for a, b in pairs:
            changes = _method_changes(a, b)
            if changes:
                out.methods_changed.append({"method": method, "role": ROLE_LABELS[b.role], "changes": changes})


def _sorted_roles(roles: Mapping[tuple[str, str], Any]) -> list[tuple[str, str]]:
    return sorted(roles, key=_ROLE_ORDER.index)


def _method_changes(a: MethodFacts, b: MethodFacts) -> list[dict[str, Any]]:
    changes: list[dict[str, Any]] = []
    for what, x, y in (
        ("params", a.params_type, b.params_type),
        ("params_required", a.params_required, b.params_required),
        ("result", a.result_type, b.result_type),
        ("input_required", a.input_required, b.input_required),
        ("gate", a.gate, b.gate),
    ):
        if x != y and not (what == "params_required" and (a.params_type is None or b.params_type is None)):
            changes.append({"what": what, "old": x, "new": y})
    return changes


def _compare_capabilities(old: Side, new: Side, out: Diff) -> None:
    for side in ("server", "client"):
        before, after = set(old.capability_paths.get(side, ())), set(new.capability_paths.get(side, ()))
        out.capabilities_added += [{"side": side, "path": p} for p in sorted(after - before)]
        out.capabilities_removed += [{"side": side, "path": p} for p in sorted(before - after)]


def _compare_error_codes(old: Side, new: Side, out: Diff) -> None:
    for name in sorted(
        set(old.error_codes) | set(new.error_codes), key=lambda n: (new.error_codes.get(n, old.error_codes.get(n)), n)
    ):
        a, b = old.error_codes.get(name), new.error_codes.get(name)
        if a is None:
            out.error_codes_added.append({"name": name, "code": b})
        elif b is None:
            out.error_codes_removed.append({"name": name, "code": a})
        elif a != b:
            out.error_codes_changed.append({"name": name, "old": a, "new": b})


def _compare_lifecycle(old: Side, new: Side, out: Diff) -> None:
    if old.stateless != new.stateless:
        label = {False: "initialize handshake", True: "stateless (no initialize; every request carries its _meta)"}
        out.lifecycle.append({"what": "lifecycle", "old": label[old.stateless], "new": label[new.stateless]})
    if old.batches != new.batches:
        label = {False: "no JSON-RPC batches", True: "JSON-RPC batches"}
        out.lifecycle.append({"what": "batches", "old": label[old.batches], "new": label[new.batches]})


def _kind(d: Definition) -> str:
    return "object" if isinstance(d, ObjectDef) else "alias"


def _type_entry(name: str, d: Definition) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "kind": _kind(d), "nested": d.hoisted}
    if isinstance(d, AliasDef):
        entry["type"] = render_type(d.type)
    return entry


def _compare_types(old: Side, new: Side, out: Diff) -> None:
    a_defs, b_defs = old.ir.definitions, new.ir.definitions
    for name in sorted(set(b_defs) - set(a_defs)):
        out.types_added.append(_type_entry(name, b_defs[name]))
    for name in sorted(set(a_defs) - set(b_defs)):
        out.types_removed.append(_type_entry(name, a_defs[name]))
    for name in sorted(set(a_defs) & set(b_defs)):
        a, b = a_defs[name], b_defs[name]
        if _kind(a) != _kind(b):
            out.types_changed.append({"name": name, "what": "kind", "old": _kind(a), "new": _kind(b)})
            continue
        if isinstance(a, AliasDef) and isinstance(b, AliasDef):
            _compare_alias(name, a, b, out)
        elif isinstance(a, ObjectDef) and isinstance(b, ObjectDef):
            _compare_object(name, a, b, out)


def _compare_alias(name: str, a: AliasDef, b: AliasDef, out: Diff) -> None:
    if type_key(a.type) == type_key(b.type) and getattr(a.type, "discriminator", None) == getattr(
        b.type, "discriminator", None
    ):
        return
    if isinstance(a.type, UnionOf) and isinstance(b.type, UnionOf):
        before = [render_type(m) for m in a.type.members]
        after = [render_type(m) for m in b.type.members]
        if set(before) != set(after) or a.type.discriminator != b.type.discriminator:
            out.types_changed.append(
                {
                    "name": name,
                    "what": "union members",
                    "added": sorted(set(after) - set(before)),
                    "removed": sorted(set(before) - set(after)),
                }
            )
            return
    out.types_changed.append({"name": name, "what": "type", "old": render_type(a.type), "new": render_type(b.type)})


def _compare_object(name: str, a: ObjectDef, b: ObjectDef, out: Diff) -> None:
    if _extra_key(a.extra) != _extra_key(b.extra):
        out.types_changed.append(
            {"name": name, "what": "extra keys", "old": _render_extra(a.extra), "new": _render_extra(b.extra)}
        )
    before = {f.wire_name: f for f in a.fields}
    after = {f.wire_name: f for f in b.fields}
    for wire in sorted(set(after) - set(before)):
        f = after[wire]
        out.fields_added.append(
            {"type": name, "field": wire, "field_type": render_type(f.type), "required": _requirement(f)}
        )
    for wire in sorted(set(before) - set(after)):
        f = before[wire]
        out.fields_removed.append(
            {"type": name, "field": wire, "field_type": render_type(f.type), "required": _requirement(f)}
        )
    for wire in sorted(set(before) & set(after)):
        x, y = before[wire], after[wire]
        if type_key(x.type) != type_key(y.type):
            out.fields_retyped.append(
                {"type": name, "field": wire, "old": render_type(x.type), "new": render_type(y.type)}
            )
        if schema_required(x) != schema_required(y):
            out.fields_requirement.append({"type": name, "field": wire, "old": _requirement(x), "new": _requirement(y)})


def _patch_notes(old: Side, new: Side) -> list[str]:
    """A schema patch applies wherever its defect is; one that applies to one side only (to a
    definition both sides have) changes the comparison by itself: say so."""

    def on_both(pointer: str) -> bool:
        name = pointer.split("/")[2] if pointer.count("/") >= 2 else ""
        return name in old.ir.definitions and name in new.ir.definitions

    notes = []
    for pointer, reason in sorted(p for p in set(old.patches) - set(new.patches) if on_both(p[0])):
        notes.append(
            f"schema patch {pointer} (policy/schema_patches.json) applies to {old.name}, not to {new.name}: "
            f"the defect it corrects is not in {new.name} ({reason})"
        )
    for pointer, reason in sorted(p for p in set(new.patches) - set(old.patches) if on_both(p[0])):
        notes.append(
            f"schema patch {pointer} (policy/schema_patches.json) applies to {new.name}, not to {old.name} ({reason})"
        )
    return notes


def compare(old: Side, new: Side) -> Diff:
    out = Diff(old.shown, new.shown, notes=[*old.notes, *new.notes, *_patch_notes(old, new)])
    _compare_lifecycle(old, new, out)
    _compare_methods(old, new, out)
    _compare_capabilities(old, new, out)
    _compare_error_codes(old, new, out)
    _compare_types(old, new, out)
    return out


def diff_sources(
    old: VersionSource, new: VersionSource, *, old_shown: str | None = None, new_shown: str | None = None
) -> Diff:
    return compare(load_side(old, old_shown or old.version), load_side(new, new_shown or new.version))


def diff_specs(old: str, new: str, *, old_name: str | None = None, new_name: str | None = None) -> Diff:
    """`diff_specs("2025-11-25", "path/to/draft/schema.json")`."""
    sources = [resolve_source(old, old_name), resolve_source(new, new_name)]
    shown = [
        s.version if spec == s.version else f"{s.version} ({spec})" for spec, s in zip((old, new), sources, strict=True)
    ]
    return diff_sources(sources[0], sources[1], old_shown=shown[0], new_shown=shown[1])


# -- rendering -----------------------------------------------------------------------------------


def to_json(diff: Diff) -> dict[str, Any]:
    """The report as nested JSON-ready data: {section: {change kind: [entries]}}."""
    flat = asdict(diff)
    nested: dict[str, Any] = {"old": flat.pop("old"), "new": flat.pop("new"), "notes": flat.pop("notes")}
    nested["lifecycle"] = flat.pop("lifecycle")
    for key, value in flat.items():
        section, _, kind = key.partition("_")
        if section == "error":  # error_codes_added
            section, _, kind = "error_codes", "", kind.partition("_")[2]
        nested.setdefault(section, {})[kind] = value
    return nested


def render(diff: Diff, fmt: Format = "markdown") -> str:
    if fmt == "json":
        return json.dumps(to_json(diff), indent=2) + "\n"
    if fmt == "markdown":
        return render_markdown(diff)
    raise BindgenError(f"unknown diff format {fmt!r} (markdown or json)")


def _code(text: Any) -> str:
    return f"`{text}`"


def _names(names: Iterable[str], limit: int = 0) -> str:
    items = [_code(n) for n in names]
    if limit and len(items) > limit:
        return ", ".join(items[:limit]) + f", ... ({len(items) - limit} more)"
    return ", ".join(items)


def _method_line(e: Mapping[str, Any]) -> str:
    parts = [e["role"]]
    if e.get("params"):
        parts.append(f"params {_code(e['params'])}")
    if e.get("result"):
        parts.append(f"result {_code(e['result'])}" + (" or `InputRequiredResult`" if e.get("input_required") else ""))
    parts.append(f"gate {_code(e['gate'])}" if e.get("gate") else "ungated")
    return f"- {_code(e['method'])}: " + "; ".join(parts)


def _change_text(c: Mapping[str, Any]) -> str:
    what, old, new = c["what"], c["old"], c["new"]
    if what == "input_required":
        return (
            "may now answer `InputRequiredResult` (multi round-trip)"
            if new
            else "no longer answers `InputRequiredResult`"
        )
    if what == "params_required":
        return "params now required" if new else "params now optional"
    if what == "gate":
        return f"gate {_code(old) if old else 'none'} -> {_code(new) if new else 'none'}"
    return f"{what} {_code(old) if old else 'none'} -> {_code(new) if new else 'none'}"


def _group(entries: list[dict[str, Any]], key: tuple[str, ...]) -> list[tuple[tuple[Any, ...], list[str]]]:
    """Entries that differ only by their type, together: one line per field change, not per type."""
    groups: dict[tuple[Any, ...], list[str]] = {}
    for e in entries:
        groups.setdefault(tuple(e[k] for k in key), []).append(e["type"])
    return sorted(groups.items(), key=lambda item: (item[0][0], item[0][1:]))


def _on(types: list[str]) -> str:
    if len(types) == 1:
        return f"on {_code(types[0])}"
    return f"on {len(types)} types: {_names(sorted(types))}"


def render_markdown(diff: Diff) -> str:
    lines: list[str] = [f"# MCP schema changes: {diff.old} -> {diff.new}", ""]
    summary = [
        (len(diff.methods_added), "method added", "methods added"),
        (len(diff.methods_removed), "method removed", "methods removed"),
        (len(diff.methods_moved), "method moved", "methods moved"),
        (len(diff.methods_changed), "method changed", "methods changed"),
        (len(diff.capabilities_added) + len(diff.capabilities_removed), "capability change", "capability changes"),
        (
            len(diff.error_codes_added) + len(diff.error_codes_removed) + len(diff.error_codes_changed),
            "error-code change",
            "error-code changes",
        ),
        (len(diff.types_added), "type added", "types added"),
        (len(diff.types_removed), "type removed", "types removed"),
        (len(diff.types_changed), "type changed", "types changed"),
        (
            len(diff.fields_added) + len(diff.fields_removed) + len(diff.fields_retyped) + len(diff.fields_requirement),
            "field change",
            "field changes",
        ),
    ]
    if diff.is_empty():
        lines += ["No schema-level changes.", ""]
    else:
        lines += ["Summary: " + ", ".join(f"{n} {one if n == 1 else many}" for n, one, many in summary if n) + ".", ""]

    def section(title: str, body: list[str]) -> None:
        if body:
            lines.extend([f"## {title}", "", *body, ""])

    def sub(title: str, body: list[str]) -> list[str]:
        return [f"### {title}", "", *body, ""] if body else []

    section("Notes", [f"- {n}" for n in diff.notes])
    section("Lifecycle", [f"- {e['what']}: {e['old']} -> {e['new']}" for e in diff.lifecycle])
    methods = (
        sub("Added", [_method_line(e) for e in diff.methods_added])
        + sub("Removed", [_method_line(e) for e in diff.methods_removed])
        + sub(
            "Changed direction or role",
            [f"- {_code(e['method'])}: {' + '.join(e['old'])} -> {' + '.join(e['new'])}" for e in diff.methods_moved],
        )
        + sub(
            "Changed",
            [
                f"- {_code(e['method'])} ({e['role']}): " + "; ".join(_change_text(c) for c in e["changes"])
                for e in diff.methods_changed
            ],
        )
    )
    section("Methods", methods[:-1] if methods else [])
    capabilities = [f"- added {e['side']} capability {_code(e['path'])}" for e in diff.capabilities_added]
    capabilities += [f"- removed {e['side']} capability {_code(e['path'])}" for e in diff.capabilities_removed]
    section("Capabilities", capabilities)
    codes = [f"- added {_code(e['name'])} = {e['code']}" for e in diff.error_codes_added]
    codes += [f"- removed {_code(e['name'])} = {e['code']}" for e in diff.error_codes_removed]
    codes += [f"- changed {_code(e['name'])}: {e['old']} -> {e['new']}" for e in diff.error_codes_changed]
    section("Error codes", codes)

    def type_lines(entries: list[dict[str, Any]]) -> list[str]:
        top = [e["name"] for e in entries if not e["nested"]]
        nested = [e["name"] for e in entries if e["nested"]]
        out = [f"- {_names(top)}"] if top else []
        if nested:
            out.append(f"- nested objects: {_names(nested)}")
        return out

    changed: list[str] = []
    for e in diff.types_changed:
        if e["what"] == "union members":
            parts = []
            if e["added"]:
                parts.append(f"members added {_names(e['added'])}")
            if e["removed"]:
                parts.append(f"members removed {_names(e['removed'])}")
            changed.append(f"- {_code(e['name'])}: " + ("; ".join(parts) or "discriminator changed"))
        else:
            changed.append(f"- {_code(e['name'])}: {e['what']} {_code(e['old'])} -> {_code(e['new'])}")
    types = (
        sub(f"Added ({len(diff.types_added)})", type_lines(diff.types_added))
        + sub(f"Removed ({len(diff.types_removed)})", type_lines(diff.types_removed))
        + sub("Changed", changed)
    )
    section("Types", types[:-1] if types else [])

    added = [
        f"- {_code(f'{wire}: {ftype}')} ({req}) {_on(ts)}"
        for (wire, ftype, req), ts in _group(diff.fields_added, ("field", "field_type", "required"))
    ]
    removed = [
        f"- {_code(f'{wire}: {ftype}')} ({req}) {_on(ts)}"
        for (wire, ftype, req), ts in _group(diff.fields_removed, ("field", "field_type", "required"))
    ]
    retyped = [
        f"- {_code(wire)}: {_code(old)} -> {_code(new)} {_on(ts)}"
        for (wire, old, new), ts in _group(diff.fields_retyped, ("field", "old", "new"))
    ]
    requirement = [
        f"- {_code(wire)}: {old} -> {new} {_on(ts)}"
        for (wire, old, new), ts in _group(diff.fields_requirement, ("field", "old", "new"))
    ]
    fields = (
        sub("Added", added)
        + sub("Removed", removed)
        + sub("Type changed", retyped)
        + sub("Required-ness changed", requirement)
    )
    section("Fields", fields[:-1] if fields else [])
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"
