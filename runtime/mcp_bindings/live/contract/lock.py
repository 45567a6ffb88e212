"""The surface lock: a server's surface per protocol version it speaks, in one deterministic file,
and the check of a live server against it (each change breaking or additive, see mcp_bindgen/compat.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_bindgen.compat import Change, compare_surfaces
from mcp_bindgen.errors import BindgenError

from ..server_spec import ServerSpec
from .surface import Surface, capture, dumps, known_versions, speaks

LOCK_FORMAT = 1


def build_lock(
    server: ServerSpec,
    versions: list[str] | None = None,
    headers: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Capture the surface at each version (default: every known one) the server negotiates."""
    found: dict[str, Surface] = {}
    if versions:
        for version in versions:
            surface = capture(server, version, headers, env)
            if surface["protocolVersion"] != version:
                raise BindgenError(
                    f"`{server.text}` does not speak {version} (it answered {surface['protocolVersion']})"
                )
            found[version] = surface
    else:
        for version in known_versions():
            surface = speaks(server, version, headers, env)
            if surface is not None:
                found[version] = surface
    if not found:
        raise BindgenError(f"`{server.text}` speaks none of the protocol versions {', '.join(known_versions())}")
    return {"lockFormat": LOCK_FORMAT, "versions": {v: _strip(found[v]) for v in sorted(found)}}


def current_surfaces(
    server: ServerSpec, versions: list[str], headers: dict[str, str] | None = None, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """The live surfaces at the locked versions only (a version it no longer speaks is left out)."""
    found = {v: speaks(server, v, headers, env) for v in versions}
    return {"lockFormat": LOCK_FORMAT, "versions": {v: _strip(s) for v, s in sorted(found.items()) if s is not None}}


def _strip(surface: Surface) -> Surface:
    # The protocol version is the key; serverInfo.version changes with every release and breaks nothing.
    out = {k: v for k, v in surface.items() if k != "protocolVersion"}
    info = dict(out.get("serverInfo") or {})
    info.pop("version", None)
    out["serverInfo"] = info
    return out


def read_lock(path: Path) -> dict[str, Any]:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise BindgenError(
            f"lock file {path} not found: create it with `mcp-bindgen lock -o {path} --from ...`"
        ) from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BindgenError(
            f"{path} is not a lock file (not JSON: {exc}); regenerate it with `mcp-bindgen lock`"
        ) from exc
    if (
        not isinstance(data, dict)
        or data.get("lockFormat") != LOCK_FORMAT
        or not isinstance(data.get("versions"), dict)
    ):
        raise BindgenError(f"{path} is not a lock file of format {LOCK_FORMAT}; regenerate it with `mcp-bindgen lock`")
    lock: dict[str, Any] = data
    return lock


@dataclass(frozen=True)
class CheckResult:
    changes: list[Change]
    versions: tuple[str, ...] = ()  # the versions compared (a change at all of them is shown once)

    @property
    def breaking(self) -> list[Change]:
        return [c for c in self.changes if c.kind == "breaking"]

    def render(self, fmt: str = "markdown") -> str:
        if fmt == "json":
            return (
                json.dumps(
                    {
                        "breaking": len(self.breaking),
                        "additive": len(self.changes) - len(self.breaking),
                        "changes": [c.as_json() for c in self.changes],
                    },
                    indent=2,
                    sort_keys=True,
                )
                + "\n"
            )
        lines = ["# Surface check", ""]
        if not self.changes:
            return "\n".join([*lines, "No changes: the server matches the lock.", ""])
        groups = {kind: self._grouped(kind) for kind in ("breaking", "additive")}
        # counted as the tables show them: one change found at several versions is one row
        lines.append(f"{len(groups['breaking'])} breaking, {len(groups['additive'])} additive change(s).")
        for kind, grouped in groups.items():
            if grouped:
                lines += ["", f"## {kind.capitalize()}", "", "| where | change | versions |", "|---|---|---|"]
                lines += [
                    f"| {where} | {what} | {self._versions(found)} |".replace("\n", " ")
                    for (where, what), found in sorted(grouped.items())
                ]
        return "\n".join(lines) + "\n"

    def _grouped(self, kind: str) -> dict[tuple[str, str], list[str]]:
        """The changes of `kind` by (where, what): the versions each was found at."""
        grouped: dict[tuple[str, str], list[str]] = {}
        for c in self.changes:
            if c.kind == kind:
                grouped.setdefault((c.where, c.what), []).append(c.version)
        return grouped

    def _versions(self, found: list[str]) -> str:
        """The versions a change was found at: "all" when it is every version compared."""
        if len(found) > 1 and sorted(found) == sorted(self.versions):
            return f"all {len(found)}"
        return ", ".join(sorted(found))


def check_lock(lock: dict[str, Any], current: dict[str, Any]) -> CheckResult:
    changes: list[Change] = []
    old_versions: dict[str, Any] = lock["versions"]
    new_versions: dict[str, Any] = current["versions"]
    for version in sorted(set(old_versions) | set(new_versions)):
        if version not in new_versions:
            changes.append(Change("protocol", "protocol version no longer spoken", "breaking", version))
        elif version not in old_versions:
            changes.append(Change("protocol", "protocol version newly spoken", "additive", version))
        else:
            changes += compare_surfaces(old_versions[version], new_versions[version], version)
    return CheckResult(changes, tuple(sorted(set(old_versions) | set(new_versions))))


def lock_text(lock: dict[str, Any]) -> str:
    return dumps(lock)
