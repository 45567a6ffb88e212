"""What a value cannot carry when it crosses into an older or newer version, and what happens then.

`versions` moves a value between versions by validating its wire JSON with the other version's
models. The generated crossing table of the pair (`registry.crossing`: computed by the generator from
both schemas and its policy/crossing.json) says the rest: the fields the destination lacks (left
out), the content blocks it lacks and what each becomes (audio -> an embedded blob, a resource link
-> text), the request params it cannot carry (an error unless the policy drops them) or requires
and the source lacks (made: a URL elicitation's id), and the error codes the two number differently.
Whatever is still refused is a `NotExpressible` naming both versions and the field.
"""

from __future__ import annotations

import copy
import secrets
from collections.abc import Mapping
from typing import Any, cast

from pydantic import ValidationError

from mcp_bindings.runtime.protocol import registry, reshape, versions
from mcp_bindings.runtime.protocol.spec import Crossing, ProtocolTables
from mcp_bindings.runtime.rpc.errors import McpError, NotExpressible

MAX_FIXES = 64  # degradations per value: bounded, so a value that cannot be fixed fails fast


# -- values --------------------------------------------------------------------------------------


def cross(data: Any, target: Any, *, what: str, method: str, source: str, destination: str) -> Any:
    """Wire JSON of version `source` -> a validated value of `destination`'s `target` type, with
    content moved where the two versions shape or name it differently (`reshape`), and the pair's
    degradations and generated params applied where the destination refuses it."""
    table = registry.crossing(source, destination)
    data = reshape.reshaped(data, target, (*table.reshapes, *table.renames))
    for _ in range(MAX_FIXES):
        try:
            return versions.validate(target, data)
        except ValidationError as exc:
            fixed = _fixed(data, exc, table.degrade, table.params.get(method, {}))
            if fixed is None:
                first = exc.errors(include_url=False)[0]
                where = ".".join(str(p) for p in first["loc"]) or "(root)"
                raise NotExpressible(
                    f"cannot express {what} of MCP {source} in MCP {destination}: {where}: {first['msg']}",
                    version=destination,
                ) from None
            data = fixed
    raise NotExpressible(f"cannot express {what} of MCP {source} in MCP {destination}", version=destination)


def crossed(data: Any, target: Any, *, what: str, method: str, source: str, destination: str) -> Any:
    """`cross`, as the destination's wire JSON: without the fields only the source defines."""
    value = cross(data, target, what=what, method=method, source=source, destination=destination)
    return versions.project(value, registry.crossing(source, destination).dropped)


def cross_params(
    data: dict[str, Any],
    target: Any,
    *,
    method: str,
    source: str,
    destination: str,
    keep: frozenset[str] = frozenset(),
    where: str = "",
) -> Any:
    """Request params (wire JSON of `source`) -> the destination's, refusing a param the destination
    does not have unless the pair's table drops it; `keep` pass as they are (params a side gates on
    its own). `where` names the side in the refusal (default: a client of the destination's version)."""
    value = cross(data, target, what=f"{method} params", method=method, source=source, destination=destination)
    table = registry.crossing(source, destination)
    outcomes = table.params.get(method, {})
    kept = versions.project(value, table.dropped)
    for key in data.keys() & outcomes.keys() - keep:
        rule = outcomes[key]
        if rule.outcome == "generate":  # the destination's own param, made where it was missing
            continue
        kept.pop(key, None)
        if rule.outcome == "drop" and rule.equals in (None, data[key]):
            continue
        why = f" ({rule.reason})" if rule.reason else ""
        raise NotExpressible(
            f"cannot send {method} {where or f'to a client of MCP {destination}'}: params.{key} does not exist "
            f"there{why}",
            version=destination,
        )
    kept.update((key, data[key]) for key in keep & data.keys())
    return kept


def _fixed(data: Any, exc: ValidationError, degrade: Mapping[str, str], params: Mapping[str, Any]) -> Any:
    """`data` with the first refused node the pair's table can fix, fixed (a copy); None if none can be."""
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
            becomes = degrade.get(str(node.get("type"))) if isinstance(node, dict) else None
            if becomes is not None:
                return _replaced(data, path, _degraded(cast("dict[str, Any]", node), becomes))
        last = loc[-1] if loc else None
        rule = params.get(last) if isinstance(last, str) else None
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


def _degraded(block: dict[str, Any], becomes: str) -> dict[str, Any]:
    kept = {key: block[key] for key in ("annotations", "_meta") if key in block}
    if becomes == "embedded_blob":
        mime = str(block.get("mimeType") or "application/octet-stream")
        blob = str(block.get("data") or "")
        resource = {"uri": f"data:{mime};base64,{blob}", "mimeType": mime, "blob": blob}
        return {"type": "resource", "resource": resource, **kept}
    if becomes == "text":
        label = block.get("title") or block.get("name") or block.get("uri")
        text = f"{label}: {block.get('uri')}"
        if block.get("description"):
            text += f" ({block['description']})"
        return {"type": "text", "text": text, **kept}
    raise ValueError(f"unknown degradation {becomes!r} of {block.get('type')} content")


# -- error codes ---------------------------------------------------------------------------------


def translate_error(error: McpError, method: str, source: ProtocolTables, destination: ProtocolTables) -> McpError:
    """An error raised in `source`'s terms, with its code as `destination` numbers the same error."""
    if source is destination:
        return error
    table: Crossing = registry.crossing(source.info.key, destination.info.key)
    data = error.data if isinstance(error.data, dict) else {}
    code = next((b for m, key, c, b in table.overloaded if c == error.code and m == method and key in data), None)
    code = table.codes.get(error.code, error.code) if code is None else code
    return error if code == error.code else McpError(code, error.message, error.data)
