"""Structural compatibility of two surfaces: every change classified breaking or additive.

JSON Schema is compared by what it accepts, not by its text. An input schema (what the server
accepts from clients) must not accept less; an output schema (what clients receive) must not
produce more. So one comparison reports whether the new schema *narrows* or *widens*, and the
direction decides which of the two breaks. The rules and their limits are in docs/contract.md.

Used by the lock (`mcp-bindgen lock --check`, `mcp_bindings.live.contract.lock`) and by
`mcp-bindgen openapi diff` (two OpenAPI descriptions' tool surfaces): the same change classes. It
imports nothing but the standard library, so both the generator and the live-server tools may use it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

Kind = Literal["breaking", "additive"]
Effect = Literal["narrows", "widens", "both", "none"]
MAX_DEPTH = 32  # $ref chains and nesting deeper than this are compared as text

_LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
_METADATA = frozenset(
    {"title", "description", "examples", "$comment", "default", "deprecated", "readOnly", "writeOnly"}
)


@dataclass(frozen=True, order=True)
class Change:
    where: str  # e.g. "tool `add` inputSchema.properties.b"
    what: str
    kind: Kind
    version: str = ""  # the protocol version whose surfaces differ ("": not compared per version)

    def as_json(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class _Delta:
    path: str
    what: str
    effect: Effect


def _types(schema: dict[str, Any]) -> set[str] | None:
    value = schema.get("type")
    if value is None:
        return None
    types = {value} if isinstance(value, str) else {str(v) for v in value}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    if "number" in types:
        types.add("integer")
    return types


def _local_refs(node: Any, found: set[str]) -> set[str]:
    """The local definitions (`#/$defs/X`, `#/definitions/X`) `node` refers to, added to `found`."""
    if isinstance(node, dict):
        for key, value in node.items():  # pyright: ignore[reportUnknownVariableType]
            if key == "$ref" and isinstance(value, str):
                found.add(value.rsplit("/", 1)[-1] if value.startswith(("#/$defs/", "#/definitions/")) else value)
            else:
                _local_refs(value, found)
    elif isinstance(node, list):
        for value in node:  # pyright: ignore[reportUnknownVariableType]
            _local_refs(value, found)
    return found


def _ref(node: Any) -> str | None:
    return node.get("$ref") if isinstance(node, dict) and isinstance(node.get("$ref"), str) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]


def _refers_to(node: Any, names: set[str]) -> bool:
    return not names.isdisjoint(_local_refs(node, set()))


def _dirty_definitions(old_root: dict[str, Any], new_root: dict[str, Any]) -> set[str]:
    """The definitions whose text differs between the sides, or that refer (at any depth) to one
    that does: the same text referring to one of them may still accept something else."""
    defs: list[dict[str, Any]] = [{}, {}]
    for side, root in enumerate((old_root, new_root)):
        for key in ("$defs", "definitions"):
            if isinstance(root.get(key), dict):
                defs[side].update(root[key])
    dirty = {name for name in set(defs[0]) | set(defs[1]) if defs[0].get(name) != defs[1].get(name)}
    refs = {name: _local_refs(defs[0].get(name), _local_refs(defs[1].get(name), set())) for name in defs[1]}
    grew = bool(dirty)
    while grew:
        more = {name for name, found in refs.items() if name not in dirty and not found.isdisjoint(dirty)}
        dirty |= more
        grew = bool(more)
    if old_root != new_root:
        dirty.add("#")  # the root itself, for `{"$ref": "#"}`
    return dirty


class _Comparer:
    def __init__(self, old_root: dict[str, Any], new_root: dict[str, Any]) -> None:
        self.roots = (old_root, new_root)
        self.deltas: list[_Delta] = []
        self.dirty = _dirty_definitions(old_root, new_root)
        self.visited: set[tuple[str | None, str | None]] = set()

    def _resolve(self, schema: Any, side: int) -> Any:
        for _ in range(MAX_DEPTH):
            if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
                return schema
            ref: str = schema["$ref"]  # pyright: ignore[reportUnknownVariableType]
            target: Any = self.roots[side]
            if ref != "#":
                for prefix in ("#/$defs/", "#/definitions/"):
                    if ref.startswith(prefix):
                        target = (target.get(prefix[2:-1]) or {}).get(ref[len(prefix) :])
                        break
                else:
                    return schema
            if target is None:
                return schema
            schema = target
        return schema

    def add(self, path: str, what: str, effect: Effect) -> None:
        self.deltas.append(_Delta(path, what, effect))

    def _same(self, old: Any, new: Any) -> bool:
        """The same text, and no reference in it to a definition that differs between the sides."""
        return old == new and not (self.dirty and _refers_to(old, self.dirty))

    def compare(self, old: Any, new: Any, path: str, depth: int = 0) -> None:
        if self._same(old, new):
            return
        pair = (_ref(old), _ref(new))
        if pair != (None, None):
            if pair in self.visited:
                return  # compared once already (a definition reached again, or a recursive one): reported there
            self.visited.add(pair)
        old, new = self._resolve(old, 0), self._resolve(new, 1)
        if (old == new and depth > MAX_DEPTH) or self._same(old, new):
            return
        if depth > MAX_DEPTH or not isinstance(old, dict) or not isinstance(new, dict):
            self.add(path, "changed (not compared structurally)", "both")
            return
        o: dict[str, Any] = old
        n: dict[str, Any] = new
        self._types(o, n, path)
        self._enum(o, n, path)
        self._bounds(o, n, path)
        self._objects(o, n, path, depth)
        if "items" in o or "items" in n:
            if isinstance(o.get("items"), dict) and isinstance(n.get("items"), dict):
                self.compare(o["items"], n["items"], f"{path}.items", depth + 1)
            elif o.get("items") != n.get("items"):
                self.add(f"{path}.items", "changed", "narrows" if "items" in n else "widens")
        self._combinators(o, n, path, depth)
        self._keywords(o, n, path)
        rest = {k for k in set(o) | set(n) if k.startswith("x-") or k in _METADATA}
        if any(o.get(k) != n.get(k) for k in rest):
            self.add(
                path, "annotations changed (" + ", ".join(sorted(k for k in rest if o.get(k) != n.get(k))) + ")", "none"
            )

    def _combinators(self, o: dict[str, Any], n: dict[str, Any], path: str, depth: int) -> None:
        for key in ("anyOf", "oneOf", "allOf", "not", "if", "then", "else", "prefixItems", "dependentSchemas"):
            if self._same(o.get(key), n.get(key)):
                continue
            both_lists = isinstance(o.get(key), list) and isinstance(n.get(key), list)
            if key in ("anyOf", "oneOf") and both_lists:
                self._alternatives(o[key], n[key], f"{path}.{key}")
            elif key == "allOf" and both_lists and len(o[key]) == len(n[key]):
                # Every part must hold: a part that narrows narrows the whole (its `$ref`s resolved).
                for index, (a, b) in enumerate(zip(o[key], n[key], strict=True)):
                    self.compare(a, b, f"{path}.allOf[{index}]", depth + 1)
            else:
                self.add(f"{path}.{key}", "changed (not compared structurally)", "both")

    def _keywords(self, o: dict[str, Any], n: dict[str, Any], path: str) -> None:
        for key in ("pattern", "format", "multipleOf", "uniqueItems", "contentEncoding"):
            if o.get(key) != n.get(key):
                if key not in o:
                    self.add(f"{path}.{key}", f"{key} {n[key]!r} added", "narrows")
                elif key not in n:
                    self.add(f"{path}.{key}", f"{key} {o[key]!r} removed", "widens")
                else:
                    self.add(f"{path}.{key}", f"{key} {o[key]!r} -> {n[key]!r}", "both")

    def _alternatives(self, old: list[Any], new: list[Any], path: str) -> None:
        olds = {json.dumps(self._resolve(s, 0), sort_keys=True) for s in old}
        news = {json.dumps(self._resolve(s, 1), sort_keys=True) for s in new}
        if olds - news:
            self.add(path, f"{len(olds - news)} alternative(s) removed or changed", "narrows")
        if news - olds:
            self.add(path, f"{len(news - olds)} alternative(s) added or changed", "widens")

    def _types(self, o: dict[str, Any], n: dict[str, Any], path: str) -> None:
        ot, nt = _types(o), _types(n)
        if ot == nt:
            return
        if nt is None:
            self.add(path, f"type {sorted(ot or [])} removed (any type)", "widens")
        elif ot is None:
            self.add(path, f"type restricted to {sorted(nt)}", "narrows")
        elif ot - nt and nt - ot:
            self.add(path, f"type {sorted(ot)} -> {sorted(nt)}", "both")
        else:
            if ot - nt:
                self.add(path, f"type no longer accepts {sorted(ot - nt)}", "narrows")
            if nt - ot:
                self.add(path, f"type now accepts {sorted(nt - ot)}", "widens")

    def _enum(self, o: dict[str, Any], n: dict[str, Any], path: str) -> None:
        for key in ("enum", "const"):
            if o.get(key) == n.get(key):
                continue
            ov = o.get(key) if key == "enum" else ([o[key]] if key in o else None)
            nv = n.get(key) if key == "enum" else ([n[key]] if key in n else None)
            if nv is None:
                self.add(path, f"{key} removed", "widens")
            elif ov is None:
                self.add(path, f"{key} {nv!r} added", "narrows")
            else:
                oset = {json.dumps(v, sort_keys=True) for v in ov}
                nset = {json.dumps(v, sort_keys=True) for v in nv}
                if oset - nset:
                    self.add(path, f"{key} values removed: {', '.join(sorted(oset - nset))}", "narrows")
                if nset - oset:
                    self.add(path, f"{key} values added: {', '.join(sorted(nset - oset))}", "widens")

    def _bounds(self, o: dict[str, Any], n: dict[str, Any], path: str) -> None:
        for key in _LOWER_BOUNDS + _UPPER_BOUNDS:
            ov, nv = o.get(key), n.get(key)
            if ov == nv or isinstance(ov, bool) or isinstance(nv, bool):
                continue
            if nv is None:
                self.add(path, f"{key} {ov} removed", "widens")
            elif ov is None:
                self.add(path, f"{key} {nv} added", "narrows")
            elif isinstance(ov, (int, float)) and isinstance(nv, (int, float)):
                tighter = nv > ov if key in _LOWER_BOUNDS else nv < ov
                self.add(path, f"{key} {ov} -> {nv}", "narrows" if tighter else "widens")

    def _objects(self, o: dict[str, Any], n: dict[str, Any], path: str, depth: int) -> None:
        op: dict[str, Any] = o.get("properties") or {}
        np_: dict[str, Any] = n.get("properties") or {}
        oreq, nreq = set(o.get("required") or []), set(n.get("required") or [])
        for name in sorted(set(op) | set(np_) | oreq | nreq):
            where = f"{path}.properties.{name}"
            if name in op and name not in np_:
                self.add(where, "property removed", "narrows" if n.get("additionalProperties") is False else "both")
            elif name in np_ and name not in op:
                if name in nreq:
                    self.add(where, "required property added", "narrows")
                    continue
                closed = o.get("additionalProperties") is False
                self.add(where, "property added", "widens" if closed else "none")
            elif name in op:
                self.compare(op[name], np_[name], where, depth + 1)
            if name in nreq and name not in oreq:
                self.add(where, "now required", "narrows")
            elif name in oreq and name not in nreq:
                self.add(where, "no longer required", "widens")
        oa, na = o.get("additionalProperties"), n.get("additionalProperties")
        if oa != na:
            if na is False:
                self.add(path, "additionalProperties closed", "narrows")
            elif oa is False:
                self.add(path, "additionalProperties opened", "widens")
            elif isinstance(oa, dict) and isinstance(na, dict):
                self.compare(oa, na, f"{path}.additionalProperties", depth + 1)
            else:
                self.add(path, "additionalProperties changed", "both")


def _classify(effect: Effect, direction: Literal["input", "output"], what: str) -> Kind:
    if effect == "none":
        return "additive"
    if effect == "both":
        return "breaking"
    if direction == "input":
        return "breaking" if effect == "narrows" else "additive"
    # Output: a new required field is a guarantee more (additive); anything that lets more through breaks.
    return "breaking" if effect == "widens" else "additive"


def compare_schemas(old: Any, new: Any, where: str, direction: Literal["input", "output"]) -> list[Change]:
    comparer = _Comparer(old if isinstance(old, dict) else {}, new if isinstance(new, dict) else {})
    comparer.compare(old, new, "")
    out: list[Change] = []
    for delta in comparer.deltas:
        effect = delta.effect
        if direction == "output" and delta.what.startswith("property removed"):
            effect = "widens"  # a field clients read is gone
        if direction == "output" and delta.what.startswith(("property added", "required property added")):
            effect = "none"
        out.append(Change(f"{where}{delta.path}", delta.what, _classify(effect, direction, delta.what)))
    return out


def _by(items: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    return {str(item.get(key)): item for item in items}


def compare_surfaces(old: dict[str, Any], new: dict[str, Any], version: str) -> list[Change]:
    """Every change from `old` to `new` (one protocol version's surfaces, `version`), sorted."""
    changes = _tools_changes(old, new, "")
    changes += _prompts_changes(old, new, "")
    changes += _resources_changes(old, new, "")
    changes += _capabilities_changes(old, new, "")
    return sorted(replace(change, version=version) for change in changes)


def _tools_changes(old: dict[str, Any], new: dict[str, Any], prefix: str) -> list[Change]:
    changes: list[Change] = []
    ot, nt = _by(old.get("tools") or [], "name"), _by(new.get("tools") or [], "name")
    for name in sorted(set(ot) | set(nt)):
        where = f"{prefix}tool `{name}`"
        if name not in nt:
            changes.append(Change(where, "tool removed", "breaking"))
        elif name not in ot:
            changes.append(Change(where, "tool added", "additive"))
        else:
            changes += _tool_changes(ot[name], nt[name], where)
    return changes


def _tool_changes(a: dict[str, Any], b: dict[str, Any], where: str) -> list[Change]:
    """The changes of one tool both surfaces list."""
    changes = compare_schemas(a.get("inputSchema"), b.get("inputSchema"), f"{where} inputSchema", "input")
    ao, bo = a.get("outputSchema"), b.get("outputSchema")
    if ao is not None and bo is None:
        changes.append(Change(f"{where} outputSchema", "output schema removed", "breaking"))
    elif ao is None and bo is not None:
        changes.append(Change(f"{where} outputSchema", "output schema added", "additive"))
    elif ao is not None:
        changes += compare_schemas(ao, bo, f"{where} outputSchema", "output")
    for key in ("description", "title", "annotations", "icons", "_meta", "execution"):
        if a.get(key) != b.get(key):
            changes.append(Change(where, f"{key} changed", "additive"))
    return changes


def _prompts_changes(old: dict[str, Any], new: dict[str, Any], prefix: str) -> list[Change]:
    changes: list[Change] = []
    op, np_ = _by(old.get("prompts") or [], "name"), _by(new.get("prompts") or [], "name")
    for name in sorted(set(op) | set(np_)):
        where = f"{prefix}prompt `{name}`"
        if name not in np_:
            changes.append(Change(where, "prompt removed", "breaking"))
        elif name not in op:
            changes.append(Change(where, "prompt added", "additive"))
        else:
            changes += _prompt_args(op[name], np_[name], where)
    return changes


def _resources_changes(old: dict[str, Any], new: dict[str, Any], prefix: str) -> list[Change]:
    changes: list[Change] = []
    for key, label, sort_key in (
        ("resources", "resource", "uri"),
        ("resourceTemplates", "resource template", "uriTemplate"),
    ):
        o, n = _by(old.get(key) or [], sort_key), _by(new.get(key) or [], sort_key)
        for uri in sorted(set(o) | set(n)):
            where = f"{prefix}{label} `{uri}`"
            if uri not in n:
                changes.append(Change(where, f"{label} removed", "breaking"))
            elif uri not in o:
                changes.append(Change(where, f"{label} added", "additive"))
            elif o[uri] != n[uri]:
                changes.append(Change(where, "metadata changed", "additive"))
    return changes


def _capabilities_changes(old: dict[str, Any], new: dict[str, Any], prefix: str) -> list[Change]:
    changes: list[Change] = []
    oc, nc = old.get("capabilities") or {}, new.get("capabilities") or {}
    for cap in sorted(set(oc) | set(nc)):
        if cap not in nc:
            changes.append(Change(f"{prefix}capability `{cap}`", "capability removed", "breaking"))
        elif cap not in oc:
            changes.append(Change(f"{prefix}capability `{cap}`", "capability added", "additive"))
        elif oc[cap] != nc[cap]:
            lost = (
                isinstance(oc[cap], dict)
                and isinstance(nc[cap], dict)
                and any(
                    v is True and nc[cap].get(k) is not True
                    for k, v in oc[cap].items()  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
                )
            )
            changes.append(
                Change(
                    f"{prefix}capability `{cap}`",
                    "sub-capability dropped" if lost else "changed",
                    "breaking" if lost else "additive",
                )
            )
    return changes


def _prompt_args(old: dict[str, Any], new: dict[str, Any], where: str) -> list[Change]:
    out: list[Change] = []
    oa, na = _by(old.get("arguments") or [], "name"), _by(new.get("arguments") or [], "name")
    for name in sorted(set(oa) | set(na)):
        w = f"{where} argument `{name}`"
        if name not in na:
            out.append(Change(w, "argument removed", "breaking"))
        elif name not in oa:
            required = bool(na[name].get("required"))
            out.append(
                Change(
                    w,
                    "required argument added" if required else "optional argument added",
                    "breaking" if required else "additive",
                )
            )
        elif bool(oa[name].get("required")) != bool(na[name].get("required")):
            now = bool(na[name].get("required"))
            out.append(Change(w, "now required" if now else "no longer required", "breaking" if now else "additive"))
    return out
