"""Crossing tables: what a value of one protocol version loses or becomes in another, per pair.

The runtime moves values between versions by validating wire JSON with the other version's models.
What that cannot decide by itself is computed here from the two IRs, once, at generation time:

- `dropped`: per object definition both versions have, the wire keys the source defines as fields
  and the destination does not (open content such as `_meta` and the keywords of a JSON Schema
  document always travels); `drops`, what is emitted: per definition a value crosses as (a method's
  params or result), the places in it of those definitions and their keys, which the runtime leaves
  out of what reaches the destination (a key another definition that may sit at the same place has
  in the destination stays);
- `degrade`: content block types the source has and the destination lacks, what each becomes
  there (`policy/crossing.json`'s template, checked here against both schemas) and its `places` in
  the source (the runtime replaces the blocks it finds there, before validating);
- `params`: per request method both versions have, the params the source has and the destination
  does not (refused unless the policy drops them) and those the destination requires and the source
  lacks (made where the policy says so, and only where the params are those of the union member
  requiring it: its constant fields);
- `codes`: error codes the two versions number or name differently (a name the destination lacks
  reported as the policy's `otherwise`), and `overloaded`: a code the source overloads that the
  destination tells apart (the policy's `becomes`, for one method and `data` key);
- `reshapes` and `renames`: the policy/reshapes.json entries one version of the pair has and the
  other not, and the fields a policy/crossing.json `renamed_fields` entry renames between the two,
  each with its `places`: where its definition sits in a value of each destination definition (the
  runtime moves content at these paths and walks no type).

Every pair of versions gets a table in the package of the later one (`crossing.py`), so a version
generated later carries its crossings with every version known then, and no older package changes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import policy
from .errors import BindgenError
from .ir import AliasDef, ArrayOf, Const, MapOf, ObjectDef, Ref, SchemaIR, TypeExpr, UnionOf
from .surface import ProtocolSurface

META = "_meta"  # metadata in every version: never dropped
MAX_DEPTH = 8  # how deep a definition is searched for another
Path = tuple[str, ...]  # keys from a value's root ("*": every item of a list or value of a map)
Places = dict[str, tuple[Path, ...]]  # holder (Python name) -> paths


@dataclass(frozen=True)
class Version:
    """One side of a pair: its wire version, IR and protocol surface."""

    wire: str
    ir: SchemaIR
    surface: ProtocolSurface


@dataclass(frozen=True)
class Param:
    outcome: str  # "error" | "drop" | "generate"
    reason: str  # "" for the default refusal
    equals: object = None


@dataclass(frozen=True)
class Pair:
    source: str
    destination: str
    dropped: dict[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    drops: dict[str, dict[Path, tuple[str, ...]]] = field(default_factory=dict[str, dict[Path, tuple[str, ...]]])
    degrade: tuple[tuple[str, Mapping[str, Any], Places], ...] = ()  # (content type, becomes, places in the source)
    params: dict[str, dict[str, Param]] = field(default_factory=dict[str, dict[str, Param]])
    codes: dict[int, int] = field(default_factory=dict[int, int])
    overloaded: tuple[tuple[str, str, int, int], ...] = ()  # (method, data key, code, becomes)
    # (policy entry, destination has its list field, places in the destination)
    reshapes: tuple[tuple[policy.ReshapeRule, bool, Places], ...] = ()
    renames: tuple[tuple[str, str, str, Places], ...] = ()  # (definition, source name, destination name, places)
    # policy/crossing.json entries this pair applies (the policy review's attachments)
    rules: tuple[str, ...] = ()


def pair(source: Version, destination: Version) -> Pair:
    """The crossing table from `source` to `destination`."""
    rules: list[str] = []
    degrade = _degrade(source, destination, rules)
    params = _params(source, destination, rules)
    codes, overloaded = _codes(source.surface, destination.surface, rules)
    dropped = _dropped(source.ir, destination.ir)
    return Pair(
        source.wire,
        destination.wire,
        dropped=dropped,
        drops=_drops(dropped, destination),
        degrade=degrade,
        params=params,
        codes=codes,
        overloaded=overloaded,
        reshapes=_reshapes(source.ir, destination.ir),
        renames=_renames(source.ir, destination.ir, rules),
        rules=tuple(dict.fromkeys(rules)),
    )


def pairs_of(version: Version, others: Iterable[Version]) -> list[Pair]:
    """Both directions between `version` and each of `others` (a version of the same wire has none)."""
    out: list[Pair] = []
    for other in others:
        if other.wire != version.wire:
            out += [pair(other, version), pair(version, other)]
    return out


def rule_id(rule: policy.ContentRule | policy.ParamRule | policy.CodeRule | policy.RenameRule) -> str:
    """The policy review's id of a crossing.json entry."""
    if isinstance(rule, policy.ContentRule):
        return f"crossing.json content {rule.type}"
    if isinstance(rule, policy.RenameRule):
        return f"crossing.json {rule.type}.{rule.old} renamed {rule.new}"
    if isinstance(rule, policy.ParamRule):
        return f"crossing.json {rule.method} param {rule.param}"
    return f"crossing.json error code {rule.name} -> {rule.otherwise or rule.becomes}"


def all_rules() -> list[str]:
    rules = policy.crossing()
    return [rule_id(r) for r in (*rules.content, *rules.params, *rules.codes, *rules.renames)]


# -- fields --------------------------------------------------------------------------------------


def _objects(ir: SchemaIR) -> dict[str, ObjectDef]:
    return {name: d for name, d in ir.definitions.items() if isinstance(d, ObjectDef)}


def _json_schema(definition: ObjectDef) -> bool:
    """A JSON Schema document (a tool's `inputSchema`: it has the `$schema` keyword): every keyword
    is its content, whichever of them a version names as fields."""
    return definition.field("$schema") is not None


def _dropped(source: SchemaIR, destination: SchemaIR) -> dict[str, tuple[str, ...]]:
    theirs = _objects(destination)
    out: dict[str, tuple[str, ...]] = {}
    for name, ours in _objects(source).items():
        there = theirs.get(name)
        if there is None or _json_schema(ours) or _json_schema(there):
            continue
        gone = sorted({f.wire_name for f in ours.fields} - {f.wire_name for f in there.fields} - {META})
        if gone:
            out[name] = tuple(gone)
    return dict(sorted(out.items()))


def _targets(surface: ProtocolSurface) -> set[str]:
    """The definitions a value crosses as: every method's params and result, the input requests'."""
    found = {t for m in surface.methods for t in (m.params_type, m.result_type)}
    found |= {t for i in surface.input_requests for t in (i.params_type, i.result_type)}
    return {t for t in (*found, surface.input_required_result) if t is not None}


def _drops(dropped: Mapping[str, tuple[str, ...]], destination: Version) -> dict[str, dict[Path, tuple[str, ...]]]:
    """`dropped` placed: per target definition (its Python name), path -> the keys left out there."""
    ir, out = destination.ir, dict[str, dict[Path, tuple[str, ...]]]()
    for target in sorted(_targets(destination.surface) & ir.definitions.keys()):
        gone: dict[Path, set[str]] = {}
        kept: dict[Path, set[str]] = {}
        for path, name in _reached(ir, target):
            gone.setdefault(path, set()).update(dropped.get(name, ()))
            definition = ir.definitions[name]
            kept.setdefault(path, set()).update(f.wire_name for f in getattr(definition, "fields", ()))
        table = {path: tuple(sorted(keys - kept[path])) for path, keys in sorted(gone.items()) if keys - kept[path]}
        if table:
            out[ir.py_name(target)] = table
    return out


# -- content -------------------------------------------------------------------------------------


def _content_types(ir: SchemaIR) -> dict[str, str]:
    """The `type` constants of the schema's objects (content blocks are told apart by them) -> the definition."""
    out: dict[str, str] = {}
    for name, definition in _objects(ir).items():
        tag = definition.field("type")
        if tag is not None and isinstance(tag.type, Const) and isinstance(tag.type.value, str):
            out.setdefault(tag.type.value, name)
    return out


_FIELDS = re.compile(r"\{([^{}]+)\}")  # the fields a crossing.json template names (`{a|b}`)


def _degrade(
    source: Version, destination: Version, rules: list[str]
) -> tuple[tuple[str, Mapping[str, Any], Places], ...]:
    ours, theirs = _content_types(source.ir), _content_types(destination.ir)
    out: list[tuple[str, Mapping[str, Any], Places]] = []
    for rule in policy.crossing().content:
        if rule.type not in ours or rule.type in theirs:
            continue
        block = _objects(source.ir)[ours[rule.type]]
        named = {name for found in _FIELDS.findall(json.dumps(rule.becomes)) for name in found.split("|")}
        unknown = sorted(named - {f.wire_name for f in block.fields} - {META})
        if rule.becomes["type"] not in theirs or unknown:
            raise BindgenError(
                f"policy/crossing.json: {rule.type} content becomes {rule.becomes['type']!r} content, which MCP "
                f"{destination.wire} must have, from fields {ours[rule.type]} has in MCP {source.wire} (not {unknown})"
            )
        out.append((rule.type, rule.becomes, places(source.ir, ours[rule.type])))
        rules.append(rule_id(rule))
    return tuple(out)


# -- params --------------------------------------------------------------------------------------


def _param_fields(ir: SchemaIR, name: str | None) -> dict[str, bool]:
    """A params type's wire keys -> required (in any member, for a union of objects)."""
    if name is None or name not in ir.definitions:
        return {}
    definition = ir.definitions[name]
    if isinstance(definition, ObjectDef):
        return {f.wire_name: f.required for f in definition.fields}
    out: dict[str, bool] = {}
    if isinstance(definition, AliasDef) and isinstance(definition.type, UnionOf):
        for member in definition.type.members:
            if isinstance(member, Ref):
                for key, required in _param_fields(ir, member.name).items():
                    out[key] = out.get(key, False) or required
    return out


def _required_when(ir: SchemaIR, name: str | None, key: str) -> dict[str, object] | None:
    """Where a params union requires `key` in some members only: the constant fields those members
    share (a URL elicitation's `mode: url`); None where every value of the params requires it."""
    definition = ir.definitions.get(name or "")
    if not (isinstance(definition, AliasDef) and isinstance(definition.type, UnionOf)):
        return None
    consts: list[dict[str, object]] = []
    for member in definition.type.members:
        fields = ir.definitions.get(member.name) if isinstance(member, Ref) else None
        if isinstance(fields, ObjectDef) and any(f.wire_name == key and f.required for f in fields.fields):
            consts.append(
                {f.wire_name: f.type.value for f in fields.fields if f.required and isinstance(f.type, Const)}
            )
    return {k: v for k, v in consts[0].items() if all(c.get(k) == v for c in consts)} if consts else None


def _requests(version: Version) -> dict[str, str | None]:
    """Request method -> its params type, every direction and the input requests."""
    out = {m.method: m.params_type for m in version.surface.methods if m.kind == "request"}
    out.update({i.method: i.params_type for i in version.surface.input_requests})
    return out


def _params(source: Version, destination: Version, rules: list[str]) -> dict[str, dict[str, Param]]:
    theirs = _requests(destination)
    by_key = {(r.method, r.param): r for r in policy.crossing().params}
    out: dict[str, dict[str, Param]] = {}
    for method, params_type in sorted(_requests(source).items()):
        if method not in theirs:
            continue
        ours, there = _param_fields(source.ir, params_type), _param_fields(destination.ir, theirs[method])
        table: dict[str, Param] = {}
        for key in sorted(ours.keys() - there.keys() - {META}):
            rule = by_key.get((method, key))
            if rule is not None and rule.outcome in ("drop", "error"):
                table[key] = Param(rule.outcome, rule.reason, rule.equals)
                rules.append(rule_id(rule))
            else:
                table[key] = Param("error", "")
        for key in sorted(k for k, required in there.items() if required and k not in ours):
            rule = by_key.get((method, key))
            if rule is not None and rule.outcome == "generate":
                table[key] = Param("generate", rule.reason, _required_when(destination.ir, theirs[method], key))
                rules.append(rule_id(rule))
        if table:
            out[method] = table
    return out


# -- error codes ---------------------------------------------------------------------------------


def _codes(
    source: ProtocolSurface, destination: ProtocolSurface, rules: list[str]
) -> tuple[dict[int, int], tuple[tuple[str, str, int, int], ...]]:
    ours: Mapping[str, int] = dict(source.error_codes)
    theirs: Mapping[str, int] = dict(destination.error_codes)
    codes = {code: theirs[name] for name, code in ours.items() if name in theirs and theirs[name] != code}
    overloaded: list[tuple[str, str, int, int]] = []
    for rule in policy.crossing().codes:
        if rule.name not in ours:
            continue
        if rule.otherwise is not None and rule.name not in theirs and rule.otherwise in theirs:
            codes[ours[rule.name]] = theirs[rule.otherwise]
            rules.append(rule_id(rule))
        elif rule.becomes is not None and rule.becomes not in ours and rule.becomes in theirs:
            assert rule.method is not None and rule.data_key is not None  # the loader checks it
            overloaded.append((rule.method, rule.data_key, ours[rule.name], theirs[rule.becomes]))
            rules.append(rule_id(rule))
    return {k: codes[k] for k in sorted(codes)}, tuple(overloaded)


# -- where content moves -------------------------------------------------------------------------


def places(ir: SchemaIR, name: str) -> Places:
    """Where a value of definition `name` sits in a value of each definition of `ir` that can hold one."""
    out: Places = {}
    for holder in ir.definitions:
        found = tuple(dict.fromkeys(path for path, reached in _reached(ir, holder) if reached == name))
        if found:
            out[ir.py_name(holder)] = found
    return dict(sorted(out.items()))


def _reached(ir: SchemaIR, holder: str) -> list[tuple[Path, str]]:
    """Every definition a value of `holder` may hold, with where: (path, definition name)."""
    found: list[tuple[Path, str]] = []
    _walk(ir, Ref(holder), (), (), found)
    return found


def _walk(ir: SchemaIR, expr: TypeExpr, path: Path, seen: tuple[str, ...], found: list[tuple[Path, str]]) -> None:
    if len(path) > MAX_DEPTH:
        return
    if isinstance(expr, (ArrayOf, MapOf)):
        _walk(ir, expr.items if isinstance(expr, ArrayOf) else expr.values, (*path, "*"), seen, found)
    elif isinstance(expr, UnionOf):
        for member in expr.members:
            _walk(ir, member, path, seen, found)
    elif isinstance(expr, Ref) and expr.name not in seen and expr.name in ir.definitions:
        found.append((path, expr.name))
        definition, seen = ir.definitions[expr.name], (*seen, expr.name)
        if isinstance(definition, AliasDef):
            _walk(ir, definition.type, path, seen, found)
        else:
            for item in definition.fields:
                _walk(ir, item.type, (*path, item.wire_name), seen, found)


def _has(ir: SchemaIR, name: str, key: str) -> bool:
    definition = ir.definitions.get(name)
    return isinstance(definition, ObjectDef) and definition.field(key) is not None


def _reshapes(source: SchemaIR, destination: SchemaIR) -> tuple[tuple[policy.ReshapeRule, bool, Places], ...]:
    """The reshapes.json entries whose list field one side has and the other not (both have the definition)."""
    return tuple(
        (rule, listed, places(destination, rule.type))
        for rule in policy.reshapes()
        if rule.type in source.definitions
        and rule.type in destination.definitions
        and (listed := _has(destination, rule.type, rule.field)) != _has(source, rule.type, rule.field)
    )


def _renames(source: SchemaIR, destination: SchemaIR, rules: list[str]) -> tuple[tuple[str, str, str, Places], ...]:
    """The renamed_fields entries between the pair, either way: (definition, source key, destination key, places)."""
    out: list[tuple[str, str, str, Places]] = []
    for rule in policy.crossing().renames:
        for ours, theirs in ((rule.old, rule.new), (rule.new, rule.old)):
            if (
                _has(source, rule.type, ours)
                and _has(destination, rule.type, theirs)
                and not _has(destination, rule.type, ours)
            ):
                out.append((rule.type, ours, theirs, places(destination, rule.type)))
                rules.append(rule_id(rule))
    return tuple(out)
