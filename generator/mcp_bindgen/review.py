"""The policy review: which rules attach to which schema, and what a new version brings that no rule
covers.

Every policy file attaches its rules to content (a JSON pointer and the value found there, a method,
a wire key, a definition), never to version names, so a version generated later inherits every rule
whose subject it still has. `mcp-bindgen generate` prints this review:

- rules that found nothing to attach to: in no known schema at all (stale: remove or update them), or,
  for a version that is not pinned, rules of the pinned version it follows that find nothing in it;
- what a new version brings that no rule covers: methods without a capability rule (generated
  ungated), capabilities no rule gates a method on, definitions no rule names, and anything else the
  surface derivation had to default (`surface.PolicyGap`);
- the extensions' rules (`extension_methods.json`: who sends each method, the requests answered
  with a task), when the run read the extensions' schemas: a rule for a method its extension's schema
  does not define, or for an extension that is not pinned, is stale. (A method no rule covers stops
  generation itself: `extension.extension_methods`.)

It reads the IR and the protocol surface only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from . import crossing
from .ir import NO_DEFAULT, ObjectDef, SchemaIR
from .naming import field_renames, type_renames
from .normalise import load_patches
from .pins import load_extension_pins
from .policy import (
    era_methods,
    extension_policies,
    extension_routing,
    field_defaults,
    listen_filters,
    reshapes,
    routing,
    runtime_served,
)
from .surface import (
    ProtocolSurface,
    builtin_methods,
    empty_result_methods,
    gate_rules,
    handler_renames,
    policy_codes_for,
    policy_error_codes,
)


@dataclass(frozen=True)
class Known:
    """One schema as the review sees it."""

    name: str
    ir: SchemaIR
    surface: ProtocolSurface
    pinned: bool


@dataclass(frozen=True)
class ReviewItem:
    section: str  # "nothing to attach to" | "not covered by a rule"
    subject: str
    text: str

    def line(self) -> str:
        return f"- {self.subject}: {self.text}"


@dataclass
class Review:
    items: list[ReviewItem] = field(default_factory=list)

    def subjects(self, section: str | None = None) -> list[str]:
        return [i.subject for i in self.items if section is None or i.section == section]

    def render(self, title: str = "policy review") -> str:
        if not self.items:
            return f"{title}: every rule attaches to a known schema; nothing is left uncovered\n"
        lines = [f"{title}:"]
        for section in (NOTHING, UNCOVERED):
            entries = [i for i in self.items if i.section == section]
            if entries:
                lines.append(f"  {section}:")
                lines += [f"    {i.line()}" for i in entries]
        return "\n".join(lines) + "\n"


NOTHING = "rules that found nothing to attach to"
UNCOVERED = "new in the schema, not covered by any rule"


def _direction_label(direction: str) -> str:
    return direction.replace("_", " ")


def attachments(ir: SchemaIR, surface: ProtocolSurface) -> dict[str, str]:
    """Every policy rule that attaches to this schema: rule id -> what it attaches to."""
    out: dict[str, str] = {f"schema_patches.json {pointer}": pointer for pointer in ir.patches}
    methods = [(m.method, m.direction, m.message_type) for m in surface.methods]
    methods += [(i.method, "server_to_client", i.message_type) for i in surface.input_requests]
    out.update(_capability_attachments(methods, surface))
    names = {m for m, _, _ in methods}
    for entry in policy_codes_for(ir, names):
        out[f"error_codes.json {entry.name}"] = str(entry.code)
    out.update(_field_attachments(ir))
    for name in type_renames():
        if name in ir.upstream_names:
            out[f"type_names.json {name}"] = name
    message_types = {t for _, _, t in methods}
    for name in handler_renames():
        if name in message_types:
            out[f"handler_names.json {name}"] = name
    for method in empty_result_methods():
        if method in names:
            out[f"results.json {method}"] = method
    for method in builtin_methods():
        if method in names:
            out[f"runtime_methods.json {method}"] = method
    for method in runtime_served():
        if method in names:
            out[f"runtime_methods.json served {method}"] = method
    eras = era_methods()
    for method in [e.method for e in eras.requests] + [eras.listen]:
        if method in names:
            out[f"era_methods.json {method}"] = method
    out.update(_era_param_attachments(ir, surface))
    out.update(_table_attachments(surface))
    return out


def crossing_attachments(known: Sequence[Known]) -> set[str]:
    """The crossing.json entries some pair of known schemas applies (crossings are per pair)."""
    versions = [crossing.Version(k.name, k.ir, k.surface) for k in known]
    return {rule for a in versions for b in versions if a is not b for rule in crossing.pair(a, b).rules}


def _table_attachments(surface: ProtocolSurface) -> dict[str, str]:
    """The routing, reshape and listen-filter entries emitted into this version's tables."""
    out = {f"routing.json {method}": f"params.{param}" for method, param in surface.routing}
    out.update({f"reshapes.json {rule.type}.{rule.field}": rule.field for rule in surface.reshapes})
    policy_filters = listen_filters().filters  # the rest the generator reads from the schema's own links
    for key, notification in surface.listen_filters:
        if key in policy_filters:
            out[f"listen_filters.json {key}"] = notification
    return out


def _era_param_attachments(ir: SchemaIR, surface: ProtocolSurface) -> dict[str, str]:
    """The era params (era_methods.json `params`) whose request this schema's params object has."""
    out: dict[str, str] = {}
    for param in era_methods().params:
        for spec in surface.methods:
            if spec.method != param.method or not spec.params_type:
                continue
            definition = ir.definitions.get(spec.params_type)
            if isinstance(definition, ObjectDef) and definition.field(param.wire) is not None:
                out[f"era_methods.json {param.method} param {param.wire}"] = f"{definition.name}.{param.wire}"
    return out


def _capability_attachments(methods: list[tuple[str, str, str]], surface: ProtocolSurface) -> dict[str, str]:
    """The capability rules naming one of `methods` (method, direction, message type), and their
    param gates on a capability the schema defines."""
    out: dict[str, str] = {}
    paths = {side: set(p) for side, p in surface.capability_paths.items()}
    for index, rule in enumerate(gate_rules()):
        hits = [m for m, d, _ in methods if rule.matches(m, d)]
        if hits:
            out[_rule_id(index)] = hits[0]
            for pg in rule.param_gates:
                if ".".join(pg.gate.path) in paths.get(pg.gate.side, set()):
                    out[f"{_rule_id(index)} param {pg.param}"] = str(pg.gate)
    return out


def _field_attachments(ir: SchemaIR) -> dict[str, str]:
    """The field default rules (and their per-definition values) and field renames whose wire key
    some object of the schema has."""
    out: dict[str, str] = {}
    objects = [d for d in ir.definitions.values() if isinstance(d, ObjectDef)]
    for wire, entry in field_defaults().items():
        with_default = [d.name for d in objects if (f := d.field(wire)) is not None and f.default is not NO_DEFAULT]
        if with_default:
            out[f"field_defaults.json {wire}"] = with_default[0]
        for definition in entry.per_definition:
            if definition in with_default:
                out[f"field_defaults.json {wire} on {definition}"] = definition
    wire_keys = {f.wire_name for d in objects for f in d.fields}
    for wire in field_renames():
        if wire in wire_keys:
            out[f"field_names.json {wire}"] = wire
    return out


def _rule_id(index: int) -> str:
    rule = gate_rules()[index]
    direction = f" ({_direction_label(rule.direction)})" if rule.direction else ""
    return f"capabilities.json {rule.method}{direction}"


def all_rules() -> list[str]:
    """Every rule id of the policy files, in file order."""
    rules = [f"schema_patches.json {p.pointer}" for p in load_patches()]
    for index, rule in enumerate(gate_rules()):
        rules.append(_rule_id(index))
        rules += [f"{_rule_id(index)} param {pg.param}" for pg in rule.param_gates]
    rules += [f"error_codes.json {e.name}" for e in policy_error_codes()]
    for wire, entry in field_defaults().items():
        rules.append(f"field_defaults.json {wire}")
        rules += [f"field_defaults.json {wire} on {d}" for d in entry.per_definition]
    rules += [f"field_names.json {w}" for w in field_renames()]
    rules += [f"type_names.json {n}" for n in type_renames()]
    rules += [f"handler_names.json {n}" for n in handler_renames()]
    rules += [f"results.json {m}" for m in empty_result_methods()]
    rules += [f"runtime_methods.json {m}" for m in sorted(builtin_methods())]
    rules += [f"runtime_methods.json served {m}" for m in runtime_served()]
    eras = era_methods()
    rules += [f"era_methods.json {m}" for m in [e.method for e in eras.requests] + [eras.listen]]
    rules += [f"era_methods.json {p.method} param {p.wire}" for p in eras.params]
    rules += [f"routing.json {m}" for m in routing()]
    rules += [f"listen_filters.json {k}" for k in listen_filters().filters]
    rules += [f"reshapes.json {r.type}.{r.field}" for r in reshapes()]
    rules += crossing.all_rules()
    return list(dict.fromkeys(rules))


def _capabilities_named_by_rules() -> set[str]:
    named: set[str] = set()
    for rule in gate_rules():
        for gate in ([rule.gate] if rule.gate else []) + [pg.gate for pg in rule.param_gates]:
            named.add(str(gate))
    return named


def _definitions_named_by_rules() -> set[str]:
    named = set(type_renames()) | set(handler_renames())
    for entry in field_defaults().values():
        named |= set(entry.per_definition)
    return named


def _base_of(version: Known, pinned: Sequence[Known]) -> Known | None:
    """The pinned version a new one follows: the newest of the same lifecycle era (else the newest)."""
    same_era = [k for k in pinned if k.surface.stateless == version.surface.stateless]
    candidates = same_era or list(pinned)
    return max(candidates, key=lambda k: k.name) if candidates else None


def extension_rules() -> list[tuple[str, str, str]]:
    """Every rule of `extension_methods.json` and the extensions' part of `routing.json`: (rule id,
    extension identifier, the extension's method it names; "" for a core request answered with a
    task, which its own test checks)."""
    rules = []
    for identifier, policy in extension_policies().items():
        rules += [(f"extension_methods.json {identifier} {m}", identifier, m) for m in policy.directions]
        tasks = policy.task_results
        rules += [(f"extension_methods.json task_results {identifier} {m}", identifier, "") for m in tasks]
    for identifier, methods in extension_routing().items():
        rules += [(f"routing.json {identifier} {m}", identifier, m) for m in methods]
    return rules


def extension_review(extensions: Mapping[str, frozenset[str] | None]) -> list[ReviewItem]:
    """The stale rules of `extension_methods.json`. `extensions`: the pinned extensions the run
    considered -> the methods each one's schema defines (None: not synced, so its rules are not judged)."""
    pinned = load_extension_pins()
    items = []
    for rule, identifier, method in extension_rules():
        defined = extensions.get(identifier)
        if identifier not in pinned:
            items.append(ReviewItem(NOTHING, rule, f"{identifier} is not a pinned extension (stale: remove it)"))
        elif defined is not None and method and method not in defined:
            items.append(
                ReviewItem(NOTHING, rule, f"the {identifier} schema defines no {method} (stale: remove or update it)")
            )
    return items


def review(
    known: Iterable[Known],
    new: Iterable[str] = (),
    extensions: Mapping[str, frozenset[str] | None] | None = None,
    patched: Iterable[str] = (),
) -> Review:
    """The review of a generation run: `known` are every schema the run knows (the pinned ones and
    those generated), `new` the names of the versions it generated that are not pinned, `extensions`
    the extensions it read (`extension_review`; None: none), `patched` the schema patches the
    extension schemas had applied."""
    known = list(known)
    by_name = {k.name: k for k in known}
    attached = {k.name: attachments(k.ir, k.surface) for k in known}
    out = Review()
    anywhere = set().union(*attached.values()) if attached else set()
    anywhere |= {f"schema_patches.json {pointer}" for pointer in patched}
    anywhere |= crossing_attachments(known)
    for rule in all_rules():
        if rule not in anywhere:
            out.items.append(ReviewItem(NOTHING, rule, "attaches to no known schema (stale: remove or update it)"))
    pinned = [k for k in known if k.pinned]
    seen_paths = {f"{side}:{p}" for k in pinned for side, paths in k.surface.capability_paths.items() for p in paths}
    seen_definitions = {n for k in pinned for n in k.ir.upstream_names}
    named_capabilities = _capabilities_named_by_rules()
    named_definitions = _definitions_named_by_rules()
    for name in new:
        version = by_name[name]
        base = _base_of(version, [k for k in pinned if k.name != name])
        if base is not None:
            for rule in attached[base.name]:
                if rule not in attached[name]:
                    out.items.append(
                        ReviewItem(NOTHING, rule, f"applies to {base.name}, finds nothing to attach to in {name}")
                    )
        for gap in version.surface.gaps:
            out.items.append(ReviewItem(UNCOVERED, f"{name}: {gap.subject}", gap.what))
        gating = {str(m.gate) for m in version.surface.methods if m.gate is not None}  # rules' or the convention's
        for side, paths in version.surface.capability_paths.items():
            for path in paths:
                capability = f"{side}:{path}"
                if capability not in seen_paths and capability not in named_capabilities | gating:
                    out.items.append(
                        ReviewItem(
                            UNCOVERED,
                            f"{name}: capability {capability}",
                            "new; no rule of policy/capabilities.json gates a method on it (needs a rule)",
                        )
                    )
        for definition in version.ir.upstream_names:
            if definition not in seen_definitions and definition not in named_definitions:
                out.items.append(
                    ReviewItem(
                        UNCOVERED,
                        f"{name}: definition {definition}",
                        "new; generated from the schema alone (no policy rule names it)",
                    )
                )
    if extensions is not None:
        out.items += extension_review(extensions)
    return out
