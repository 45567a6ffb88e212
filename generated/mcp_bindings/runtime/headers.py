"""HTTP headers of the stateless (2026-07-28) wire that mirror parts of a request body.

`Mcp-Method` is the method, `Mcp-Name` the tool or prompt name or the resource URI, and each tool
parameter whose input schema carries `x-mcp-header: <Name>` is sent as `Mcp-Param-<Name>`: strings
verbatim when they are printable ASCII without surrounding whitespace, otherwise
`=?base64?<base64 of UTF-8>?=`; integers in decimal; booleans as true/false; null or absent -> no
header. Tools whose header annotations are invalid are not called (see `invalid_header_tools`).
"""

from __future__ import annotations

import base64
import re
from typing import Any

NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # an HTTP header field-name token


def encode_value(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    if all(0x20 <= ord(ch) <= 0x7E for ch in text) and text == text.strip():
        return text
    return "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


def header_params(schema: Any) -> dict[str, str] | None:
    """Parameter -> header name of a tool's input schema; None if an annotation is invalid."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    out: dict[str, str] = {}
    seen: set[str] = set()
    for param, prop in (properties or {}).items():
        if not isinstance(prop, dict) or "x-mcp-header" not in prop:
            continue
        name = prop["x-mcp-header"]
        if not isinstance(name, str) or not name or not _TOKEN.match(name) or name.lower() in seen:
            return None
        if prop.get("type") not in ("string", "integer", "boolean", "number"):
            return None
        seen.add(name.lower())
        out[param] = name
    return out


def request_headers(message: dict[str, Any], tool_schemas: dict[str, Any]) -> dict[str, str]:
    method = message.get("method")
    if not isinstance(method, str) or "id" not in message and not method.startswith("notifications/"):
        return {}
    headers = {"Mcp-Method": method}
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    key = NAME_PARAM.get(method)
    if key is not None and isinstance(params.get(key), str):
        headers["Mcp-Name"] = params[key]
    if method == "tools/call":
        mapping = header_params(tool_schemas.get(params.get("name"), {})) or {}
        arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        for param, name in mapping.items():
            value = encode_value(arguments.get(param))
            if value is not None:
                headers[f"Mcp-Param-{name}"] = value
    return headers


def invalid_header_tools(tools: list[dict[str, Any]]) -> set[str]:
    """Names of tools whose x-mcp-header annotations are invalid (clients must not call them)."""
    return {t["name"] for t in tools if isinstance(t, dict) and header_params(t.get("inputSchema")) is None}
