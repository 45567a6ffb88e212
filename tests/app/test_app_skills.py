"""The Skills extension (`io.modelcontextprotocol/skills`) on the authoring layer and for clients: a
directory of Agent Skills served in one line, entries with verbatim frontmatter and digests, nested
and dynamic skills, directory reads, a verified download, and clear errors for bad skills."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

import pytest

from examples.skills_server import SKILLS, make_app
from mcp_bindings.runtime.app import App, AppDefinitionError
from mcp_bindings.runtime.client.skills import (
    SkillVerificationError,
    download_skill,
    get_skill,
    list_skills,
    read_directory,
)
from mcp_bindings.runtime.protocol import registry
from mcp_bindings.runtime.rpc.errors import CapabilityError, McpError
from mcp_bindings.v2025_11_25.models import TextResourceContents

pytestmark = pytest.mark.anyio

SKILLS_ID = "io.modelcontextprotocol/skills"
VERSIONS = [v for v in registry.versions() if v >= "2025-06-18"]


def sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def declared(capabilities: Any) -> dict[str, Any]:
    caps = dict(capabilities or {})
    return {**(caps.get("extensions") or {}), **(caps.get("experimental") or {})}


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    shutil.copytree(SKILLS, root)
    nested = root / "pdf-processing" / "forms"  # a skill inside a skill
    nested.mkdir()
    (nested / "SKILL.md").write_text("---\nname: forms\ndescription: Fill PDF forms\n---\n\nUse fields.\n")
    return root


@pytest.mark.parametrize("version", VERSIONS)
async def test_list_get_and_read_at_every_version(version: str, skills_dir: Path) -> None:
    app = make_app(skills_dir)
    async with app.test_client(version) as client:
        assert declared(client.server_capabilities)[SKILLS_ID] == {"directoryRead": True}
        listed = {s.uri: s for s in await list_skills(client)}
        assert sorted(listed) == [
            "skill://acme/billing/refunds/SKILL.md",
            "skill://git-workflow/SKILL.md",
            "skill://pdf-processing/SKILL.md",
            "skill://pdf-processing/forms/SKILL.md",
            "skill://reports/daily/SKILL.md",
        ]
        refunds = await get_skill(client, "skill://acme/billing/refunds/SKILL.md")
        assert refunds.frontmatter.model_dump(by_alias=True, exclude_none=True) == {
            "name": "refunds",
            "description": "Process customer refund requests per company policy",
            "license": "Apache-2.0",
            "metadata": {"version": "1.2"},
        }
        folder = skills_dir / "acme" / "billing" / "refunds"
        assert not isinstance(refunds.resources, str)
        assert [(r.uri, r.digest, r.size) for r in refunds.resources] == [
            ("skill://acme/billing/refunds/SKILL.md", sha(folder / "SKILL.md"), (folder / "SKILL.md").stat().st_size),
            (
                "skill://acme/billing/refunds/examples/email.md",
                sha(folder / "examples" / "email.md"),
                (folder / "examples" / "email.md").stat().st_size,
            ),
        ]
        # nested: the enclosing skill lists the nested skill's files too; the nested one is its own entry
        pdf = listed["skill://pdf-processing/SKILL.md"]
        assert not isinstance(pdf.resources, str)
        assert "skill://pdf-processing/forms/SKILL.md" in [r.uri for r in pdf.resources]
        assert listed["skill://reports/daily/SKILL.md"].resources == "dynamic"
        children = await read_directory(client, "skill://pdf-processing/templates")
        assert [(c.uri, c.mime_type) for c in children] == [
            ("skill://pdf-processing/templates/invoice.md", "text/markdown"),
            ("skill://pdf-processing/templates/regional", "inode/directory"),
        ]
        read = await client.read_resource(uri="skill://acme/billing/refunds/examples/email.md")
        assert read.contents[0].text == (folder / "examples" / "email.md").read_text()
        daily = await client.read_resource(uri="skill://reports/daily/SKILL.md")
        assert daily.contents[0].text.startswith("---\nname: daily\ndescription: Assemble today")


async def test_errors_name_what_is_wrong(skills_dir: Path) -> None:
    async with make_app(skills_dir).test_client("2026-07-28") as client:
        with pytest.raises(McpError) as unknown:
            await get_skill(client, "skill://acme/billing/chargebacks/SKILL.md")
        assert unknown.value.code == -32602
        assert unknown.value.message == "No skill is served at skill://acme/billing/chargebacks/SKILL.md"
        with pytest.raises(McpError, match=r"skill://git-workflow/SKILL.md is not a directory resource") as file:
            await read_directory(client, "skill://git-workflow/SKILL.md")
        assert file.value.code == -32602
        for escape in ("skill://acme/../../../etc/passwd", "skill://git-workflow/../../outside.md"):
            with pytest.raises(McpError, match="not found") as refused:
                await client.read_resource(uri=escape)
            assert refused.value.code == -32602
        with pytest.raises(McpError, match="is not a directory resource"):
            await read_directory(client, "skill://../..")


async def test_the_listing_follows_the_directory(skills_dir: Path) -> None:
    async with make_app(skills_dir).test_client("2026-07-28") as client:
        before = {s.uri for s in await list_skills(client)}
        added = skills_dir / "release-notes"
        added.mkdir()
        (added / "SKILL.md").write_text("---\nname: release-notes\ndescription: Write release notes\n---\n")
        after = {s.uri for s in await list_skills(client)}
        assert after - before == {"skill://release-notes/SKILL.md"}
        fresh = await get_skill(client, "skill://release-notes/SKILL.md")
        assert fresh.frontmatter.name == "release-notes"


async def test_download_verifies_every_file_before_writing(skills_dir: Path, tmp_path: Path) -> None:
    async with make_app(skills_dir).test_client("2025-11-25") as client:
        dest = await download_skill(client, "skill://acme/billing/refunds/SKILL.md", tmp_path / "a" / "refunds")
        assert (dest / "examples" / "email.md").read_bytes() == (
            skills_dir / "acme" / "billing" / "refunds" / "examples" / "email.md"
        ).read_bytes()

        class Tampering:  # a server whose content is not what its entry says
            session = client.session

            async def read_resource(self, *, uri: str) -> Any:
                result = await client.read_resource(uri=uri)
                first = result.contents[0]
                if uri.endswith("email.md") and isinstance(first, TextResourceContents):
                    first.text += "and a little extra\n"
                return result

        with pytest.raises(SkillVerificationError, match=r"email\.md: \d+ bytes, the entry says \d+"):
            await download_skill(Tampering(), "skill://acme/billing/refunds/SKILL.md", tmp_path / "b")
        assert not (tmp_path / "b").exists()  # nothing written
        with pytest.raises(SkillVerificationError, match="dynamic skill"):
            await download_skill(client, "skill://reports/daily/SKILL.md", tmp_path / "c")


@pytest.mark.parametrize(
    ("text", "folder", "message"),
    [
        ("# no frontmatter\n", "plain", "must begin with YAML frontmatter"),
        ("---\ndescription: d\n---\n", "nameless", "has no `name`"),
        ("---\nname: empty\n---\n", "empty", "has no `description`"),
        ("---\nname: Bad_Name\ndescription: d\n---\n", "Bad_Name", "breaks the Agent Skills naming rules"),
        ("---\nname: other\ndescription: d\n---\n", "folder", "name 'other' does not match its folder 'folder'"),
        ("---\nname: [unclosed\ndescription: d\n---\n", "broken", "not valid YAML"),
    ],
)
def test_a_bad_skill_is_refused_when_registered(tmp_path: Path, text: str, folder: str, message: str) -> None:
    (tmp_path / folder).mkdir()
    (tmp_path / folder / "SKILL.md").write_text(text)
    with pytest.raises(AppDefinitionError, match=message) as refused:
        App("bad").skills(tmp_path)
    assert str(tmp_path / folder / "SKILL.md") in str(refused.value)


async def test_only_an_app_with_skills_declares_the_extension() -> None:
    plain = App("plain")

    @plain.tool
    def echo(text: str) -> str:
        return text

    async with plain.test_client("2026-07-28") as client:
        assert SKILLS_ID not in declared(client.server_capabilities)
        with pytest.raises(CapabilityError):
            await list_skills(client)


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_a_directory_read_carries_the_caching_hints(version: str, skills_dir: Path) -> None:
    """`resources/directory/read` answers with `ttlMs` and `cacheScope`, as `skills/get` and every
    2026-07-28 list result do: the TypeScript SDK v2 SkillsClient and the Inspector refuse it without
    them (issue 44, item 8; policy/schema_patches.json makes the result a CacheableResult)."""
    from mcp_bindings.ext.io_modelcontextprotocol_skills import names as skill_names

    params: dict[str, Any] = {"uri": "skill://pdf-processing/templates"}
    if version == "2026-07-28":
        info = registry.info(version).meta
        capabilities = {"extensions": {SKILLS_ID: {}}}
        params["_meta"] = {info.protocol_version: version, info.client_capabilities: capabilities}
    async with make_app(skills_dir).test_client(version) as client:
        assert client.session.session is not None
        raw = await client.session.session.request(skill_names.RESOURCES_DIRECTORY_READ, params)
    assert raw["ttlMs"] == 0 and raw["cacheScope"] == "private" and len(raw["resources"]) == 2
