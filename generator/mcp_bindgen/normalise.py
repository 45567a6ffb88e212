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
from .paths import policy_dir

DRAFT_07 = "draft-07"
DRAFT_2020_12 = "2020-12"


@dataclass(frozen=True)
class Patch:
    versions: tuple[str, ...]
    pointer: str
    expect: Any
    value: Any
    reason: str


def load_patches(path: Path | None = None) -> list[Patch]:
    raw = json.loads((path or policy_dir() / "schema_patches.json").read_text(encoding="utf-8"))
    patches = []
    for entry in raw["patches"]:
        if not entry.get("reason"):
            raise BindgenError(f"schema patch at {entry.get('pointer')} has no reason")
        patches.append(
            Patch(tuple(entry["versions"]), entry["pointer"], entry["expect"], entry["value"], entry["reason"])
        )
    return patches


def _split_pointer(pointer: str) -> list[str]:
    if not pointer.startswith("/"):
        raise BindgenError(f"JSON pointer must start with '/': {pointer!r}")
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer[1:].split("/")]


def _walk(doc: Any, parts: list[str], pointer: str) -> tuple[Any, str | int]:
    node = doc
    for part in parts[:-1]:
        node = _step(node, part, pointer)
    last: str | int = parts[-1]
    if isinstance(node, list):
        last = int(last)
    return node, last


def _step(node: Any, part: str, pointer: str) -> Any:
    try:
        return node[int(part)] if isinstance(node, list) else node[part]
    except (KeyError, IndexError, ValueError, TypeError):
        raise BindgenError(f"stale schema patch: {pointer} does not exist in the schema") from None


def apply_patches(doc: dict[str, Any], version: str, patches: list[Patch]) -> list[Patch]:
    """Apply every patch listed for `version`; fail loudly when the expected old value is gone."""
    applied = []
    for patch in patches:
        if version not in patch.versions:
            continue
        parts = _split_pointer(patch.pointer)
        parent, key = _walk(doc, parts, patch.pointer)
        found = _step(parent, str(key), patch.pointer)
        if found != patch.expect:
            raise BindgenError(
                f"stale schema patch for {version} at {patch.pointer}: expected {json.dumps(patch.expect)}, "
                f"found {json.dumps(found)} (fixed upstream? remove or update the entry in schema_patches.json)"
            )
        parent[key] = copy.deepcopy(patch.value)
        applied.append(patch)
    return applied


def detect_dialect(doc: dict[str, Any]) -> str:
    if "$defs" in doc:
        return DRAFT_2020_12
    if "definitions" in doc:
        return DRAFT_07
    raise BindgenError("schema has neither `definitions` nor `$defs`: not an MCP schema.json?")


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


@dataclass
class NormalisedSchema:
    version: str
    sha256: str
    dialect: str
    document: dict[str, Any]  # {"$defs": {...}} with `#/$defs/` references only

    @property
    def defs(self) -> dict[str, Any]:
        return self.document["$defs"]


def normalise(raw: bytes, version: str, sha256: str, patches: list[Patch] | None = None) -> NormalisedSchema:
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BindgenError(f"schema for {version} is not valid JSON: {exc}") from exc
    dialect = detect_dialect(doc)
    apply_patches(doc, version, load_patches() if patches is None else patches)
    if dialect == DRAFT_07:
        defs = _rewrite_refs(doc["definitions"], "#/definitions/")
    else:
        defs = _rewrite_refs(doc["$defs"], "#/$defs/")
    return NormalisedSchema(version, sha256, dialect, {"$defs": defs})
