"""`runtime/protocol/pagination.py`: opaque cursors, pages, and -32602 for a cursor the server did not issue."""

from __future__ import annotations

import base64

import orjson
import pytest

from mcp_bindings.runtime.protocol.pagination import decode_cursor, encode_cursor, paginate
from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError

ITEMS = list(range(25))


def test_walks_every_page_once() -> None:
    seen: list[int] = []
    cursor = None
    pages = 0
    while True:
        page, cursor = paginate(ITEMS, cursor, 10, scope="tools")
        seen += page
        pages += 1
        if cursor is None:
            break
    assert seen == ITEMS and pages == 3


@pytest.mark.parametrize(("count", "pages"), [(0, 1), (1, 1), (10, 1), (11, 2), (20, 2)])
def test_page_counts(count: int, pages: int) -> None:
    items = list(range(count))
    cursor, walked, got = None, 0, []
    while True:
        page, cursor = paginate(items, cursor, 10)
        got += page
        walked += 1
        if cursor is None:
            break
    assert walked == pages and got == items


def test_cursor_is_opaque_and_scoped() -> None:
    cursor = encode_cursor(10, "resources")
    assert "10" not in cursor and "=" not in cursor
    assert decode_cursor(cursor, "resources") == 10
    with pytest.raises(McpError) as caught:
        decode_cursor(cursor, "prompts")
    assert caught.value.code == INVALID_PARAMS


def _raw(payload: object) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(payload)).rstrip(b"=").decode()


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "garbage",
        "!!!",
        "eyJ",
        _raw([1]),
        _raw({"o": -1, "s": ""}),
        _raw({"o": "1", "s": ""}),
        _raw({"o": True, "s": ""}),
        _raw({"s": ""}),
        _raw({"o": 1}),
        _raw(None),
        "ünïcode",
    ],
)
def test_bad_cursors_are_invalid_params(cursor: str) -> None:
    with pytest.raises(McpError) as caught:
        paginate(ITEMS, cursor, 10)
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.data["errors"][0]["path"] == "params.cursor"


def test_offset_past_the_end_is_an_empty_last_page() -> None:
    assert paginate(ITEMS[:5], encode_cursor(20), 10) == ([], None)


def test_page_size_must_be_positive() -> None:
    with pytest.raises(ValueError):
        paginate(ITEMS, None, 0)
