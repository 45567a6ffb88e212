"""docs/discovery.md's example runs as written and prints what the page says it prints."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.support import REPO_ROOT
from tests.support.docs import block

PAGE = ["docs/discovery.md"]


def test_the_discovery_example_prints_what_the_page_says() -> None:
    code = block('app = App("warehouse", version="1.0", extensions=[ToolSearch(pinned=["ping"])])', PAGE)
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    text = (REPO_ROOT / "docs" / "discovery.md").read_text(encoding="utf-8")
    printed = re.search(r"^prints\n\n```\n(.*?)```", text, re.S | re.M)
    assert printed is not None
    assert done.stdout == printed.group(1)
