"""Semantic comparison of JSON-RPC messages: what differs between two values (by path), and the
matching rules a replay uses to pair an incoming request with a recorded one.

By default a request is identified by its method and params, with `_meta` (progress tokens, the
stateless era's per-request protocol version and client info), `requestState` (the sealed state of
a stateless-era input round, issued anew by each run of a server) and the `initialize` request's
`clientInfo` and `protocolVersion` (negotiated, not matched) left out, and the JSON-RPC id never
looked at. `MatchRules` changes that: more params
paths to ignore (`arguments.timestamp`), or match on the method alone."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

from mcp_bindings.v2025_11_25 import names as v2025

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "(absent)"})()
# `requestState`: the stateless era's sealed round state, which differs each time a server seals it.
DEFAULT_IGNORED = ("_meta", "clientInfo", "requestState")


@dataclass(frozen=True)
class Difference:
    """One place where two JSON values differ: `path` (dotted, `[i]` for list items), both values
    (`MISSING` where a side has nothing)."""

    path: str
    recorded: Any
    actual: Any

    @property
    def kind(self) -> str:
        if self.actual is MISSING:
            return "removed"
        if self.recorded is MISSING:
            return "added"
        return "changed"

    def describe(self) -> str:
        return f"{self.path or '(the value)'}: recorded {_short(self.recorded)}, got {_short(self.actual)}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "kind": self.kind}
        if self.recorded is not MISSING:
            out["recorded"] = self.recorded
        if self.actual is not MISSING:
            out["actual"] = self.actual
        return out


def _short(value: Any, limit: int = 80) -> str:
    """A value for messages: its JSON, cut at `limit` characters (`MISSING`: "(absent)")."""
    if value is MISSING:
        return repr(value)
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def differences(recorded: Any, actual: Any, path: str = "") -> list[Difference]:
    """Every leaf where `actual` differs from `recorded` (objects by key, lists by position)."""
    if isinstance(recorded, dict) and isinstance(actual, dict):
        a = cast("dict[str, Any]", recorded)
        b = cast("dict[str, Any]", actual)
        out: list[Difference] = []
        for key in list(a) + [k for k in b if k not in a]:
            out.extend(differences(a.get(key, MISSING), b.get(key, MISSING), _join(path, key)))
        return out
    if isinstance(recorded, list) and isinstance(actual, list):
        a_list = cast("list[Any]", recorded)
        b_list = cast("list[Any]", actual)
        out = []
        for index in range(max(len(a_list), len(b_list))):
            left = a_list[index] if index < len(a_list) else MISSING
            right = b_list[index] if index < len(b_list) else MISSING
            out.extend(differences(left, right, _join(path, index)))
        return out
    if recorded is MISSING and actual is MISSING:
        return []
    if type(recorded) is type(actual) and recorded == actual:
        return []
    if isinstance(recorded, int | float) and isinstance(actual, int | float) and not isinstance(recorded, bool):
        if recorded == actual and not isinstance(actual, bool):
            return []
    return [Difference(path, recorded, actual)]


def drop_path(value: Any, dotted: str) -> Any:
    """`value` without what the dotted path (`arguments.timestamp`) names in it, if anything."""
    if not isinstance(value, dict):
        return value
    obj = dict(cast("dict[str, Any]", value))
    head, _, rest = dotted.partition(".")
    if head not in obj:
        return obj
    if rest:
        obj[head] = drop_path(obj[head], rest)
    else:
        del obj[head]
    return obj


@dataclass(frozen=True)
class MatchRules:
    """How an incoming request is paired with a recorded one: by method, and by params unless
    `method_only`, with the dotted params paths in `ignore` left out."""

    ignore: tuple[str, ...] = DEFAULT_IGNORED
    method_only: bool = False

    def key(self, message: dict[str, Any]) -> Any:
        """What is compared of a request or notification (never its id)."""
        params = message.get("params")
        if self.method_only:
            return {"method": message.get("method")}
        if isinstance(params, dict):
            for dotted in self.ignore:
                params = drop_path(params, dotted)
            if message.get("method") == v2025.INITIALIZE:
                # The version a client offers is negotiated, not matched: the recorded answer states
                # the recording's version, which the client accepts or refuses as with any server.
                params = drop_path(params, "protocolVersion")
        return {"method": message.get("method"), "params": params if params is not None else {}}

    def differences(self, recorded: dict[str, Any], incoming: dict[str, Any]) -> list[Difference]:
        return differences(self.key(recorded), self.key(incoming))


DEFAULT_RULES = MatchRules()


def what_is(message: dict[str, Any] | None) -> str:
    """A short name of a message for reports: `tools/call echo`, `resources/read file:///x`, `result`."""
    if message is None:
        return "a frame that is not JSON"
    method = message.get("method")
    if not isinstance(method, str):
        return "error" if "error" in message else "result"
    params = message.get("params")
    if isinstance(params, dict):
        params = cast("dict[str, Any]", params)
        for key in ("name", "uri", "ref"):
            value = params.get(key)
            if isinstance(value, str):
                return f"{method} {value}"
    return method


def first_message(frame: bytes) -> dict[str, Any]:
    """A frame as a JSON object, or {} when it is not one (the replay answers that itself)."""
    try:
        message = json.loads(frame)
    except ValueError:
        return {}
    return cast("dict[str, Any]", message) if isinstance(message, dict) else {}
