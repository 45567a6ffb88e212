"""A directory of Agent Skills read as Skills-extension entries (skills.mdx): each `SKILL.md` (YAML
frontmatter with `name` and `description`) is a skill at `skill://<skill-path>/SKILL.md`, whose
`resources` are every file under its directory (nested skills' files included) with `sha256:` digest
and size. Paths never leave the root: a URI that would is refused and nothing is read."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, cast

SCHEME = "skill://"
SKILL_FILE = "SKILL.md"
# agentskills.io/specification, name field: 1-64 lowercase letters, digits and hyphens, no leading,
# trailing or doubled hyphen; it matches the skill's directory name.
NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME = 64
MAX_DESCRIPTION = 1024


class SkillError(ValueError):
    """A skill that breaks the format: the message names the file and what to fix."""


@dataclass(frozen=True)
class SkillDir:
    path: str  # the skill path: "git-workflow", "acme/billing/refunds"
    folder: Path
    frontmatter: dict[str, Any]

    @property
    def uri(self) -> str:
        return f"{SCHEME}{self.path}/{SKILL_FILE}"


def frontmatter(text: str, where: str) -> dict[str, Any]:
    """The YAML frontmatter of a SKILL.md, as written (`name` and `description` checked)."""
    try:
        import yaml  # the `skills` extra
    except ImportError:
        raise SkillError(
            f"{where}: reading SKILL.md frontmatter needs PyYAML: pip install 'mcp-bindgen[skills]'"
        ) from None

    if not text.startswith("---"):
        raise SkillError(f"{where}: SKILL.md must begin with YAML frontmatter between '---' lines")
    parts = text.split("\n---", 1)
    if len(parts) != 2:
        raise SkillError(f"{where}: the frontmatter has no closing '---' line")
    try:
        data = yaml.safe_load(parts[0].removeprefix("---"))
    except yaml.YAMLError as exc:
        raise SkillError(f"{where}: the frontmatter is not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise SkillError(f"{where}: the frontmatter must be a mapping with `name` and `description`")
    fields = cast("dict[str, Any]", data)
    for key in ("name", "description"):
        if not isinstance(fields.get(key), str) or not fields[key].strip():
            raise SkillError(f"{where}: the frontmatter has no `{key}` (the Agent Skills format requires it)")
    return fields


def check_name(name: str, folder: str, where: str) -> None:
    if len(name) > MAX_NAME or not NAME.match(name):
        raise SkillError(
            f"{where}: name {name!r} breaks the Agent Skills naming rules (1-{MAX_NAME} lowercase letters, digits "
            "and single hyphens, not at either end)"
        )
    if name != folder:
        raise SkillError(f"{where}: name {name!r} does not match its folder {folder!r} (rename one of them)")


def load(root: Path, skill_md: Path) -> SkillDir:
    folder = skill_md.parent
    where = str(skill_md)
    fields = frontmatter(skill_md.read_text(encoding="utf-8"), where)
    if len(fields["description"]) > MAX_DESCRIPTION:
        raise SkillError(f"{where}: description is longer than {MAX_DESCRIPTION} characters")
    check_name(fields["name"], folder.name, where)
    return SkillDir(folder.relative_to(root).as_posix(), folder, fields)


def scan(root: Path) -> list[SkillDir]:
    """Every skill under `root` (nested ones too), by skill path; the first bad SKILL.md raises."""
    return sorted(
        (load(root, p) for p in root.rglob(SKILL_FILE) if p.is_file() and p.parent != root), key=lambda s: s.path
    )


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def entry(skill: SkillDir) -> dict[str, Any]:
    """The skill's `Skill` entry (skills.mdx, Skill Entries): frontmatter verbatim, every file."""
    resources = []
    for file in sorted(p for p in skill.folder.rglob("*") if p.is_file() and not p.is_symlink()):
        data = file.read_bytes()
        rel = file.relative_to(skill.folder).as_posix()
        resources.append({"uri": f"{SCHEME}{skill.path}/{rel}", "digest": digest(data), "size": len(data)})
    return {"uri": skill.uri, "frontmatter": skill.frontmatter, "resources": resources}


def resolve(root: Path, uri: str) -> Path | None:
    """The file or directory a `skill://` URI names under `root`; None when it names nothing or would
    leave the root (`..`, an absolute path, a symlink out): refused before anything is read."""
    if not uri.startswith(SCHEME):
        return None
    rel = PurePosixPath(uri.removeprefix(SCHEME))
    if rel.is_absolute() or any(part in ("..", "") for part in rel.parts) or "\\" in str(rel):
        return None
    target = (root / rel).resolve()
    return target if target.is_relative_to(root.resolve()) and target.exists() else None


def mime_type(path: Path) -> str:
    if path.is_dir():
        return "inode/directory"
    if path.suffix == ".md":
        return "text/markdown"
    import mimetypes

    return mimetypes.guess_type(path.name)[0] or "application/octet-stream"
