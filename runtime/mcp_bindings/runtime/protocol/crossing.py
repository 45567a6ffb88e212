"""What a value cannot carry when it crosses into an older or newer version, and what happens then.

`versions` moves a value between versions by validating its wire JSON with the other version's
models. This module adds the cases `policy/crossing.json` decides: a content block the destination
lacks is degraded (audio -> an embedded blob, a resource link -> text), a param the destination
requires is made (a URL elicitation's id), a request param the destination cannot carry is an
error unless the policy lets it go, and error codes are renamed by the generated error tables.
Whatever is still refused is a `NotExpressible` naming both versions and the field.
"""

from __future__ import annotations

import copy
import json
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

from pydantic import ValidationError

from mcp_bindings.runtime.protocol import registry, reshape, versions
from mcp_bindings.runtime.protocol.spec import ProtocolTables, Reshape
from mcp_bindings.runtime.rpc.errors import McpError, NotExpressible

POLICY_FILE = Path(__file__).with_name("policy") / "crossing.json"
MAX_FIXES = 64  # degradations per value: bounded, so a value that cannot be fixed fails fast


@dataclass(frozen=True, slots=True)
class ContentRule:
    type: str  # the content block's `type`
    becomes: str  # "embedded_blob" | "text"
    reason: str


@dataclass(frozen=True, slots=True)
class ParamRule:
    method: str
    param: str
    outcome: str  # "error" | "drop" | "generate"
    reason: str
    equals: Any = None  # "drop" only when the param has this value (None: any value)


@dataclass(frozen=True, slots=True)
class CodeRule:
    name: str  # the error code's name in the generated tables of the sending side
    reason: str
    otherwise: str | None = None  # the name to use where the receiving side has no `name`
    method: str | None = None  # with `becomes`: only for errors of this method ...
    data_key: str | None = None  # ... whose `data` has this key
    becomes: str | None = None  # ... and only when the sending side has no `becomes` code


@dataclass(frozen=True, slots=True)
class Policy:
    content: Mapping[str, ContentRule]
    params: Mapping[tuple[str, str], ParamRule]
    codes: tuple[CodeRule, ...]


@cache
def policy() -> Policy:
    raw = json.loads(POLICY_FILE.read_text(encoding="utf-8"))
    return Policy(
        content={entry["type"]: ContentRule(**entry) for entry in raw["content"]},
        params={(entry["method"], entry["param"]): ParamRule(**entry) for entry in raw["request_params"]},
        codes=tuple(CodeRule(**entry) for entry in raw["error_codes"]),
    )


# -- values --------------------------------------------------------------------------------------


def cross(data: Any, target: Any, *, what: str, method: str, source: str, destination: str) -> Any:
    """Wire JSON of version `source` -> a validated value of `destination`'s `target` type, with
    content moved where the two versions shape a definition differently (`reshape`), and the policy's
    degradations and generated params applied where the destination refuses it."""
    rules = reshapes_between(source, destination)
    if rules:
        data = reshape.reshaped(data, target, rules)
    for _ in range(MAX_FIXES):
        try:
            return versions.validate(target, data)
        except ValidationError as exc:
            fixed = _fixed(data, exc, method, destination)
            if fixed is None:
                first = exc.errors(include_url=False)[0]
                where = ".".join(str(p) for p in first["loc"]) or "(root)"
                raise NotExpressible(
                    f"cannot express {what} of MCP {source} in MCP {destination}: {where}: {first['msg']}",
                    version=destination,
                ) from None
            data = fixed
    raise NotExpressible(f"cannot express {what} of MCP {source} in MCP {destination}", version=destination)


@cache
def reshapes_between(*names: str) -> Mapping[str, Reshape]:
    """The generated reshapes of these versions (by name or wire version; an unknown one has none)."""
    out: dict[str, Reshape] = {}
    for name in names:
        try:
            out.update(registry.protocol(name).reshapes)
        except (KeyError, LookupError, ValueError):
            continue
    return MappingProxyType(out)


def shape(data: Any, target: Any, version: str | None = None) -> Any:
    """Wire JSON built in another version's shape, moved into `target`'s where `version` (None: the
    version `target` is of, whichever it is) holds it differently."""
    rules = reshapes_between(version) if version is not None else reshapes_between(*registry.names())
    return reshape.reshaped(data, target, rules) if rules else data


def carries(target: Any, key: str, version: str) -> bool:
    """Whether `version`'s model `target` holds what other versions write as `key`: a field of its
    own, or the list field a reshape spreads `key` into."""
    if versions.defines(target, key):
        return True
    rule = reshapes_between(version).get(getattr(target, "__name__", ""))
    return rule is not None and any(spread.source == key for spread in rule.spread)


def shaped(target: Any, version: str) -> Callable[[Any], Any]:
    """The validator of `target` of `version` (`versions.validator`), for wire JSON built in another
    version's shape (the authoring layer writes `content`): reshaped first where the version needs it."""
    validate = versions.validator(target)
    rules = reshapes_between(version)
    if not rules:
        return validate
    return lambda data: validate(reshape.reshaped(data, target, rules))


def cross_params(
    data: dict[str, Any],
    source_value: Any,
    target: Any,
    *,
    method: str,
    source: str,
    destination: str,
    keep: frozenset[str] = frozenset(),
    where: str = "",
) -> Any:
    """Request params (wire JSON of `source`, validated there as `source_value`; None: the raw JSON)
    -> the destination's params, refusing a param the destination would drop unless the policy
    allows it; `keep` passes as they are (params a side gates on its own). `where` names the side
    in the refusal (default: a client of the destination's version)."""
    value = cross(data, target, what=f"{method} params", method=method, source=source, destination=destination)
    kept = versions.project(value, source_value)
    for key in data.keys() - kept.keys():
        if key in keep:
            kept[key] = data[key]
            continue
        rule = policy().params.get((method, key))
        if rule is not None and rule.outcome == "drop" and (rule.equals is None or data[key] == rule.equals):
            continue
        why = f" ({rule.reason})" if rule is not None else ""
        raise NotExpressible(
            f"cannot send {method} {where or f'to a client of MCP {destination}'}: params.{key} does not exist "
            f"there{why}",
            version=destination,
        )
    return kept


def _fixed(data: Any, exc: ValidationError, method: str, destination: str) -> Any:
    """`data` with the first refused node the policy can fix, fixed (a copy); None if none can be."""
    for error in exc.errors(include_url=False):
        loc = error["loc"]
        path: list[str | int] = []
        node = data
        for step in loc:  # follow the data; steps that name a union member are not in it
            if isinstance(node, dict) and step in node:
                node = cast("dict[str, Any]", node)[cast("str", step)]
            elif isinstance(node, list) and isinstance(step, int) and step < len(cast("list[Any]", node)):
                node = cast("list[Any]", node)[step]
            else:
                continue
            path.append(step)
            rule = policy().content.get(str(node.get("type"))) if isinstance(node, dict) else None
            if rule is not None:
                return _replaced(data, path, _degraded(cast("dict[str, Any]", node), rule, destination))
        last = loc[-1] if loc else None
        rule = policy().params.get((method, last)) if isinstance(last, str) else None
        if error["type"] == "missing" and rule is not None and rule.outcome == "generate" and isinstance(node, dict):
            return _replaced(data, path, {**node, last: secrets.token_urlsafe(16)})
    return None


def _replaced(data: Any, path: list[str | int], new: Any) -> Any:
    if not path:
        return new
    data = copy.deepcopy(data)
    node = data
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = new
    return data


def _degraded(block: dict[str, Any], rule: ContentRule, destination: str) -> dict[str, Any]:
    kept = {key: block[key] for key in ("annotations", "_meta") if key in block}
    if rule.becomes == "embedded_blob":
        mime = str(block.get("mimeType") or "application/octet-stream")
        blob = str(block.get("data") or "")
        resource = {"uri": f"data:{mime};base64,{blob}", "mimeType": mime, "blob": blob}
        return {"type": "resource", "resource": resource, **kept}
    if rule.becomes == "text":
        label = block.get("title") or block.get("name") or block.get("uri")
        text = f"{label}: {block.get('uri')}"
        if block.get("description"):
            text += f" ({block['description']})"
        return {"type": "text", "text": text, **kept}
    raise ValueError(f"policy/crossing.json: unknown outcome {rule.becomes!r} for {rule.type} content")


# -- error codes ---------------------------------------------------------------------------------


def translate_error(error: McpError, method: str, source: ProtocolTables, destination: ProtocolTables) -> McpError:
    """An error raised in `source`'s terms, with its code as `destination` names the same error."""
    if source is destination:
        return error
    names = {code: name for name, code in source.error_codes.codes.items()}
    name = names.get(error.code)
    if name is None:
        return error
    wanted = destination.error_codes.codes
    data = error.data if isinstance(error.data, dict) else {}
    for rule in policy().codes:  # a code the sender overloads, told apart by method and data
        if rule.name == name and rule.becomes is not None and rule.becomes not in source.error_codes.codes:
            if rule.method == method and rule.data_key in data:
                name = rule.becomes
    if name not in wanted:  # a code the receiver lacks, named as the receiver reports the same error
        name = next((r.otherwise for r in policy().codes if r.name == name and r.otherwise is not None), name)
    code = wanted.get(name)
    if code is None or code == error.code:
        return error
    return McpError(code, error.message, error.data)
