"""A served skills folder under attack (security issue 43, item 7): a file or folder swapped for a
symlink between the path check and the read must never be served from outside the root; listing a
large file must not hold up the server's other requests (nor be read again while unchanged); a URI
no file could have (a NUL byte, an over-long name) is -32602 naming `params.uri`, with no traceback
and none of the server's paths."""

from __future__ import annotations

import logging
import os
import shutil
import sys
import threading
from collections import Counter
from pathlib import Path

import anyio
import pytest

from examples.skills_server import SKILLS, make_app
from mcp_bindings.runtime.client.skills import get_skill, list_skills, read_directory
from mcp_bindings.runtime.protocol import skill_files
from mcp_bindings.runtime.rpc.errors import McpError
from tests.support import REPO_ROOT

pytestmark = pytest.mark.anyio

SECRET = "the secret outside the skills folder\n"
READS = 3000  # the probe leaked 63 of 3,000 reads


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    shutil.copytree(SKILLS, root)
    return root


class Swapper:
    """A thread turning `path` (a file or a folder) into a symlink to `outside` and back, as fast as
    it can, until stopped (at most `rounds` times). A file is swapped by one atomic rename each way,
    so it is always there, a regular file or a symlink."""

    def __init__(self, path: Path, outside: Path, rounds: int = 1_000_000) -> None:
        self.path, self.outside, self.rounds = path, outside, rounds
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        spare, kept = self.path.with_name("swap.spare"), self.path.with_name("swap.kept")
        folder = self.path.is_dir()
        for _ in range(self.rounds):
            if self.stop.is_set():
                return
            spare.symlink_to(self.outside)
            if folder:
                os.rename(self.path, kept)
            os.replace(spare, self.path)  # now a symlink out of the root
            if folder:
                os.unlink(self.path)
                os.rename(kept, self.path)
            else:
                spare.write_text("inside\n")
                os.replace(spare, self.path)  # a regular file again

    def __enter__(self) -> Swapper:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join(10)


async def _read_under_swaps(root: Path, uri: str, reads: int, directory: str | None = None) -> Counter[str]:
    """`reads` reads of `uri` (and, given `directory`, reads of that directory) from a stdio server
    of `root` in another process, as the probe did: what each answered ("refused": not found)."""
    from mcp_bindings.runtime.stdio import connect_stdio
    from mcp_bindings.v2025_11_25.client import Client

    answers: Counter[str] = Counter()
    server = [sys.executable, str(REPO_ROOT / "examples" / "skills_server.py"), "--directory", str(root)]
    async with connect_stdio(server, Client, protocol_version="2025-11-25") as client:
        for _ in range(reads):
            try:
                read = await client.read_resource(uri=uri)
                answers[getattr(read.contents[0], "text", "")] += 1
            except McpError as exc:  # a symlink, or a folder away, at the moment of the read: -32002
                answers["refused" if exc.code == -32002 else f"error {exc.code}"] += 1
            if directory is not None:
                try:
                    children = await read_directory(client, directory)
                    answers["listed"] += any(c.name == "notes.md" for c in children)
                except McpError as exc:  # not a directory at that moment: -32602
                    answers["not listed" if exc.code == -32602 else f"error {exc.code}"] += 1
        entries = [await get_skill(client, "skill://git-workflow/SKILL.md") for _ in range(20)]
    digests = {r.digest for e in entries if not isinstance(e.resources, str) for r in e.resources}
    answers["digest of the secret"] = skill_files.digest(SECRET.encode()) in digests
    return answers


@pytest.mark.slow
def test_a_file_swapped_for_a_symlink_is_never_served_from_outside(skills_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text(SECRET)
    notes = skills_dir / "git-workflow" / "notes.md"
    notes.write_text("inside\n")
    with Swapper(notes, outside):
        answers = anyio.run(_read_under_swaps, skills_dir, "skill://git-workflow/notes.md", READS)
    assert answers[SECRET] == 0, f"served from outside the root {answers[SECRET]} of {READS} times: {answers}"
    assert answers["inside\n"] > 0 and not answers["digest of the secret"], answers
    assert not [a for a in answers if a.startswith("error")], answers


@pytest.mark.slow
def test_a_folder_swapped_for_a_symlink_is_never_followed(skills_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "notes.md").write_text(SECRET)
    folder = skills_dir / "git-workflow" / "refs"
    folder.mkdir()
    (folder / "notes.md").write_text("inside\n")
    with Swapper(folder, outside):
        answers = anyio.run(
            _read_under_swaps, skills_dir, "skill://git-workflow/refs/notes.md", READS // 2, "skill://git-workflow/refs"
        )
    assert answers[SECRET] == 0, f"served from outside the root {answers[SECRET]} of {READS // 2} times: {answers}"
    assert answers["inside\n"] > 0 and answers["listed"] > 0 and not answers["digest of the secret"], answers
    assert not [a for a in answers if a.startswith("error")], answers


async def _order(server: list[str]) -> list[str]:
    """Four skills/list and then a ping, sent at once to a stdio server: the order of the answers."""
    from mcp_bindings.runtime.stdio import connect_stdio
    from mcp_bindings.v2025_11_25.client import Client

    answered: list[str] = []
    async with connect_stdio(server, Client, protocol_version="2025-11-25") as client:
        await list_skills(client)  # started, and the folder listed once

        async def listing() -> None:
            await list_skills(client)
            answered.append("list")

        async def ping() -> None:
            await client.ping()
            answered.append("ping")

        big = Path(server[-1]) / "git-workflow" / "big.bin"
        with big.open("wb") as out:  # sparse: a large file that takes no disk
            out.truncate(256 * 1024 * 1024)
        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(listing)
            group.start_soon(ping)
    return answered


def test_listing_a_large_file_does_not_hold_up_a_ping(skills_dir: Path) -> None:
    """The ping, sent behind four listings of a folder holding a 256 MiB file, is answered before the
    first of them: the file is hashed in a worker thread, not on the event loop (before: the ping was
    answered last, after every listing)."""
    server = [sys.executable, str(REPO_ROOT / "examples" / "skills_server.py"), "--directory", str(skills_dir)]
    answered = anyio.run(_order, server)
    assert answered[0] == "ping", answered


async def test_an_unchanged_file_is_hashed_once(skills_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hashed: list[int] = []
    real = skill_files._hash  # pyright: ignore[reportPrivateUsage]

    def counting(fd: int) -> str:
        hashed.append(os.fstat(fd).st_size)
        return real(fd)

    monkeypatch.setattr(skill_files, "_hash", counting)
    big = skills_dir / "git-workflow" / "big.bin"
    big.write_bytes(b"x" * (3 * skill_files.CHUNK + 5))
    async with make_app(skills_dir).test_client("2026-07-28") as client:
        hashed.clear()
        first = {s.uri: s for s in await list_skills(client)}
        again = {s.uri: s for s in await list_skills(client)}
        assert hashed == []  # every file hashed when the app was defined, none since
        assert first == again
        big.write_bytes(b"y" * 10)
        changed = await get_skill(client, "skill://git-workflow/SKILL.md")
    assert hashed == [10]
    assert not isinstance(changed.resources, str)
    assert [r.size for r in changed.resources if r.uri.endswith("big.bin")] == [10]


async def test_a_read_is_bounded(skills_dir: Path) -> None:
    from mcp_bindings.runtime.app import App

    bounded = App("bounded")
    bounded.skills(skills_dir, max_file_bytes=1024, watch=False)
    (skills_dir / "git-workflow" / "big.txt").write_text("x" * 1025)
    async with bounded.test_client("2026-07-28") as client:
        with pytest.raises(McpError) as refused:
            await client.read_resource(uri="skill://git-workflow/big.txt")
        small = await client.read_resource(uri="skill://git-workflow/SKILL.md")
    assert refused.value.code == -32602
    assert refused.value.message == (
        "skill://git-workflow/big.txt is 1025 bytes, over the 1024 bytes this server reads for a client"
    )
    assert "name: git-workflow" in getattr(small.contents[0], "text", "")


@pytest.mark.parametrize(
    ("uri", "says"),
    [
        ("skill://git-workflow/SKILL.md\x00", "holds a NUL byte (no file name can)"),
        ("skill://git-workflow/a\x00b/c.md", "holds a NUL byte (no file name can)"),
        ("skill://git-workflow/" + "a" * 300, "has a path segment longer than 255 bytes (no file name can be)"),
        ("skill://" + "a/" * 3000 + "x.md", "is longer than 4096 characters"),
    ],
    ids=["nul", "nul-inside", "long-segment", "long-uri"],
)
async def test_a_uri_no_file_could_have_is_invalid_params(
    skills_dir: Path, uri: str, says: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with make_app(skills_dir).test_client("2026-07-28") as client:
        errors: list[McpError] = []
        for ask in (
            lambda: client.read_resource(uri=uri),
            lambda: get_skill(client, uri),
            lambda: read_directory(client, uri),
        ):
            with pytest.raises(McpError) as refused:
                await ask()
            errors.append(refused.value)
    for error in errors:
        assert (error.code, error.message) == (-32602, f"Invalid params: params.uri: {says}")
        assert str(skills_dir.parent) not in f"{error.message} {error.data}"
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    assert "Traceback" not in caplog.text and str(skills_dir.parent) not in caplog.text
