"""docs/discovery.md's examples run as written and print what the page says they print."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.support import REPO_ROOT
from tests.support.docs import block

PAGE = ["docs/discovery.md"]


@pytest.mark.parametrize(
    ("marker", "index"),
    [
        ('app = App("warehouse", version="1.0", extensions=[ToolSearch(pinned=["ping"])])', 0),
        ('app = App("back-office", version="1.0", extensions=[Groups(groups)])', 1),
        ('app = App("warehouse", version="1.0", extensions=[ToolSearch()])', 2),
    ],
)
def test_each_discovery_example_prints_what_the_page_says(marker: str, index: int) -> None:
    code = block(marker, PAGE)
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    text = (REPO_ROOT / "docs" / "discovery.md").read_text(encoding="utf-8")
    printed = re.findall(r"^prints\n\n```\n(.*?)```", text, re.S | re.M)
    assert len(printed) == 3
    assert done.stdout == printed[index]
