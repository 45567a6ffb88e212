"""The documentation as the tests read it: the README and every page of the site (docs/**/*.md), and
their code blocks. A snippet is found by a line only it has, wherever it lives, so moving a section
between the README and a page of the site moves no test."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from tests.support import REPO_ROOT

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


@cache
def pages() -> dict[Path, str]:
    """README.md and every page of the site, by path."""
    found = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").rglob("*.md"))]
    return {path: path.read_text(encoding="utf-8") for path in found}


def blocks(language: str = "python", within: Sequence[str] | None = None) -> list[tuple[Path, str]]:
    """(page, code) of every fenced block of `language` ("" for any), of the pages `within` (paths
    relative to the repository; None: all)."""
    chosen = {REPO_ROOT / page for page in within} if within is not None else None
    return [
        (path, code)
        for path, text in pages().items()
        if chosen is None or path in chosen
        for lang, code in FENCE.findall(text)
        if not language or lang == language
    ]


def block(marker: str, within: Sequence[str] | None = None) -> str:
    """The one python block holding `marker` in the pages `within` (None: anywhere); a block shown
    on two pages as the same text counts once."""
    found = sorted({code for _, code in blocks("python", within) if marker in code})
    assert len(found) == 1, f"{len(found)} different python blocks of the docs hold {marker!r}"
    return found[0]


def section(heading: str) -> str:
    """The text from `heading` (a line starting with #) to the end of its page."""
    for text in pages().values():
        match = re.search(rf"^#+ {re.escape(heading)}\n", text, re.M)
        if match:
            return text[match.start() :]
    raise AssertionError(f"no page has the heading {heading!r}")


def console_steps(text: str, fence: str = "console") -> list[tuple[list[str], list[str]]]:
    """The one console block of `text` (a block fenced ```console, or ```FENCE): each `$ ` line's
    words, with the lines shown under it."""
    found = re.findall(rf"```{fence}\n(.*?)```", text, re.S)
    assert len(found) == 1
    steps: list[tuple[list[str], list[str]]] = []
    for line in found[0].splitlines():
        if line.startswith("$ "):
            steps.append((shlex.split(line[2:]), []))
        else:
            steps[-1][1].append(line)
    return steps
