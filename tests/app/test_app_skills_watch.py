"""A served skills directory is watched while the app serves (issue 31): a skill added, removed,
broken or edited on disk is followed by the `SKILL.md` resources and `skills/list`, and the clients
are told (`notifications/resources/list_changed`; `notifications/resources/updated` to those
subscribed to a changed file), on the session (2025-11-25) and on a `subscriptions/listen` stream
(2026-07-28). The official SDK's client over stdio: tests/interop/test_skills_watch_sdk.py."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from examples.skills_server import SKILLS, make_app
from mcp_bindings.runtime.app import App, AppDefinitionError
from mcp_bindings.runtime.app import skills as app_skills
from mcp_bindings.runtime.client.skills import list_skills

pytestmark = pytest.mark.anyio

WAIT = 10  # seconds a change may take to be told (it takes about 0.1 s)
LIST_CHANGED = "notifications/resources/list_changed"
UPDATED = "notifications/resources/updated"
NEW = "skill://release-notes/SKILL.md"


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    shutil.copytree(SKILLS, root)
    return root


def add_skill(root: Path, name: str = "release-notes", description: str = "Write the release notes") -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n\nBody.\n")
    return folder


async def until(seen: list[tuple[str, Any]], predicate: Callable[[tuple[str, Any]], bool]) -> tuple[str, Any]:
    with anyio.fail_after(WAIT):
        while True:
            for each in seen:
                if predicate(each):
                    seen.remove(each)
                    return each
            await anyio.sleep(0.02)


async def resource_uris(client: Any) -> list[str]:
    return sorted(r.uri for r in (await client.list_resources()).resources)


async def test_added_edited_broken_and_removed_skills_are_told_at_2025_11_25(skills_dir: Path) -> None:
    seen: list[tuple[str, Any]] = []
    app = make_app(skills_dir)
    async with app.test_client("2025-11-25", on_notification=lambda m, p: seen.append((m, p))) as client:
        assert NEW not in await resource_uris(client)
        folder = add_skill(skills_dir)
        await until(seen, lambda n: n[0] == LIST_CHANGED)
        assert NEW in await resource_uris(client)
        assert NEW in {s.uri for s in await list_skills(client)}

        await client.subscribe_resource(uri=NEW)
        (folder / "SKILL.md").write_text("---\nname: release-notes\ndescription: Write them well\n---\n\nMore.\n")
        _, params = await until(seen, lambda n: n[0] == UPDATED)
        assert params["uri"] == NEW
        await until(seen, lambda n: n[0] == LIST_CHANGED)  # the entry's digest and description changed
        listed = {r.uri: r for r in (await client.list_resources()).resources}
        assert listed[NEW].description == "Write them well"

        (folder / "SKILL.md").write_text("---\nname: release-notes\n---\n\nNo description.\n")  # broken
        await until(seen, lambda n: n[0] == LIST_CHANGED)
        assert NEW not in await resource_uris(client)
        assert NEW not in {s.uri for s in await list_skills(client)}

        shutil.rmtree(skills_dir / "git-workflow")
        await until(seen, lambda n: n[0] == LIST_CHANGED)
        assert await resource_uris(client) == [
            "skill://acme/billing/refunds/SKILL.md",
            "skill://pdf-processing/SKILL.md",
            "skill://reports/daily/SKILL.md",
        ]


async def test_a_supporting_file_changes_the_listing_and_is_told(skills_dir: Path) -> None:
    seen: list[tuple[str, Any]] = []
    async with make_app(skills_dir).test_client("2025-11-25", on_notification=lambda m, p: seen.append((m, p))) as c:
        before = {s.uri: s for s in await list_skills(c)}["skill://git-workflow/SKILL.md"]
        (skills_dir / "git-workflow" / "CHEATSHEET.md").write_text("git switch -c topic\n")
        await until(seen, lambda n: n[0] == LIST_CHANGED)
        after = {s.uri: s for s in await list_skills(c)}["skill://git-workflow/SKILL.md"]
        assert isinstance(before.resources, list) and isinstance(after.resources, list)
        added = {r.uri for r in after.resources} - {r.uri for r in before.resources}
        assert added == {"skill://git-workflow/CHEATSHEET.md"}


async def test_a_listen_stream_hears_of_a_new_skill_at_2026_07_28(skills_dir: Path) -> None:
    async with make_app(skills_dir).test_client("2026-07-28") as client:
        async with client.listen({"resourcesListChanged": True}) as stream:
            add_skill(skills_dir)
            with anyio.fail_after(WAIT):
                notification = await anext(aiter(stream))
        assert notification.method == LIST_CHANGED
        assert NEW in await resource_uris(client)


async def test_the_watch_stops_with_the_app_and_starts_again(skills_dir: Path) -> None:
    app = make_app(skills_dir)
    async with app.test_client("2025-11-25") as client:
        assert NEW not in await resource_uris(client)
    add_skill(skills_dir)  # while nothing serves: seen when serving starts again
    seen: list[tuple[str, Any]] = []
    async with app.test_client("2025-11-25", on_notification=lambda m, p: seen.append((m, p))) as client:
        with anyio.fail_after(WAIT):
            while NEW not in await resource_uris(client):
                await anyio.sleep(0.02)
        shutil.rmtree(skills_dir / "release-notes")
        with anyio.fail_after(WAIT):  # (the start-up's own change may be told too: the listing decides)
            while NEW in await resource_uris(client):
                await anyio.sleep(0.02)
        await until(seen, lambda n: n[0] == LIST_CHANGED)


async def test_without_file_events_the_folder_is_polled(
    skills_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import watchfiles

    real = watchfiles.awatch

    def no_file_events(*paths: Any, force_polling: bool | None = None, **options: Any) -> Any:
        if not force_polling:  # as where the system's limit of inotify watches is reached
            raise OSError("OS file watch limit reached")
        return real(*paths, force_polling=force_polling, **options)

    monkeypatch.setattr(watchfiles, "awatch", no_file_events)
    seen: list[tuple[str, Any]] = []
    async with make_app(skills_dir).test_client("2025-11-25", on_notification=lambda m, p: seen.append((m, p))) as c:
        add_skill(skills_dir)
        await until(seen, lambda n: n[0] == LIST_CHANGED)
        assert NEW in await resource_uris(c)
    assert "no file events for" in caplog.text and "polling it every 300 ms" in caplog.text


def test_watching_without_watchfiles_is_a_clear_error(skills_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_skills, "can_watch", lambda: False)
    with pytest.raises(AppDefinitionError, match=r"needs watchfiles: pip install 'mcp-bindgen\[skills\]'"):
        App("skills").skills(skills_dir)
    App("skills").skills(skills_dir, watch=False)  # served as it is, not followed
