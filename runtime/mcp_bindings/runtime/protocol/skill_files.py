"""A directory of Agent Skills read as Skills-extension entries (skills.mdx): each `SKILL.md` (YAML
frontmatter with `name` and `description`) is a skill at `skill://<skill-path>/SKILL.md`, whose
`resources` are every file under its directory (nested skills' files included) with `sha256:` digest
and size.

Paths never leave the root, and what is checked is what is read: a file is opened one path segment at
a time from the root, each without following a symlink (`open_under`), so a segment swapped for a
symlink between a listing and a read is refused, never followed. A URI no file could have (a NUL
byte, over `MAX_URI` characters, a segment over `MAX_SEGMENT` bytes) is `SkillUriError`; one that
would leave the root names nothing. Digests are made in chunks, and kept (`Digests`) by what the
opened file is (device, inode, size, modification time), so an unchanged file is read once."""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

SCHEME = "skill://"
SKILL_FILE = "SKILL.md"
# agentskills.io/specification, name field: 1-64 lowercase letters, digits and hyphens, no leading,
# trailing or doubled hyphen; it matches the skill's directory name.
NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_URI = 4096  # characters of a skill:// URI a request may name (PATH_MAX)
MAX_SEGMENT = 255  # UTF-8 bytes of one of its path segments (NAME_MAX)
MAX_SKILL_MD = 1 << 20  # bytes of a SKILL.md read for its frontmatter
CHUNK = 1 << 20  # bytes hashed at a time

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
# O_NONBLOCK: a FIFO put in the folder is opened without waiting for a writer (and then refused).
_FILE = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_WALKS = os.open in os.supports_dir_fd and bool(_NOFOLLOW)


class SkillError(ValueError):
    """A skill that breaks the format: the message names the file and what to fix."""


class SkillUriError(ValueError):
    """A URI no file could have: the message says why, naming no path of the server."""


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
    rel = skill_md.relative_to(root).as_posix()
    fd = open_under(root, rel.split("/"))
    try:
        if os.fstat(fd).st_size > MAX_SKILL_MD:
            raise SkillError(f"{where}: SKILL.md is larger than {MAX_SKILL_MD} bytes")
        text = read_all(fd, MAX_SKILL_MD).decode("utf-8")
    finally:
        os.close(fd)
    fields = frontmatter(text, where)
    if len(fields["description"]) > MAX_DESCRIPTION:
        raise SkillError(f"{where}: description is longer than {MAX_DESCRIPTION} characters")
    check_name(fields["name"], folder.name, where)
    return SkillDir(folder.relative_to(root).as_posix(), folder, fields)


def scan(root: Path) -> list[SkillDir]:
    """Every skill under `root` (nested ones too), by skill path; the first bad SKILL.md raises."""
    return sorted((load(root, p) for p in walk(root, SKILL_FILE) if p.parent != root), key=lambda s: s.path)


def walk(folder: Path, name: str | None = None) -> list[Path]:
    """The names of files under `folder` (given `name`: only those so named), sorted. A symlinked
    folder is not entered, a folder that goes away meanwhile is passed over; what is found is only
    a name until `open_under` opens it."""
    return sorted(Path(where, file) for where, _, files in os.walk(folder) for file in files if name in (None, file))


def segments(uri: str) -> list[str] | None:
    """The path segments a `skill://` URI names under a root; None when it names nothing a root
    holds (another scheme, `..`, `.`, an empty segment, an absolute path, a backslash).
    `SkillUriError` when no file could have it: a NUL byte, over `MAX_URI` characters, a segment
    over `MAX_SEGMENT` bytes."""
    if len(uri) > MAX_URI:
        raise SkillUriError(f"is longer than {MAX_URI} characters")
    if "\x00" in uri:
        raise SkillUriError("holds a NUL byte (no file name can)")
    if not uri.startswith(SCHEME):
        return None
    rel = uri.removeprefix(SCHEME)
    parts = rel.split("/")
    if "\\" in rel or any(part in ("", ".", "..") for part in parts):
        return None
    if any(len(part.encode("utf-8", "surrogatepass")) > MAX_SEGMENT for part in parts):
        raise SkillUriError(f"has a path segment longer than {MAX_SEGMENT} bytes (no file name can be)")
    return parts


def open_under(root: Path, parts: Sequence[str], *, directory: bool = False) -> int:
    """A descriptor of the regular file (`directory`: the directory) `parts` names under `root`,
    opened one segment at a time from the root, none followed if it is a symlink: the file checked
    is the file read. OSError when it is not there, a segment is a symlink, or it is of another
    kind (a FIFO, a device; a directory unless `directory`). The caller closes it."""
    if not _WALKS:  # no `dir_fd` (Windows): the path is resolved and checked, then opened
        return _open_resolved(root, parts, directory=directory)
    fd = os.open(root, _DIRECTORY)
    try:
        for part in parts if directory else parts[:-1]:
            inner = os.open(part, _DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        if directory:
            found, fd = fd, -1
        else:
            found = os.open(parts[-1], _FILE, dir_fd=fd)
    finally:
        if fd >= 0:
            os.close(fd)
    _check_kind(found, directory)
    return found


def _open_resolved(root: Path, parts: Sequence[str], *, directory: bool) -> int:
    target = root.joinpath(*parts).resolve()
    if not target.is_relative_to(root.resolve()):
        raise OSError(errno.ENOENT, "outside the root")
    found = os.open(target, _FILE)
    _check_kind(found, directory)
    return found


def _check_kind(fd: int, directory: bool) -> None:
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISDIR(mode) if directory else stat.S_ISREG(mode)):
        os.close(fd)
        raise OSError(errno.ENOENT, "not a regular file" if not directory else "not a directory")


def read_all(fd: int, limit: int) -> bytes:
    """At most `limit` bytes of `fd`, from where it is."""
    chunks: list[bytes] = []
    left = limit
    while left > 0 and (chunk := os.read(fd, min(left, CHUNK))):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _hash(fd: int) -> str:
    sha = hashlib.sha256()
    while chunk := os.read(fd, CHUNK):
        sha.update(chunk)
    return "sha256:" + sha.hexdigest()


class Digests:
    """The digests of one root's files, kept by what each opened file is (device, inode, size,
    modification time): a listing reads only the files that changed since the last one, each in
    chunks. One listing at a time (a lock); only the files the last listing saw are kept."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._kept: dict[str, tuple[tuple[int, int, int, int], str]] = {}
        self._lock = threading.Lock()

    def entries(self, skills: Iterable[SkillDir]) -> dict[str, dict[str, Any]]:
        """Each skill's `Skill` entry (skills.mdx, Skill Entries), by its URI: frontmatter verbatim,
        every file under its folder with its digest and size (a file that vanishes or turns into a
        symlink meanwhile is left out)."""
        with self._lock:
            seen: dict[str, tuple[tuple[int, int, int, int], str]] = {}
            out = {skill.uri: self._entry(skill, seen) for skill in skills}
            self._kept = seen
            return out

    def _entry(self, skill: SkillDir, seen: dict[str, tuple[tuple[int, int, int, int], str]]) -> dict[str, Any]:
        resources: list[dict[str, Any]] = []
        for file in walk(skill.folder):
            rel = file.relative_to(self.root).as_posix()
            try:
                fd = open_under(self.root, rel.split("/"))
            except OSError:
                continue
            try:
                info = os.fstat(fd)
                key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
                kept = seen.get(rel) or self._kept.get(rel)
                sha = kept[1] if kept is not None and kept[0] == key else _hash(fd)
            finally:
                os.close(fd)
            seen[rel] = (key, sha)
            uri = f"{SCHEME}{skill.path}/{file.relative_to(skill.folder).as_posix()}"
            resources.append({"uri": uri, "digest": sha, "size": info.st_size})
        return {"uri": skill.uri, "frontmatter": skill.frontmatter, "resources": resources}


def mime_type(name: str, is_dir: bool = False) -> str:
    if is_dir:
        return "inode/directory"
    if name.endswith(".md"):
        return "text/markdown"
    import mimetypes

    return mimetypes.guess_type(name)[0] or "application/octet-stream"
