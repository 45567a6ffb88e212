"""Compatibility lint of a server's tool schemas against what host applications accept.

The rule list is data (`lint_rules.json`: id, check, severity, reason); each `check` names a
function below that yields the findings of one tool.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

from mcp_bindgen.errors import BindgenError

RULES_FILE = Path(__file__).with_name("lint_rules.json")
_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
Check = Callable[[dict[str, Any]], Iterator[str]]


def _walk(value: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(value, dict):
        node: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
        yield path or "(root)", node
        for key, item in node.items():
            if key in ("enum", "const", "default", "examples"):
                continue
            yield from _walk(item, f"{path}/{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
            yield from _walk(item, f"{path}/{i}")


def input_type_object(tool: dict[str, Any]) -> Iterator[str]:
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict) or schema.get("type") != "object":  # pyright: ignore[reportUnknownMemberType]
        yield 'inputSchema.type is not "object"'


def no_top_level_combinator(tool: dict[str, Any]) -> Iterator[str]:
    schema = tool.get("inputSchema")
    if isinstance(schema, dict):
        for key in ("oneOf", "anyOf", "allOf", "not"):
            if key in schema:
                yield f"inputSchema has `{key}` at its root"


def no_refs(tool: dict[str, Any]) -> Iterator[str]:
    for which in ("inputSchema", "outputSchema"):
        places = [
            f"{which}{'' if path == '(root)' else path}"
            for path, node in _walk(tool.get(which))
            if not path.endswith("/properties")
            for key in ("$ref", "$defs", "definitions")
            if key in node
        ]
        if places:
            shown = ", ".join(sorted(set(places))[:3]) + (", ..." if len(set(places)) > 3 else "")
            yield (
                f"{which} uses $ref/$defs in {len(places)} place(s): {shown} "
                "(an mcp-bindgen App writes them out with App(inline_refs=True))"
            )


def no_type_arrays(tool: dict[str, Any]) -> Iterator[str]:
    for path, node in _walk(tool.get("inputSchema")):
        if isinstance(node.get("type"), list) and not path.endswith("/properties"):
            yield f"inputSchema{'' if path == '(root)' else path} has a list of types {node['type']}"


def tool_name_charset(tool: dict[str, Any]) -> Iterator[str]:
    if not _NAME.match(str(tool.get("name", ""))):
        yield f"name {tool.get('name')!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$"


def tool_description(tool: dict[str, Any]) -> Iterator[str]:
    if not str(tool.get("description") or "").strip():
        yield "no description"


def output_type_object(tool: dict[str, Any]) -> Iterator[str]:
    schema = tool.get("outputSchema")
    if schema is not None and (not isinstance(schema, dict) or schema.get("type") != "object"):  # pyright: ignore[reportUnknownMemberType]
        yield 'outputSchema.type is not "object"'


CHECKS: dict[str, Check] = {
    f.__name__: f
    for f in (
        input_type_object,
        no_top_level_combinator,
        no_refs,
        no_type_arrays,
        tool_name_charset,
        tool_description,
        output_type_object,
    )
}


@dataclass(frozen=True)
class Rule:
    id: str
    check: str
    severity: str
    reason: str


@dataclass(frozen=True, order=True)
class Finding:
    tool: str
    rule: str
    severity: str
    detail: str
    reason: str


@cache
def load_rules(path: Path = RULES_FILE) -> tuple[Rule, ...]:
    data: Any = json.loads(path.read_text(encoding="utf-8"))
    rules: list[Rule] = []
    for entry in data["rules"]:
        rule = Rule(**entry)
        if rule.check not in CHECKS:
            raise BindgenError(f"{path}: rule {rule.id} names the unknown check {rule.check!r}")
        if rule.severity not in ("error", "warning") or not rule.reason.strip():
            raise BindgenError(f"{path}: rule {rule.id} needs severity error|warning and a reason")
        rules.append(rule)
    return tuple(rules)


def lint_surface(surface: dict[str, Any]) -> list[Finding]:
    findings: list[Finding] = []
    for tool in surface.get("tools") or []:
        for rule in load_rules():
            for detail in CHECKS[rule.check](tool):
                findings.append(Finding(str(tool.get("name")), rule.id, rule.severity, detail, rule.reason))
    return sorted(findings)


def render_findings(findings: list[Finding], tools: int, fmt: str = "markdown") -> str:
    errors = sum(1 for f in findings if f.severity == "error")
    if fmt == "json":
        body = {
            "tools": tools,
            "errors": errors,
            "warnings": len(findings) - errors,
            "findings": [asdict(f) for f in findings],
        }
        return json.dumps(body, indent=2, sort_keys=True) + "\n"
    lines = [
        "# Host compatibility lint",
        "",
        f"{tools} tool(s): {errors} error(s), {len(findings) - errors} warning(s).",
    ]
    if findings:
        lines += ["", "| tool | rule | severity | finding | why |", "|---|---|---|---|---|"]
        lines += [f"| `{f.tool}` | {f.rule} | {f.severity} | {f.detail} | {f.reason} |" for f in findings]
    return "\n".join(lines) + "\n"
