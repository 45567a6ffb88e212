"""Load a schema.json, apply the asserted patches, and bring both dialects to one form.

After this step every document has its definitions under `$defs` and every reference reads
`#/$defs/<Name>`, whatever the upstream dialect (draft-07 `definitions` or 2020-12 `$defs`).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import BindgenError
from .policy import Patch, schema_patches

DRAFT_07 = "draft-07"
DRAFT_2020_12 = "2020-12"


def load_patches(path: Path | None = None) -> list[Patch]:
    """The asserted patches (`policy/schema_patches.json`, or the file at `path`), pointers checked."""
    patches = list(schema_patches(path))
    for patch in patches:
        _split_pointer(patch.pointer)
    return patches


def _split_pointer(pointer: str) -> list[str]:
    if not pointer.startswith("/"):
        raise BindgenError(f"JSON pointer must start with '/': {pointer!r}")
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer[1:].split("/")]


_MISSING: Any = object()


def _find(doc: Any, parts: list[str]) -> tuple[Any, str | int, Any]:
    """(parent, key, value) at a pointer; value is _MISSING where the pointer leads nowhere."""
    node = doc
    for part in parts[:-1]:
        node = _step(node, part)
        if node is _MISSING:
            return None, "", _MISSING
    last: str | int = parts[-1]
    if isinstance(node, list):
        if not last.isdigit():
            return None, "", _MISSING
        last = int(last)
    return node, last, _step(node, str(last))


def _step(node: Any, part: str) -> Any:
    try:
        return node[int(part)] if isinstance(node, list) else node[part]
    except (KeyError, IndexError, ValueError, TypeError):
        return _MISSING


def patch_applies(doc: Any, patch: Patch) -> bool:
    """Whether the document holds the defect the patch corrects (its `expect` at its pointer)."""
    return _find(doc, _split_pointer(patch.pointer))[2] == patch.expect


def apply_patches(doc: dict[str, Any], patches: list[Patch]) -> list[Patch]:
    """Apply every patch whose pointer holds its expected old value; return those applied.

    A patch that finds something else there simply does not apply to this schema (another version,
    or the defect is fixed upstream); `review` reports a patch that applies to no known schema."""
    applied = []
    for patch in patches:
        parent, key, found = _find(doc, _split_pointer(patch.pointer))
        if found is _MISSING or found != patch.expect:
            continue
        parent[key] = copy.deepcopy(patch.value)
        applied.append(patch)
    return applied


def detect_dialect(doc: dict[str, Any], what: str = "the schema") -> str:
    if isinstance(doc.get("$defs"), dict):
        return DRAFT_2020_12
    if isinstance(doc.get("definitions"), dict):
        return DRAFT_07
    raise BindgenError(f"{what} is not an MCP schema: it has neither `definitions` nor `$defs`")


def _rewrite_refs(node: Any, old_prefix: str) -> Any:
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                if not value.startswith(old_prefix):
                    raise BindgenError(f"unsupported $ref {value!r}: only local definition references are expected")
                out[key] = "#/$defs/" + value[len(old_prefix) :]
            else:
                out[key] = _rewrite_refs(value, old_prefix)
        return out
    if isinstance(node, list):
        return [_rewrite_refs(item, old_prefix) for item in node]
    return node


def _lift_embedded_defs(defs: dict[str, Any], what: str) -> dict[str, Any]:
    """A definition that carries its own `$defs` (a bundler's embedded schema resource without `$id`,
    as zod's output in the MCP Apps schema: `McpUiHostContext/$defs/__schema0`, referred to as
    `#/$defs/__schema0`) has them lifted to the top, where its references resolve. The same name
    embedded twice must have the same content."""
    out = dict(defs)
    for name, definition in defs.items():
        if not isinstance(definition, dict) or not isinstance(definition.get("$defs"), dict):
            continue
        out[name] = {k: v for k, v in definition.items() if k != "$defs"}
        for inner, body in definition["$defs"].items():
            if inner in defs or (inner in out and out[inner] != body):
                raise BindgenError(
                    f"{what}: {name} embeds a definition {inner!r} that differs from another of that name"
                )
            out[inner] = body
    lifted = {n for n in out if n not in defs}
    renamed = {n: _public_name(n) for n in lifted}
    if clash := sorted(n for n in renamed.values() if n in defs):
        raise BindgenError(f"{what}: an embedded definition's name clashes with {', '.join(clash)}")
    return {renamed.get(n, n): _renamed_refs(body, renamed) for n, body in out.items()}


def _public_name(name: str) -> str:
    """A bundler's private name (`__schema0`) as a definition name (`Schema0`)."""
    text = name.lstrip("_")
    return text[:1].upper() + text[1:]


def _renamed_refs(node: Any, renamed: dict[str, str]) -> Any:
    if not renamed:
        return node
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in renamed:
            return {**node, "$ref": "#/$defs/" + renamed[ref[8:]]}
        return {k: _renamed_refs(v, renamed) for k, v in node.items()}
    if isinstance(node, list):
        return [_renamed_refs(v, renamed) for v in node]
    return node


@dataclass
class NormalisedSchema:
    version: str
    sha256: str
    dialect: str
    document: dict[str, Any]  # {"$defs": {...}} with `#/$defs/` references only
    patches: tuple[Patch, ...] = ()  # the schema patches applied to it

    @property
    def defs(self) -> dict[str, Any]:
        return self.document["$defs"]


def normalise(
    raw: bytes, version: str, sha256: str, patches: list[Patch] | None = None, label: str | None = None
) -> NormalisedSchema:
    """`label` names the document in messages (a path); the version name by default."""
    what = label or f"the schema of {version}"
    try:
        doc = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BindgenError(f"{what} is not valid JSON ({exc})") from exc
    if not isinstance(doc, dict):
        raise BindgenError(f"{what} is not an MCP schema: its JSON is not an object")
    dialect = detect_dialect(doc, what)
    applied = apply_patches(doc, load_patches() if patches is None else patches)
    if dialect == DRAFT_07:
        defs = _rewrite_refs(doc["definitions"], "#/definitions/")
    else:
        defs = _rewrite_refs(_lift_embedded_defs(doc["$defs"], what), "#/$defs/")
    return NormalisedSchema(version, sha256, dialect, {"$defs": defs}, tuple(applied))
