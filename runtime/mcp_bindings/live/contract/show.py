"""Human output of `list`, `call`, `read`, `get-prompt` and `inspect`: tables, content rendered as
text, images, audio and blobs saved to files (their paths printed). Everything here reads wire JSON
(dicts), so it serves every protocol version alike; `--format json` prints that JSON instead."""

from __future__ import annotations

import base64
import json
import mimetypes
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcp_bindings.ext.io_modelcontextprotocol_groups.names import IDENTIFIER as GROUPS  # `_meta` key: a group's groups

WIDTH = 60  # a description column is cut here


class Saver:
    """Writes binary content to files in one folder (made on first use), numbering them."""

    def __init__(self, folder: str | None) -> None:
        self.folder = Path(folder) if folder else None
        self.count = 0

    def save(self, data: str, mime: str | None, stem: str) -> Path:
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="mcp-bindgen-"))
        self.folder.mkdir(parents=True, exist_ok=True)
        self.count += 1
        suffix = mimetypes.guess_extension(mime or "") or ".bin"
        path = self.folder / f"{stem}-{self.count}{suffix}"
        path.write_bytes(base64.b64decode(data))
        return path


def table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    if not rows:
        return "(none)\n"
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in [header, *rows]]
    return "\n".join(lines) + "\n"


def _short(text: Any) -> str:
    first = str(text or "").strip().splitlines()[0] if str(text or "").strip() else ""
    return first if len(first) <= WIDTH else first[: WIDTH - 1] + "…"


def _schema_type(schema: dict[str, Any]) -> str:
    if "type" in schema:
        kind = schema["type"]
        return "|".join(kind) if isinstance(kind, list) else str(kind)
    options = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(options, list):
        return "|".join(_schema_type(option) for option in options if isinstance(option, dict))
    if "enum" in schema:
        return "enum"
    return "object" if "$ref" in schema or "properties" in schema else "any"


def tool_arguments(tool: dict[str, Any]) -> str:
    schema = tool.get("inputSchema") or {}
    required = set(schema.get("required") or [])
    props: dict[str, Any] = schema.get("properties") or {}
    return ", ".join(f"{name}{'*' if name in required else ''}: {_schema_type(p)}" for name, p in props.items())


def prompt_arguments(prompt: dict[str, Any]) -> str:
    return ", ".join(f"{a['name']}{'*' if a.get('required') else ''}" for a in prompt.get("arguments") or [])


def render_list(kind: str, items: list[dict[str, Any]]) -> str:
    if kind == "tools":
        rows = [(t["name"], tool_arguments(t), _short(t.get("description"))) for t in items]
        return table(rows, ("TOOL", "ARGUMENTS (* required)", "DESCRIPTION"))
    if kind == "prompts":
        rows = [(p["name"], prompt_arguments(p), _short(p.get("description"))) for p in items]
        return table(rows, ("PROMPT", "ARGUMENTS (* required)", "DESCRIPTION"))
    if kind == "resources":
        rows = [(r["uri"], r.get("name", ""), r.get("mimeType", ""), _short(r.get("description"))) for r in items]
        return table(rows, ("URI", "NAME", "MIME TYPE", "DESCRIPTION"))
    rows = [(r["uriTemplate"], r.get("name", ""), _short(r.get("description"))) for r in items]
    return table(rows, ("URI TEMPLATE", "NAME", "DESCRIPTION"))


def render_content(items: list[dict[str, Any]], saver: Saver) -> str:
    """Content blocks (tool results, prompt messages): text as is, binary saved to files."""
    out: list[str] = []
    for item in items:
        kind = item.get("type")
        if kind == "text":
            out.append(str(item.get("text", "")))
        elif kind in ("image", "audio"):
            path = saver.save(item.get("data", ""), item.get("mimeType"), kind)
            out.append(f"[{kind} {item.get('mimeType', '')} saved to {path}]")
        elif kind == "resource":
            out.append(render_contents([item.get("resource") or {}], saver))
        elif kind == "resource_link":
            name = f" ({item['name']})" if item.get("name") else ""
            out.append(f"[resource link {item.get('uri')}{name}]")
        else:
            out.append(json.dumps(item, ensure_ascii=False))
    return "\n".join(out)


def render_contents(contents: list[dict[str, Any]], saver: Saver) -> str:
    """Resource contents: text as is, a blob saved to a file."""
    out: list[str] = []
    for content in contents:
        if "text" in content:
            out.append(str(content["text"]))
        elif "blob" in content:
            path = saver.save(content["blob"], content.get("mimeType"), "resource")
            out.append(f"[{content.get('uri')} {content.get('mimeType', '')} saved to {path}]")
    return "\n".join(out)


def render_call(result: dict[str, Any], saver: Saver) -> str:
    text = render_content(result.get("content") or [], saver)
    if not text and "structuredContent" in result:
        text = json.dumps(result["structuredContent"], indent=2, ensure_ascii=False)
    return text + "\n" if text else ""


def render_prompt(result: dict[str, Any], saver: Saver) -> str:
    lines = [f"# {result['description']}"] if result.get("description") else []
    for message in result.get("messages") or []:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content or {}]
        lines.append(f"{message.get('role')}: {render_content(blocks, saver)}")
    return "\n".join(lines) + "\n"


def render_inspect(report: dict[str, Any]) -> str:
    info = report.get("serverInfo") or {}
    lines = [
        f"server        {info.get('name', '?')} {info.get('version', '')}".rstrip(),
        f"protocol      {report['protocolVersion']} (negotiated)",
        f"speaks        {', '.join(report['versions']) or '(none of this client versions)'}",
        f"capabilities  {', '.join(sorted(report.get('capabilities') or {})) or '(none)'}",
    ]
    if report.get("instructions"):
        lines.append(f"instructions  {_short(report['instructions'])}")
    text = "\n".join(lines) + "\n"
    for key, kind in (("tools", "tools"), ("prompts", "prompts"), ("resources", "resources")):
        text += f"\n{kind} ({len(report[key])})\n" + render_list(kind, report[key])
    templates = report["resourceTemplates"]
    text += f"\nresource templates ({len(templates)})\n" + render_list("templates", templates)
    if "groups" in report:  # a server offering the groups extension (docs/discovery.md)
        text += f"\ngroups ({len(report['groups'])})\n" + render_groups(report["groups"])
    return text


def render_groups(items: list[dict[str, Any]]) -> str:
    """A server's groups (`list groups`): name, title, the groups it belongs to, description."""
    parents = [", ".join((g.get("_meta") or {}).get(GROUPS) or ()) for g in items]
    rows = [
        (g["name"], g.get("title", ""), p, _short(g.get("description"))) for g, p in zip(items, parents, strict=True)
    ]
    return table(rows, ("GROUP", "TITLE", "IN GROUPS", "DESCRIPTION"))
