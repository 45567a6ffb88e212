"""HTTP headers of the stateless (2026-07-28) wire that mirror parts of a request body.

`Mcp-Method` is the method, `Mcp-Name` the tool or prompt name or the resource URI, and each tool
parameter whose input schema carries `x-mcp-header: <Name>` is sent as `Mcp-Param-<Name>`: strings
verbatim when they are printable ASCII without surrounding whitespace, otherwise
`=?base64?<base64 of UTF-8>?=`; integers in decimal; booleans as true/false; null or absent -> no
header. (`Mcp-Name` values that cannot travel verbatim use the same Base64 form.)

An annotation is valid only on a property reachable through the root's `properties` alone, whose
`type` is `string`, `integer` or `boolean`, with a non-empty HTTP token as its name, unique
case-insensitively within the tool. A tool with any invalid annotation must not be used: the
client runtime drops it from `tools/list` results and refuses to call it (`client.headers`).

The server's parsing of standard headers lives here too: media types (`Content-Type`), `Accept`
ranges, and the authority of `Host` / `Origin` (parsed, never matched by substring).
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Callable, Mapping
from functools import lru_cache, wraps
from typing import Any, TypeVar
from urllib.parse import urlsplit

from mcp_bindings.v2026_07_28 import names as v2026

ANNOTATION = "x-mcp-header"
HEADER_TYPES = ("string", "integer", "boolean")
BASE64_OPEN, BASE64_CLOSE = "=?base64?", "?="
_BASE64_BODY = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # an HTTP header field-name token
# Keywords whose values are subschemas (one, a list, or a name -> schema map). An annotation found
# through any of them is not statically reachable through `properties`, which makes it invalid.
_SUBSCHEMA = (
    "additionalProperties",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contentSchema",
)
_SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def _header_safe(text: str) -> bool:
    return all(0x20 <= ord(ch) <= 0x7E for ch in text) and text == text.strip()


def _base64(text: str) -> str:
    return BASE64_OPEN + base64.b64encode(text.encode("utf-8")).decode("ascii") + BASE64_CLOSE


def encode_value(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    text = str(value)
    return text if _header_safe(text) else _base64(text)


def _annotated_anywhere(schema: Any) -> bool:
    """Whether `schema` or any subschema of it carries an x-mcp-header annotation."""
    if not isinstance(schema, dict):
        return False
    below: list[Any] = [schema.get(key) for key in _SUBSCHEMA]
    below += [item for key in _SUBSCHEMA_LISTS if isinstance(items := schema.get(key), list) for item in items]
    below += [item for key in _SUBSCHEMA_MAPS if isinstance(items := schema.get(key), dict) for item in items.values()]
    return ANNOTATION in schema or any(_annotated_anywhere(item) for item in below)


def header_params(schema: Any) -> dict[str, str] | None:
    """Parameter -> header name of a tool's input schema; None if an annotation is invalid."""
    if not isinstance(schema, dict):
        return {}
    if ANNOTATION in schema:
        return None  # on the root object itself
    properties = schema.get("properties")
    rest = {key: value for key, value in schema.items() if key != "properties"}
    if _annotated_anywhere(rest):
        return None  # under $defs, a composition, a conditional, ...: not statically reachable
    out: dict[str, str] = {}
    seen: set[str] = set()
    for param, prop in (properties if isinstance(properties, dict) else {}).items():
        if not isinstance(prop, dict):
            continue
        nested = {key: value for key, value in prop.items() if key != ANNOTATION}
        if _annotated_anywhere(nested):
            return None  # inside a nested object or array
        if ANNOTATION not in prop:
            continue
        name = prop[ANNOTATION]
        if not isinstance(name, str) or not _TOKEN.match(name) or name.lower() in seen:
            return None
        if prop.get("type") not in HEADER_TYPES:
            return None
        seen.add(name.lower())
        out[param] = name
    return out


def mirrored_headers(
    message: dict[str, Any], header_map: Callable[[str], dict[str, str] | None], routing: Mapping[str, str]
) -> dict[str, str]:
    """The headers of `message`; `header_map(tool)`: the tool's x-mcp-header map (`header_params`);
    `routing`: method -> the params field `Mcp-Name` mirrors (the version's `PROTOCOL.routing`)."""
    method = message.get("method")
    if not isinstance(method, str) or ("id" not in message and not method.startswith("notifications/")):
        return {}
    headers = {"Mcp-Method": method}
    raw_params = message.get("params")
    params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
    key = routing.get(method)
    value = params.get(key) if key is not None else None
    if isinstance(value, str):
        headers["Mcp-Name"] = value if _header_safe(value) else _base64(value)
    if method == v2026.TOOLS_CALL:
        tool = params.get("name")
        mapping = (header_map(tool) if isinstance(tool, str) else None) or {}
        raw_arguments = params.get("arguments")
        arguments: dict[str, Any] = raw_arguments if isinstance(raw_arguments, dict) else {}
        for param, name in mapping.items():
            encoded = encode_value(arguments.get(param))
            if encoded is not None:
                headers[f"Mcp-Param-{name}"] = encoded
    return headers


def decode_header_value(raw: str) -> str | None:
    """An `Mcp-Name` / `Mcp-Param-*` value: `=?base64?<base64 of UTF-8>?=` decoded (None when the
    Base64 is malformed), anything else literally (SEP-2243)."""
    value = raw.strip()
    if len(value) < len(BASE64_OPEN) + len(BASE64_CLOSE) or not (
        value.startswith(BASE64_OPEN) and value.endswith(BASE64_CLOSE)
    ):
        return value
    body = value[len(BASE64_OPEN) : -len(BASE64_CLOSE)]
    if len(body) % 4 or not _BASE64_BODY.match(body):
        return None
    try:
        return base64.b64decode(body, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def header_matches(decoded: str, value: Any) -> bool:
    if isinstance(value, bool):
        return decoded == ("true" if value else "false")
    if isinstance(value, int):  # exactly, at any size (a float would equate 2**64 and 2**64 + 1)
        text = decoded.strip()
        digits = text[1:] if text[:1] in "+-" else text
        if digits.isascii() and digits.isdigit() and len(digits) <= 4000:
            return int(text) == value
        if abs(value) > 2**53:
            return False
    if isinstance(value, (int, float)):
        try:
            return float(decoded) == float(value)
        except ValueError:
            return False
    if isinstance(value, str):
        return decoded == value
    return True  # objects and arrays are never mirrored (such annotations are invalid)


# -- HTTP header parsing of the server (media types, Accept, Host / Origin authorities) -----------

_MEDIA_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+/[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
# An HTTP authority as Host carries it (RFC 9110 §7.2: uri-host [":" port], no userinfo): a
# bracketed IPv6 literal, or a DNS name / IPv4 address, then an optional decimal port.
_AUTHORITY = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(?::([0-9]{1,5}))?$")
_CACHED_CHARS = 512  # header values up to this long are memoised
T = TypeVar("T")


def _cached(function: Callable[..., T]) -> Callable[..., T]:
    """`function` memoised when its first argument (a header value; the rest are short) is short:
    a client sends the same value on every request. A long one, which would make the cache hold
    much, is computed every time."""
    memo = lru_cache(maxsize=256)(function)

    @wraps(function)
    def call(value: str | None, *rest: Any) -> T:
        if value is not None and len(value) > _CACHED_CHARS:
            return function(value, *rest)
        return memo(value, *rest)

    return call


@_cached
def media_type(content_type: str) -> str:
    """The media type of a Content-Type value, lower-case, without parameters ("" if malformed):
    `application/json; charset=utf-8` -> `application/json`."""
    value = content_type.split(";", 1)[0].strip().lower()
    return value if _MEDIA_TOKEN.match(value) else ""


def _accept_ranges(accept: str) -> tuple[tuple[str, float], ...]:
    ranges: list[tuple[str, float]] = []
    for item in accept.split(","):
        kind, *params = item.split(";")
        kind = kind.strip().lower()
        if not kind:
            continue
        quality = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value.strip())
                except ValueError:
                    quality = 0.0
                if not 0.0 <= quality <= 1.0:  # also NaN
                    quality = 0.0
        ranges.append((kind, quality))
    return tuple(ranges)


@_cached
def accepts(accept: str | None, media: str) -> bool:
    """Whether an Accept header admits `media` (RFC 9110 §12.5.1: the most specific matching range
    decides, q=0 refuses). No Accept header (or an empty one) admits everything."""
    if accept is None or not accept.strip():
        return True
    family = media.split("/", 1)[0] + "/*"
    best: tuple[int, float] | None = None  # (specificity, q)
    for kind, quality in _accept_ranges(accept):
        specificity = 3 if kind == media else 2 if kind == family else 1 if kind == "*/*" else 0
        if specificity and (best is None or specificity > best[0]):
            best = (specificity, quality)
    return best is not None and best[1] > 0


@_cached
def authority_host(authority: str) -> str | None:
    """The host of an HTTP authority (`host[:port]`, as in Host or an Origin), lower-case, IPv6 in
    brackets; None when it is not one: userinfo (`a@b`), a path, a bad port, stray characters."""
    match = _AUTHORITY.match(authority)
    if match is None:
        return None
    host, port = match.group(1).lower(), match.group(2)
    if port is not None and int(port) > 65535:
        return None
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return None
    return host


@_cached
def origin_host(origin: str) -> str | None:
    """The host of an Origin header (`scheme://host[:port]`, http or https only), as `authority_host`
    gives it; None for anything else (`null`, userinfo, a path, a query)."""
    parts = urlsplit(origin)
    if parts.scheme.lower() not in ("http", "https") or parts.path or parts.query or parts.fragment:
        return None
    if origin.lower() != f"{parts.scheme}://{parts.netloc}".lower():
        return None  # urlsplit drops tabs and newlines: the header must be exactly scheme://authority
    return authority_host(parts.netloc)
