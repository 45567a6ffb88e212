"""The Skills extension (`io.modelcontextprotocol/skills`) for a client: typed `list_skills`,
`get_skill`, `read_directory`, and `download_skill`, which fetches a skill's files and verifies each
against its entry (size, `sha256:` digest, and the SKILL.md frontmatter) before writing anything.

    async with connect_stdio(command, Client) as client:
        for skill in await list_skills(client):                 # every page
            print(skill.uri, skill.frontmatter.name)
        folder = await download_skill(client, "skill://git-workflow/SKILL.md", Path("cache/server-a"))

The server must have declared the extension (else `CapabilityError`, nothing sent).
"""

from __future__ import annotations

import base64
from pathlib import Path, PurePosixPath
from typing import Any, Protocol, cast

from mcp_bindings.ext.io_modelcontextprotocol_skills import models as sk
from mcp_bindings.ext.io_modelcontextprotocol_skills.client import Calls
from mcp_bindings.runtime.protocol import versions
from mcp_bindings.runtime.protocol.pagination import every_page
from mcp_bindings.runtime.protocol.skill_files import digest, frontmatter  # the same parser and digest the server uses
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError

__all__ = ["SkillVerificationError", "download_skill", "get_skill", "list_skills", "read_directory"]

SKILL_FILE = "SKILL.md"


class SkillVerificationError(Exception):
    """A file of a skill is not what its entry says (skills.mdx, Integrity and Verification)."""


class _Client(Protocol):
    @property
    def session(self) -> Any: ...

    async def read_resource(self, *, uri: str) -> Any: ...


async def list_skills(client: _Client) -> list[sk.Skill]:
    """Every skill the server lists (all pages)."""
    calls = Calls(client.session)
    return await every_page(
        lambda cursor: calls.list_skills(sk.ListSkillsRequestParams(cursor=cursor) if cursor else None), "skills"
    )


async def get_skill(client: _Client, uri: str) -> sk.Skill:
    """The entry of the skill whose SKILL.md is `uri` (-32602 when the server serves none there)."""
    return (await Calls(client.session).get_skill(sk.GetSkillRequestParams(uri=uri))).skill


async def read_directory(client: _Client, uri: str) -> list[Any]:
    """The direct children of a directory resource (all pages); the server must declare `directoryRead`."""
    calls = Calls(client.session)
    return await every_page(
        lambda cursor: calls.read_resource_directory(sk.ReadResourceDirectoryRequestParams(uri=uri, cursor=cursor)),
        "resources",
    )


def _bytes_of(contents: Any) -> bytes:
    data = cast("dict[str, Any]", versions.dump(contents))
    if "text" in data:
        return str(data["text"]).encode("utf-8")
    return base64.b64decode(str(data.get("blob", "")))


def _local_path(skill_root: str, uri: str, dest: Path) -> Path:
    """Where a file of the skill goes under `dest`: its path below the skill's root, never outside."""
    if not uri.startswith(skill_root + "/"):
        raise SkillVerificationError(f"{uri} is not a file of the skill at {skill_root}")
    rel = PurePosixPath(uri.removeprefix(skill_root + "/"))
    if rel.is_absolute() or any(part in ("..", "", ".") for part in rel.parts):
        raise SkillVerificationError(f"{uri} would be written outside the skill's folder: refused")
    return dest.joinpath(*rel.parts)


async def download_skill(client: _Client, uri: str, dest: Path) -> Path:
    """Fetch the skill whose SKILL.md is `uri` into `dest` (its files at their paths below the skill
    root), each verified against the skill's entry (size, digest; the SKILL.md frontmatter against the
    entry's) before anything is written. A `"dynamic"` skill has nothing to verify: refused."""
    skill = await get_skill(client, uri)
    if isinstance(skill.resources, str):
        raise SkillVerificationError(f"{uri} is a dynamic skill: it publishes no digests to verify")
    if not uri.endswith("/" + SKILL_FILE):
        raise McpError(INVALID_PARAMS, f"{uri} is not the URI of a SKILL.md")
    root = uri.removesuffix("/" + SKILL_FILE)
    fetched: dict[Path, bytes] = {}
    for item in skill.resources:
        target = _local_path(root, item.uri, dest)
        result = await client.read_resource(uri=item.uri)
        data = _bytes_of(result.contents[0])
        if len(data) != item.size:
            raise SkillVerificationError(f"{item.uri}: {len(data)} bytes, the entry says {item.size}")
        if digest(data) != item.digest:
            raise SkillVerificationError(f"{item.uri}: its sha256 digest is not the entry's {item.digest}")
        fetched[target] = data
    skill_md = fetched.get(dest / SKILL_FILE)
    if skill_md is None:
        raise SkillVerificationError(f"{uri}: the entry does not list its SKILL.md")
    written = frontmatter(skill_md.decode("utf-8"), uri)
    if written != versions.dump(skill.frontmatter):
        raise SkillVerificationError(f"{uri}: the SKILL.md frontmatter differs from the entry's")
    for target, data in fetched.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return dest
