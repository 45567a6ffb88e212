"""`name=value` words of the command line as a tool's arguments, typed by its input schema
(`days=3` an integer where the schema says integer, `tags='["a"]'` a list), or a prompt's (strings).

    typed_arguments(tool, ["city=Paris", "days=3"], None) == {"city": "Paris", "days": 3}
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .connection import ExitCode, LiveError

_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


def _types(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [str(k) for k in kind]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    found: list[str] = []
    for option in schema.get("anyOf") or schema.get("oneOf") or []:
        kinds = _types(option) if isinstance(option, dict) else []  # pyright: ignore[reportUnknownArgumentType]
        if not kinds:  # an option of no stated type (a $ref: `Point | None`): any JSON value, as below
            return []
        found.extend(kinds)
    if not found and "enum" in schema:
        found = sorted({type(v).__name__.replace("str", "string").replace("int", "integer") for v in schema["enum"]})
    return found


def _convert(kind: str, raw: str) -> Any:
    """`raw` as a value of JSON type `kind`; ValueError when it is not one."""
    if kind == "integer":
        return int(raw)
    if kind == "number":
        number = float(raw)
        return int(number) if number.is_integer() and "." not in raw and "e" not in raw.lower() else number
    if kind == "boolean":
        if raw.lower() in _TRUE | _FALSE:
            return raw.lower() in _TRUE
        raise ValueError(raw)
    if kind == "null":
        if raw == "null":
            return None
        raise ValueError(raw)
    if kind in ("array", "object"):
        value = json.loads(raw)
        if isinstance(value, list if kind == "array" else dict):
            return value
        raise ValueError(raw)
    if kind == "string":
        return raw
    raise ValueError(raw)


def typed_value(schema: dict[str, Any], raw: str, name: str) -> Any:
    kinds = _types(schema)
    if not kinds:  # no type stated: JSON when it parses, else the text
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    order = ["null", "integer", "number", "boolean", "array", "object", "string"]
    for kind in sorted(kinds, key=lambda k: order.index(k) if k in order else len(order)):
        try:
            return _convert(kind, raw)
        except ValueError:
            continue
    raise LiveError(f"argument {name}={raw!r} is not {' or '.join(kinds)}: pass a value of that type", ExitCode.USAGE)


def _pairs(words: Sequence[str]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for word in words:
        name, sep, raw = word.partition("=")
        if not sep or not name:
            raise LiveError(f"argument {word!r} must read name=value", ExitCode.USAGE)
        pairs.append((name, raw))
    return pairs


def _json_object(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise LiveError(f"--json is not JSON ({exc}): pass an object such as '{{\"a\": 1}}'", ExitCode.USAGE) from exc
    if not isinstance(value, dict):
        raise LiveError("--json must be a JSON object such as '{\"a\": 1}'", ExitCode.USAGE)
    return value  # pyright: ignore[reportUnknownVariableType]


def typed_arguments(tool: dict[str, Any], words: Sequence[str], json_text: str | None) -> dict[str, Any]:
    """A tool's arguments from `--json` and `name=value` words (the words win), checked against its
    input schema's property names and required list."""
    schema: dict[str, Any] = tool.get("inputSchema") or {}
    props: dict[str, Any] = schema.get("properties") or {}
    arguments = _json_object(json_text)
    closed = schema.get("additionalProperties") is False or (props and "additionalProperties" not in schema)
    for name, raw in _pairs(words):
        if name not in props and closed:
            takes = ", ".join(props) or "no arguments"
            raise LiveError(f"tool {tool['name']!r} has no argument {name!r}: it takes {takes}", ExitCode.USAGE)
        arguments[name] = typed_value(props.get(name) or {}, raw, name)
    missing = [name for name in schema.get("required") or [] if name not in arguments]
    if missing:
        needed = " ".join(f"{name}=VALUE" for name in missing)
        raise LiveError(f"tool {tool['name']!r} needs {', '.join(missing)}: pass {needed}", ExitCode.USAGE)
    return arguments


def prompt_arguments(prompt: dict[str, Any], words: Sequence[str]) -> dict[str, str]:
    declared = {a["name"]: a for a in prompt.get("arguments") or []}
    arguments: dict[str, str] = {}
    for name, raw in _pairs(words):
        if name not in declared:
            takes = ", ".join(declared) or "no arguments"
            raise LiveError(f"prompt {prompt['name']!r} has no argument {name!r}: it takes {takes}", ExitCode.USAGE)
        arguments[name] = raw
    missing = [name for name, a in declared.items() if a.get("required") and name not in arguments]
    if missing:
        needed = " ".join(f"{name}=VALUE" for name in missing)
        raise LiveError(f"prompt {prompt['name']!r} needs {', '.join(missing)}: pass {needed}", ExitCode.USAGE)
    return arguments
