"""How a tool's failure is seen: by its yield dependencies (correctness issue 44, item 2: a
commit-or-rollback dependency must roll back when the call fails, as FastAPI, FastMCP and
`contextlib` have it) and by the client (security issue 43, item 4: an unexpected exception's text
can hold data the client and the model must not see; it stays in the server's log unless the app
asks for details). The database is a real one: sqlite3, in a file."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Annotated

import pytest

from mcp_bindings.runtime.app import App, Depends, ToolError
from tests.support.content import text_of

pytestmark = pytest.mark.anyio

VERSIONS = ["2025-11-25", "2026-07-28"]
CARD = "4111-1111-1111-1111"


def _sync_session(path: Path) -> Callable[[], Iterator[sqlite3.Connection]]:
    def session() -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(path)
        try:
            yield conn
            conn.commit()
        except BaseException:
            conn.rollback()
            raise
        finally:
            conn.close()

    return session


def _async_session(path: Path) -> Callable[[], AsyncIterator[sqlite3.Connection]]:
    async def session() -> AsyncIterator[sqlite3.Connection]:
        conn = sqlite3.connect(path)
        try:
            yield conn
            conn.commit()
        except BaseException:
            conn.rollback()
            raise
        finally:
            conn.close()

    return session


def notes_app(path: Path, *, asynchronous: bool = False, error_details: bool = False) -> App:
    """A tool that writes a note, then fails as its argument says, inside a transaction that its
    dependency commits on success and rolls back on failure."""
    app = App("notes", error_details=error_details)
    session = _async_session(path) if asynchronous else _sync_session(path)

    @app.tool
    def write(text: str, fail: str, db: Annotated[sqlite3.Connection, Depends(session)]) -> str:
        db.execute("insert into notes (text) values (?)", (text,))
        if fail == "tool":
            raise ToolError("the note is refused")
        if fail == "bug":
            raise RuntimeError(f"database refused the write for card {CARD}")
        return "written"

    return app


def _notes(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [row[0] for row in conn.execute("select text from notes order by rowid")]


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "notes.db"
    with sqlite3.connect(path) as conn:
        conn.execute("create table notes (text text)")
    return path


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("version", VERSIONS)
async def test_a_failed_call_rolls_its_dependency_back(database: Path, version: str, asynchronous: bool) -> None:
    app = notes_app(database, asynchronous=asynchronous)
    async with app.test_client(version) as client:
        kept = await client.call_tool(name="write", arguments={"text": "kept", "fail": "no"})
        refused = await client.call_tool(name="write", arguments={"text": "refused", "fail": "tool"})
        crashed = await client.call_tool(name="write", arguments={"text": "crashed", "fail": "bug"})
    assert text_of(kept.content[0]) == "written" and refused.is_error and crashed.is_error
    assert _notes(database) == ["kept"]  # the failed calls' writes were rolled back


@pytest.mark.parametrize("version", VERSIONS)
async def test_an_unexpected_exception_keeps_its_text_in_the_log(
    database: Path, version: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="mcp_bindings")
    async with notes_app(database).test_client(version) as client:
        crashed = await client.call_tool(name="write", arguments={"text": "x", "fail": "bug"})
    told = text_of(crashed.content[0])
    assert crashed.is_error and CARD not in told and "RuntimeError" not in told
    assert told == "Error executing tool write (an unexpected error; the server's log has the details)"
    logged = [r for r in caplog.records if r.exc_info]
    assert logged and CARD in str(logged[0].exc_info[1])  # type: ignore[index]


async def test_error_details_are_sent_when_the_app_asks(database: Path) -> None:
    async with notes_app(database, error_details=True).test_client("2025-11-25") as client:
        crashed = await client.call_tool(name="write", arguments={"text": "x", "fail": "bug"})
        refused = await client.call_tool(name="write", arguments={"text": "x", "fail": "tool"})
    assert (
        text_of(crashed.content[0])
        == f"Error executing tool write: RuntimeError: database refused the write for card {CARD}"
    )
    assert text_of(refused.content[0]) == "the note is refused"  # a ToolError is always the client's to read
