"""The drill's record (`tests/support/drill.py` NEEDS: per change, the files outside generated/ it
needed) is the table of docs/versions.md, "What a new version costs"; and every drill change has its
test module."""

from __future__ import annotations

import re

from tests.fixtures.drill_versions import CHANGES
from tests.support import REPO_ROOT
from tests.support.drill import NEEDS


def _table() -> dict[str, str]:
    text = (REPO_ROOT / "docs" / "versions.md").read_text(encoding="utf-8")
    section = text.split("## What a new version costs", 1)[1]
    rows = re.findall(r"^\| ([a-z])\. .*\| ([^|]+) \|$", section, flags=re.MULTILINE)
    return {change: needed.replace("`", "").strip() for change, needed in rows}


def test_the_docs_table_is_the_drills_record() -> None:
    table = _table()
    assert set(table) == set(NEEDS) == set(CHANGES)
    for change, needed in NEEDS.items():
        assert table[change] == ("; ".join(needed) or "none"), change


def test_every_change_has_its_drill_module() -> None:
    modules = {
        path.name[len("test_drill_") :][0] for path in (REPO_ROOT / "tests" / "versions").glob("test_drill_?_*.py")
    }
    assert modules == set(CHANGES)
