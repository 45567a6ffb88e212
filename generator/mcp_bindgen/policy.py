"""The policy files (`policy/*.json`) read into typed, frozen records: one loader per file.

Each loader checks what every rule of its file must carry (a reason, a valid direction, a parseable
gate) and is cached per path. The modules applying a policy (`normalise`, `naming`, `surface`,
`review`, `extension`, `render/extension_modules`) read the files only through here. A loader that
takes `path` reads another file of the same form instead (tests do, with policies of their own).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, cast

from .errors import BindgenError
from .paths import policy_dir

Direction = Literal["client_to_server", "server_to_client"]
_DIRECTIONS: tuple[Direction, ...] = ("client_to_server", "server_to_client")


OVERLAY_ENV = "MCP_BINDGEN_POLICY"  # a folder of policy files extending the project's (`generate --policy`)


def _read(name: str, path: Path | None = None) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((path or policy_dir() / name).read_text(encoding="utf-8"))
    extra = overlay_file(name) if path is None else None
    if extra is not None:
        try:
            more = json.loads(extra.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BindgenError(f"{extra}: not a readable JSON policy file ({exc})") from None
        if not isinstance(more, dict):
            raise BindgenError(f"{extra}: a policy file is a JSON object, like policy/{name}")
        data = _merged(data, cast("dict[str, Any]", more))
    return data


def overlay_file(name: str) -> Path | None:
    """The overlay's file `name`, where `generate --policy DIR` named a folder that has it."""
    folder = os.environ.get(OVERLAY_ENV)
    path = Path(folder) / name if folder else None
    return path if path is not None and path.is_file() else None


def check_overlay(folder: Path) -> None:
    """A `--policy` folder holds only policy files the project has (one sentence otherwise)."""
    if not folder.is_dir():
        raise BindgenError(f"--policy {folder}: no such folder")
    known = {p.name for p in policy_dir().glob("*.json")}
    unknown = sorted(p.name for p in folder.iterdir() if p.name not in known)
    if unknown:
        names = ", ".join(sorted(known))
        raise BindgenError(f"--policy {folder}: {', '.join(unknown)} is no policy file of mcp-bindgen (it has {names})")


def _merged(base: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    """`more` over `base`: objects merged key by key, lists extended (a rule added), the rest replaced."""
    out = dict(base)
    for key, value in more.items():
        old = out.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            out[key] = _merged(cast("dict[str, Any]", old), cast("dict[str, Any]", value))
        elif isinstance(old, list) and isinstance(value, list):
            out[key] = [*cast("list[Any]", old), *cast("list[Any]", value)]
        else:
            out[key] = value
    return out


# -- schema_patches.json -----------------------------------------------------------------------


@dataclass(frozen=True)
class Patch:
    """A correction of an upstream defect. It attaches to content, not to version names: it applies to
    any schema whose document holds `expect` at `pointer`, and is stale when no known schema does."""

    pointer: str
    expect: Any
    value: Any
    reason: str


@cache
def schema_patches(path: Path | None = None) -> tuple[Patch, ...]:
    patches = []
    for entry in _read("schema_patches.json", path)["patches"]:
        if not entry.get("reason"):
            raise BindgenError(f"schema patch at {entry.get('pointer')} has no reason")
        patches.append(Patch(entry["pointer"], entry["expect"], entry["value"], entry["reason"]))
    return tuple(patches)


# -- capabilities.json -------------------------------------------------------------------------


@dataclass(frozen=True)
class Gate:
    side: Literal["server", "client"]
    path: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> Gate:
        side, _, dotted = text.partition(":")
        if side not in ("server", "client") or not dotted:
            raise BindgenError(f"capability gate {text!r} must read `server:<path>` or `client:<path>`")
        return cls(side, tuple(dotted.split(".")))  # type: ignore[arg-type]

    def __str__(self) -> str:
        return f"{self.side}:{'.'.join(self.path)}"


@dataclass(frozen=True)
class ParamGate:
    param: str
    gate: Gate
    equals: Any = None
    present: bool = False


@dataclass(frozen=True)
class GateRule:
    """Which capability gates a method. A rule attaches to the method (and direction) it names in any
    schema that has it, whatever the version is called; a gate or param gate naming a capability the
    schema does not define does not attach there (`ungated_without_capability` makes the method
    ungated in such a schema instead)."""

    method: str
    direction: str | None
    gate: Gate | None
    param_gates: tuple[ParamGate, ...]
    optional_handler: bool
    ungated_without_capability: bool
    reason: str

    def matches(self, method: str, direction: str) -> bool:
        return self.method == method and (self.direction is None or self.direction == direction)


@cache
def capability_convention() -> str:
    """The reason of policy/capabilities.json `convention`: how a method no rule names is gated
    (`surface.conventional_gate`)."""
    entry = _read("capabilities.json").get("convention") or {}
    if not entry.get("reason"):
        raise BindgenError("policy/capabilities.json: `convention` needs a reason")
    return str(entry["reason"])


@cache
def capability_rules(path: Path | None = None) -> tuple[GateRule, ...]:
    rules = []
    for entry in _read("capabilities.json", path)["rules"]:
        if not entry.get("reason"):
            raise BindgenError(f"capability rule for {entry.get('method')!r} has no reason")
        param_gates = tuple(
            ParamGate(pg["param"], Gate.parse(pg["gate"]), pg.get("equals"), bool(pg.get("present", False)))
            for pg in entry.get("param_gates", [])
        )
        rules.append(
            GateRule(
                method=entry["method"],
                direction=entry.get("direction"),
                gate=Gate.parse(entry["gate"]) if entry["gate"] else None,
                param_gates=param_gates,
                optional_handler=bool(entry.get("optional_handler", False)),
                ungated_without_capability=bool(entry.get("ungated_without_capability", False)),
                reason=entry["reason"],
            )
        )
    return tuple(rules)


# -- error_codes.json --------------------------------------------------------------------------


@dataclass(frozen=True)
class PolicyErrorCode:
    name: str
    code: int
    method: str | None  # attaches only to schemas that have this method
    reason: str


@cache
def error_codes() -> tuple[PolicyErrorCode, ...]:
    return tuple(
        PolicyErrorCode(e["name"], e["code"], e.get("method"), e["reason"]) for e in _read("error_codes.json")["codes"]
    )


# -- field_defaults.json -----------------------------------------------------------------------


@dataclass(frozen=True)
class FieldDefault:
    """The Python-side default of a required field, by wire name."""

    wire_name: str
    value: Any  # None where `value_from_const`
    value_from_const: bool  # the field's own constant is its default
    per_definition: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))  # definition -> value
    reason: str = ""


@cache
def field_defaults() -> Mapping[str, FieldDefault]:
    out: dict[str, FieldDefault] = {}
    for wire, entry in _read("field_defaults.json")["defaults"].items():
        if not entry.get("reason"):
            raise BindgenError(f"field default for {wire!r} has no reason")
        from_const = bool(entry.get("value_from_const", False))
        if not from_const and "value" not in entry:
            raise BindgenError(f"field default for {wire!r} has neither a value nor value_from_const")
        per_definition = entry.get("per_definition", {})
        if not isinstance(per_definition, dict):
            raise BindgenError(f"field default for {wire!r}: per_definition must map definitions to values")
        out[wire] = FieldDefault(
            wire, entry.get("value"), from_const, MappingProxyType(dict(per_definition)), entry["reason"]
        )
    return MappingProxyType(out)


# -- field_names.json, type_names.json, handler_names.json -------------------------------------


@dataclass(frozen=True)
class Rename:
    """A name the default rule cannot produce well (a wire key, a schema definition, a message type)."""

    name: str
    py_name: str
    reason: str


def _renames(file: str, what: str, path: Path | None) -> Mapping[str, Rename]:
    out: dict[str, Rename] = {}
    for name, entry in _read(file, path)["renames"].items():
        if not entry.get("reason"):
            raise BindgenError(f"{what} rename for {name!r} has no reason")
        out[name] = Rename(name, entry["py_name"], entry["reason"])
    return MappingProxyType(out)


@cache
def field_names(path: Path | None = None) -> Mapping[str, Rename]:
    """Wire key -> its Python attribute name."""
    return _renames("field_names.json", "field", path)


@cache
def type_names(path: Path | None = None) -> Mapping[str, Rename]:
    """Schema definition -> its class name inside models.py."""
    return _renames("type_names.json", "type", path)


@cache
def handler_names() -> Mapping[str, Rename]:
    """Message type -> its handler and client-method name."""
    return _renames("handler_names.json", "handler", None)


# -- results.json, runtime_methods.json --------------------------------------------------------


@cache
def empty_results() -> Mapping[str, str]:
    """Request method -> why its result is the schema's empty result."""
    return MappingProxyType(dict(_read("results.json")["empty_result"]))


@cache
def runtime_methods() -> Mapping[str, str]:
    """Method the runtime implements itself -> why (no stub handler for it)."""
    return MappingProxyType(dict(_read("runtime_methods.json")["builtin"]))


@cache
def runtime_served() -> Mapping[str, str]:
    """Method whose stub handler the runtime serves when the author leaves it out -> why."""
    return MappingProxyType(dict(_read("runtime_methods.json").get("served_unless_overridden", {})))


# -- era_methods.json --------------------------------------------------------------------------


@dataclass(frozen=True)
class EraMethod:
    """A request of one era a stub of the other era still offers (sent by name on the negotiated version)."""

    method: str
    name: str  # the typed client's method
    params: tuple[tuple[str, str, bool], ...]  # (wire name, JSON type, required)
    result: str | None  # the stub's type of that name where its schema defines one; None: answers nothing


@dataclass(frozen=True)
class EraParam:
    """A param of one era's request that a stub whose version lacks it still takes."""

    method: str
    wire: str  # the param's wire name
    type: str  # its JSON type
    reason: str


@dataclass(frozen=True)
class EraMethods:
    requests: tuple[EraMethod, ...]
    listen: str  # the listen method
    listen_notification: str  # what a listen stream yields, in the stub's types
    params: tuple[EraParam, ...] = ()

    def params_of(self, method: str) -> tuple[EraParam, ...]:
        return tuple(p for p in self.params if p.method == method)


@cache
def era_methods() -> EraMethods:
    """policy/era_methods.json: what a typed client offers of the era its version is not."""
    raw = _read("era_methods.json")
    requests = []
    for method, entry in raw["requests"].items():
        if not entry.get("reason"):
            raise BindgenError(f"policy/era_methods.json: {method} has no reason")
        params = tuple((wire, kind.rstrip("?"), not kind.endswith("?")) for wire, kind in entry["params"].items())
        requests.append(EraMethod(method, entry["name"], params, entry["result"]))
    params = []
    for method, entries in raw.get("params", {}).items():
        for wire, entry in entries.items():
            if not entry.get("reason"):
                raise BindgenError(f"policy/era_methods.json: params {method} {wire} has no reason")
            params.append(EraParam(method, wire, entry["type"], entry["reason"]))
    listen = raw["listen"]
    return EraMethods(tuple(requests), listen["method"], listen["notification"], tuple(params))


# -- extension_methods.json --------------------------------------------------------------------


@dataclass(frozen=True)
class ExtensionPolicy:
    """What an extension's schema does not say: who sends each of its methods, and which core requests
    a server may answer with a task (its "Supported Methods")."""

    directions: Mapping[str, Direction]  # method -> who sends it
    task_results: tuple[str, ...]  # core request methods, sorted
    # Methods of the extension's own channel, not the MCP connection (MCP Apps: the host<->app bridge).
    bridge: frozenset[str] = frozenset()


@cache
def extension_policies() -> Mapping[str, ExtensionPolicy]:
    """Extension identifier -> its policy."""
    raw = _read("extension_methods.json")
    directions: dict[str, dict[str, Direction]] = {}
    bridge: dict[str, set[str]] = {}
    for identifier, methods in raw["extensions"].items():
        directions[identifier] = {}
        bridge[identifier] = set()
        for method, entry in methods.items():
            if entry.get("channel", "mcp") not in ("mcp", "bridge"):
                raise BindgenError(f"policy/extension_methods.json: {identifier} {method} has no valid channel")
            if entry.get("channel") == "bridge":
                bridge[identifier].add(method)
            if not entry.get("reason"):
                raise BindgenError(f"policy/extension_methods.json: {identifier} {method} has no reason")
            if entry.get("direction") not in _DIRECTIONS:
                raise BindgenError(f"policy/extension_methods.json: {identifier} {method} has no valid direction")
            directions[identifier][method] = entry["direction"]
    task_results: dict[str, tuple[str, ...]] = {}
    for identifier, entries in raw.get("task_results", {}).items():
        for method, entry in entries.items():
            if not entry.get("reason"):
                raise BindgenError(f"policy/extension_methods.json: task_results {identifier} {method} has no reason")
        task_results[identifier] = tuple(sorted(entries))
    return MappingProxyType(
        {
            identifier: ExtensionPolicy(
                MappingProxyType(directions.get(identifier, {})),
                task_results.get(identifier, ()),
                frozenset(bridge.get(identifier, ())),
            )
            for identifier in sorted(set(directions) | set(task_results))
        }
    )


def extension_policy(identifier: str) -> ExtensionPolicy:
    """The policy of one extension (empty when the file has none for it)."""
    return extension_policies().get(identifier) or ExtensionPolicy(MappingProxyType({}), ())


# -- routing.json, listen_filters.json ---------------------------------------------------------


@cache
def routing() -> Mapping[str, str]:
    """policy/routing.json: request method -> the params field the stateless HTTP wire mirrors into
    `Mcp-Name`."""
    out: dict[str, str] = {}
    for method, entry in _read("routing.json")["name_param"].items():
        if not entry.get("reason") or not isinstance(entry.get("param"), str):
            raise BindgenError(f"policy/routing.json: {method} needs a `param` and a reason")
        out[method] = entry["param"]
    return MappingProxyType(out)


@dataclass(frozen=True)
class ListenFilters:
    """policy/listen_filters.json: the listen request, the params field holding its filter object,
    and filter key -> the server notification it opts in to."""

    method: str
    container: str
    filters: Mapping[str, str]


@cache
def listen_filters() -> ListenFilters:
    raw = _read("listen_filters.json")
    filters: dict[str, str] = {}
    for key, entry in raw["filters"].items():
        if not entry.get("reason") or not isinstance(entry.get("notification"), str):
            raise BindgenError(f"policy/listen_filters.json: {key} needs a `notification` and a reason")
        filters[key] = entry["notification"]
    return ListenFilters(raw["method"], raw["container"], MappingProxyType(filters))


@cache
def extension_routing() -> Mapping[str, Mapping[str, str]]:
    """policy/routing.json `extensions`: extension identifier -> its request method -> the params field
    `Mcp-Name` mirrors."""
    out: dict[str, Mapping[str, str]] = {}
    for identifier, entries in _read("routing.json").get("extensions", {}).items():
        methods: dict[str, str] = {}
        for method, entry in entries.items():
            if not entry.get("reason") or not isinstance(entry.get("param"), str):
                raise BindgenError(f"policy/routing.json: {identifier} {method} needs a `param` and a reason")
            methods[method] = entry["param"]
        out[identifier] = MappingProxyType(methods)
    return MappingProxyType(out)


# -- reshapes.json -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ReshapeRule:
    """policy/reshapes.json: a definition whose content moved between a list field of tagged items
    (`field`, in the versions that have it) and plain fields (in the versions that do not): `gather`
    says which items' `take` becomes which plain field, `spread` which plain field becomes which item
    (`item` filled from the value's fields as a crossing.json content template is: `"{content}"`).
    It attaches to every schema whose definition `type` has `field`, and is emitted into that
    version's PROTOCOL.reshapes for `protocol.crossing`."""

    type: str
    field: str
    entry: Mapping[str, Any]  # the entry as written, without its reason (what the runtime reads)
    reason: str


@cache
def reshapes() -> tuple[ReshapeRule, ...]:
    out: list[ReshapeRule] = []
    for entry in _read("reshapes.json")["reshapes"]:
        where = f"policy/reshapes.json: {entry.get('type')}.{entry.get('field')}"
        if not entry.get("reason") or not isinstance(entry.get("type"), str) or not isinstance(entry.get("field"), str):
            raise BindgenError(f"{where} needs a `type`, a `field` and a reason")
        for gather in entry.get("gather", []):
            if not {"take", "into"} <= set(gather) or gather.get("join", "concat") not in ("concat", "first"):
                raise BindgenError(f"{where}: a gather names `take`, `into` and a `join` of concat or first")
        for spread in entry.get("spread", []):
            if not isinstance(spread.get("from"), str) or not isinstance(spread.get("item"), dict):
                raise BindgenError(f"{where}: a spread names `from` and an `item` object")
        kept = {key: value for key, value in entry.items() if key != "reason"}
        out.append(ReshapeRule(entry["type"], entry["field"], MappingProxyType(kept), entry["reason"]))
    return tuple(out)


# -- crossing.json ------------------------------------------------------------------------------

_OUTCOMES = ("error", "drop", "generate")


@dataclass(frozen=True)
class ContentRule:
    """A content block `type` the destination lacks, sent as what it `becomes` there: a JSON template
    of a block the destination has, filled from the block's fields (`"{a|b}"`: the first of fields
    a, b it has; `"[...]"`: text left out where a field in it is missing; `spec.Degrade`)."""

    type: str
    becomes: Mapping[str, Any]
    reason: str


@dataclass(frozen=True)
class ParamRule:
    """A request param one side of a pair has and the other not: refused, dropped (only when it
    `equals` that value, if given) or generated where the destination requires it."""

    method: str
    param: str
    outcome: str  # "error" | "drop" | "generate"
    reason: str
    equals: Any = None


@dataclass(frozen=True)
class CodeRule:
    """An error code's name the destination lacks (reported as `otherwise` there), or a code the
    source overloads that becomes `becomes` for errors of `method` whose data has `data_key`."""

    name: str
    reason: str
    otherwise: str | None = None
    method: str | None = None
    data_key: str | None = None
    becomes: str | None = None


@dataclass(frozen=True)
class RenameRule:
    """A field of definition `type` that versions name `old` and later versions `new` (written
    `from` and `to`): a value set under either name reaches a peer of the other under its name."""

    type: str
    old: str
    new: str
    reason: str


@dataclass(frozen=True)
class CrossingPolicy:
    content: tuple[ContentRule, ...]
    params: tuple[ParamRule, ...]
    codes: tuple[CodeRule, ...]
    renames: tuple[RenameRule, ...] = ()


_RENAME_KEYS = {"from": "old", "to": "new"}  # a renamed_fields entry's keys -> RenameRule's


@cache
def crossing() -> CrossingPolicy:
    raw = _read("crossing.json")
    where = "policy/crossing.json"
    try:
        content = tuple(ContentRule(**entry) for entry in raw.get("content", []))
        params = tuple(ParamRule(**entry) for entry in raw.get("request_params", []))
        codes = tuple(CodeRule(**entry) for entry in raw.get("error_codes", []))
        renames = tuple(
            RenameRule(**{_RENAME_KEYS.get(str(key), str(key)): value for key, value in entry.items()})
            for entry in raw.get("renamed_fields", [])
        )
    except TypeError as exc:
        raise BindgenError(f"{where}: an entry has a key the file does not know ({exc})") from None
    for rule in (*content, *params, *codes, *renames):
        if not rule.reason:
            raise BindgenError(f"{where}: every entry needs a reason ({rule})")
    for rule in content:
        if not isinstance(rule.becomes, dict) or not isinstance(rule.becomes.get("type"), str):
            raise BindgenError(f"{where}: {rule.type} content `becomes` a content block template, with its `type`")
    for rule in params:
        if rule.outcome not in _OUTCOMES:
            raise BindgenError(f"{where}: {rule.method} {rule.param}: outcome is one of {', '.join(_OUTCOMES)}")
    for rule in codes:
        if (rule.otherwise is None) == (rule.becomes is None) or (rule.becomes and not (rule.method and rule.data_key)):
            raise BindgenError(f"{where}: {rule.name}: give `otherwise`, or `becomes` with `method` and `data_key`")
    return CrossingPolicy(content, params, codes, renames)
