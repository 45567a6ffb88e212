"""Finding tools in a catalog: BM25 over each tool's name, title, description and parameter names
(ranked by `bm25s`, a maintained sparse-matrix BM25 library; this module only says what a tool's
document is and how identifiers split into words), and a regular-expression mode over the same
fields (matched by `regex`, whose matching takes a timeout: a pattern that backtracks without end
is stopped at `MATCH_BUDGET` over the whole catalog, not left to hold the event loop).

An index is made once per catalog (the tools' wire JSON, in the order listed) and kept by whoever
holds the catalog (`discovery.search`); a query reads it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import bm25s

__all__ = ["MAX_PATTERN", "PatternError", "ToolIndex", "fields", "words"]

MAX_PATTERN = 200  # the longest regular expression a search takes (characters)
MATCH_BUDGET = 0.1  # seconds one regular-expression search may spend matching, over the whole catalog
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[_\-./:]+")


class PatternError(ValueError):
    """A regular-expression query that does not compile (or is too long); the message says why."""


def words(text: str) -> str:
    """`listPullRequests`, `list_pull-requests` -> `list pull requests` (identifiers as words)."""
    return _CAMEL.sub(" ", _SEPARATORS.sub(" ", text))


def _parameters(schema: Any) -> list[str]:
    properties = cast("Mapping[str, Any]", schema).get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return []
    out: list[str] = []
    for name, spec in cast("Mapping[str, Any]", properties).items():
        out.append(name)
        described = cast("Mapping[str, Any]", spec).get("description") if isinstance(spec, Mapping) else None
        if isinstance(described, str):
            out.append(described)
    return out


def fields(tool: Mapping[str, Any]) -> list[str]:
    """What a tool is found by, as written: its name, title, description, and its parameters'
    names and descriptions (a regular expression is matched against each)."""
    texts = [str(tool.get("name", ""))]
    texts += [v for v in (tool.get("title"), tool.get("description")) if isinstance(v, str)]
    return texts + _parameters(tool.get("inputSchema"))


def _tokens(texts: Sequence[str]) -> list[list[str]]:
    import bm25s  # the optional `discovery` extra; loaded where a catalog is first searched

    tokens = bm25s.tokenize([words(t) for t in texts], stopwords="en", return_ids=False, show_progress=False)
    return cast("list[list[str]]", tokens)


class ToolIndex:
    """The tools of one catalog (wire JSON, in order) and their BM25 index (made on the first
    ranked search)."""

    __slots__ = ("_bm25", "fields", "tools")

    def __init__(self, tools: Sequence[Mapping[str, Any]]) -> None:
        self.tools = list(tools)
        self.fields = [fields(t) for t in self.tools]
        self._bm25: bm25s.BM25 | None = None

    def _ranker(self) -> bm25s.BM25:
        if self._bm25 is None:
            import bm25s

            ranker = bm25s.BM25()
            ranker.index(_tokens([" ".join([f[0], *f]) for f in self.fields]), show_progress=False)
            self._bm25 = ranker
        return self._bm25

    def ranked(self, query: str, limit: int) -> list[Mapping[str, Any]]:
        """The tools BM25 ranks highest for `query`, best first (those that match no word left out)."""
        if not self.tools or limit < 1:
            return []
        terms = _tokens([query])
        if not terms[0]:
            return []
        ids, scores = self._ranker().retrieve(terms, k=min(limit, len(self.tools)), show_progress=False)
        return [self.tools[int(i)] for i, s in zip(ids[0], scores[0], strict=True) if float(s) > 0]

    def matching(self, pattern: str, limit: int) -> list[Mapping[str, Any]]:
        """The tools whose name, title, description or parameter names `pattern` matches
        (case-insensitive, a search anywhere in each), in catalog order; PatternError for a pattern
        that is too long, does not compile or takes longer than `MATCH_BUDGET` to match."""
        import regex  # the optional `discovery` extra; loaded where a catalog is first matched

        if len(pattern) > MAX_PATTERN:
            raise PatternError(f"the pattern is {len(pattern)} characters long; at most {MAX_PATTERN} are taken")
        try:
            compiled = regex.compile(pattern, regex.IGNORECASE)
        except regex.error as exc:
            raise PatternError(f"not a regular expression: {exc}") from None
        deadline = time.monotonic() + MATCH_BUDGET
        found: list[Mapping[str, Any]] = []
        try:
            for tool, texts in zip(self.tools, self.fields, strict=True):
                if any(compiled.search(text, timeout=max(deadline - time.monotonic(), 0.0)) for text in texts):
                    found.append(tool)
                    if len(found) >= limit:
                        break
        except TimeoutError:
            budget = f"{MATCH_BUDGET * 1000:.0f} ms"
            raise PatternError(f"matching the pattern took longer than {budget}: write a simpler one") from None
        return found
