"""Tool schemas without `$ref` / `$defs`: what a pydantic model argument yields (`{"$ref":
"#/$defs/Point", "$defs": {...}}`) written out in place, for hosts that refuse references
(`mcp-bindgen lint` warns of them). `App(inline_refs=True)` or `@app.tool(inline_refs=True)`."""

from __future__ import annotations

from typing import Any, cast

from mcp_bindings.runtime.app.errors import AppDefinitionError

__all__ = ["inline_refs"]

_PREFIXES = ("#/$defs/", "#/definitions/")


def inline_refs(schema: dict[str, Any], what: str) -> dict[str, Any]:
    """`schema` with every local `$ref` replaced by the definition it names (siblings of the `$ref`
    kept) and `$defs` / `definitions` dropped. A recursive definition cannot be written out:
    `AppDefinitionError`, naming it."""
    defs: dict[str, Any] = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    if not defs:
        return schema

    def resolve(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [resolve(item, seen) for item in cast("list[Any]", node)]
        if not isinstance(node, dict):
            return node
        items = cast("dict[str, Any]", node)
        out: dict[str, Any] = {}
        ref = items.get("$ref")
        local = isinstance(ref, str) and ref.startswith(_PREFIXES)
        if isinstance(ref, str) and local:
            name = ref.split("/", 2)[2]
            if name in seen:
                raise AppDefinitionError(
                    f"{what}: {name!r} refers to itself; a recursive schema cannot be inlined (inline_refs=False)"
                )
            if name not in defs:
                raise AppDefinitionError(f"{what}: $ref {ref!r} names no definition")
            out.update(resolve(defs[name], (*seen, name)))
        for key, value in items.items():
            if key in ("$defs", "definitions") or (key == "$ref" and local):
                continue
            out[key] = resolve(value, seen)
        return out

    return cast("dict[str, Any]", resolve(schema, ()))
