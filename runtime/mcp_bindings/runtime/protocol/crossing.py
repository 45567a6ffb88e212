"""What a value cannot carry when it crosses into an older or newer version, and what happens then.

`versions` moves a value between versions by validating its wire JSON with the other version's
models. The generated crossing table of the pair (`registry.crossing`: computed by the generator from
both schemas and its policy/crossing.json) says the rest: the fields the destination lacks (left
out), the content blocks it lacks and what each becomes (audio -> an embedded blob, a resource link
-> text: moves `reshape` applies at the places the generator found), the request params it cannot
carry (an error unless the policy drops them) or requires and the source lacks (made: a URL
elicitation's id), and the error codes the two number differently. Whatever is still refused is a
`NotExpressible` naming both versions and the field.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from mcp_bindings.runtime.protocol import registry, reshape, versions
from mcp_bindings.runtime.protocol.spec import Crossing, ProtocolTables
from mcp_bindings.runtime.rpc.errors import McpError, NotExpressible

# -- values --------------------------------------------------------------------------------------


def cross(data: Any, target: Any, *, what: str, source: str, destination: str) -> Any:
    """Wire JSON of version `source` -> a validated value of `destination`'s `target` type, with
    content moved where the two versions shape or name it differently and content blocks the
    destination lacks degraded (`reshape`, at the places of the pair's generated table)."""
    table = registry.crossing(source, destination)
    data = reshape.reshaped(data, target, (*table.degrade, *table.reshapes, *table.renames))
    try:
        return versions.validate(target, data)
    except ValidationError as exc:
        where = versions.first_error(exc)
        raise NotExpressible(
            f"cannot express {what} of MCP {source} in MCP {destination}: {where}", version=destination
        ) from None


def crossed(data: Any, target: Any, *, what: str, source: str, destination: str) -> Any:
    """`cross`, as the destination's wire JSON: without the fields only the source defines."""
    value = versions.dump(cross(data, target, what=what, source=source, destination=destination))
    return reshape.dropped(value, target, registry.crossing(source, destination).dropped)


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
    table = registry.crossing(source, destination)
    outcomes = table.params.get(method, {})
    made = [
        key
        for key, rule in outcomes.items()
        if rule.outcome == "generate" and key not in data and _member(data, rule.equals)
    ]
    import secrets  # only when a param is generated: not on the start-up path (docs/performance.md)

    data = {**data, **{key: secrets.token_urlsafe(16) for key in made}}  # the destination's own params
    kept = crossed(data, target, what=f"{method} params", source=source, destination=destination)
    for key in data.keys() & outcomes.keys() - keep:
        rule = outcomes[key]
        if rule.outcome == "generate":
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


def _member(data: dict[str, Any], fields: Any) -> bool:
    """Whether params are those of the union member a made param belongs to (its constant `fields`)."""
    return all(data.get(key) == value for key, value in (fields or {}).items())


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
