"""Two recorded sessions compared message by message: the client's requests paired by method and
params (ids, timings and `_meta` ignored), their answers compared as JSON.

Lists of named things (`tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`) are
compared by name, not by position. Each difference is classified: `breaking` (an error where there
was a result, a field or a listed item gone, a value of another JSON type), `changed` (another value
of the same type) or `harmless` (a field or item added)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, cast

from mcp_bindings.runtime.recording.compare import DEFAULT_RULES, Difference, MatchRules, differences, what_is
from mcp_bindings.runtime.recording.replay_client import answer_body
from mcp_bindings.runtime.recording.session_file import Entry, Recording
from mcp_bindings.v2026_07_28 import names as v2026

Severity = Literal["breaking", "changed", "harmless"]
# A list result's field -> the field naming each of its items (the generated `LISTS`, `LIST_KEYS`).
NAMED_LISTS = {v2026.LISTS[method]: key for method, key in v2026.LIST_KEYS.items()}


@dataclass(frozen=True)
class SessionChange:
    where: str  # the request in A (file:line), or in B for a request only B made
    request: str
    severity: Severity
    what: str

    def text(self) -> str:
        return f"{self.severity}: {self.where} {self.request}: {self.what}"

    def to_json(self) -> dict[str, str]:
        return {"where": self.where, "request": self.request, "severity": self.severity, "what": self.what}


@dataclass
class SessionDiff:
    a: str
    b: str
    paired: int = 0
    changes: list[SessionChange] = field(default_factory=lambda: [])

    @property
    def breaking(self) -> list[SessionChange]:
        return [c for c in self.changes if c.severity == "breaking"]

    def text(self) -> str:
        if not self.changes:
            return f"{self.a} and {self.b}: the {self.paired} paired requests have the same answers"
        lines = [c.text() for c in self.changes]
        counts = {s: sum(c.severity == s for c in self.changes) for s in ("breaking", "changed", "harmless")}
        lines.append(
            f"{self.paired} requests paired; {counts['breaking']} breaking, {counts['changed']} changed, "
            f"{counts['harmless']} harmless"
        )
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "paired": self.paired, "changes": [c.to_json() for c in self.changes]}


def _by_name(value: Any) -> Any:
    """A list result's named items keyed by name (so reordering is no change, a removal is named)."""
    if not isinstance(value, dict):
        return value
    out = dict(cast("dict[str, Any]", value))
    for key, name in NAMED_LISTS.items():
        items = out.get(key)
        if isinstance(items, list) and all(isinstance(i, dict) and name in i for i in cast("list[Any]", items)):
            out[key] = {str(i[name]): i for i in cast("list[dict[str, Any]]", items)}
    return out


def severity(difference: Difference) -> Severity:
    if difference.kind == "removed":
        return "breaking"
    if difference.kind == "added":
        return "harmless"
    if type(difference.recorded) is not type(difference.actual):
        if isinstance(difference.recorded, int | float) and isinstance(difference.actual, int | float):
            return "changed"
        return "breaking"
    return "changed"


def _answers(recording: Recording) -> dict[Any, Entry]:
    return {e.id: e for e in recording.entries if e.dir == "server" and e.is_response}


def _requests(recording: Recording) -> list[Entry]:
    return [e for e in recording.entries if e.dir == "client" and e.is_request]


def _compare_pair(diff: SessionDiff, a: Recording, entry: Entry, answer_a: Entry, answer_b: Entry) -> None:
    where, name = a.where(entry), what_is(entry.message)
    body_a, body_b = answer_body(answer_a.message or {}), answer_body(answer_b.message or {})
    if "result" in body_a and "error" in body_b:
        error = cast("dict[str, Any]", body_b["error"])
        diff.changes.append(
            SessionChange(where, name, "breaking", f"an error where there was a result: {error.get('message')!r}")
        )
        return
    if "error" in body_a and "result" in body_b:
        diff.changes.append(SessionChange(where, name, "harmless", "a result where there was an error"))
        return
    for d in differences(_by_name(body_a.get("result", body_a)), _by_name(body_b.get("result", body_b))):
        diff.changes.append(SessionChange(where, name, severity(d), d.describe()))


def diff_sessions(a: Recording, b: Recording, *, rules: MatchRules = DEFAULT_RULES) -> SessionDiff:
    diff = SessionDiff(str(a.path or "A"), str(b.path or "B"))
    answers_a, answers_b = _answers(a), _answers(b)
    unpaired = _requests(b)
    for entry in _requests(a):
        key = rules.key(entry.message or {})
        partner = next((e for e in unpaired if rules.key(e.message or {}) == key), None)
        if partner is None:
            diff.changes.append(SessionChange(a.where(entry), what_is(entry.message), "changed", "not asked in B"))
            continue
        unpaired.remove(partner)
        answer_a, answer_b = answers_a.get(entry.id), answers_b.get(partner.id)
        diff.paired += 1
        if answer_a is None or answer_b is None:
            if (answer_a is None) != (answer_b is None):
                missing = "B" if answer_b is None else "A"
                diff.changes.append(
                    SessionChange(a.where(entry), what_is(entry.message), "breaking", f"never answered in {missing}")
                )
            continue
        _compare_pair(diff, a, entry, answer_a, answer_b)
    for entry in unpaired:
        diff.changes.append(SessionChange(b.where(entry), what_is(entry.message), "changed", "asked only in B"))
    return diff
