"""Reading typed results in tests: the text of a content block or of resource contents."""

from __future__ import annotations


def text_of(block: object) -> str:
    """The text of a content block (`result.content[0]`), resource contents or prompt message
    content; fails the test, naming what it got, when it has none."""
    value = getattr(block, "text", None)
    assert isinstance(value, str), f"not text: {block!r}"
    return value
