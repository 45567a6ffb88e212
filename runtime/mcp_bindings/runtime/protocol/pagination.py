"""Cursor pagination for servers that page a list (`tools/list`, `resources/list`, `prompts/list`, ...),
and for clients that read every page of one (`every_page`).

    page, next_cursor = paginate(ALL_TOOLS, params.cursor if params else None, 50, scope="tools")
    return m.ListToolsResult(tools=page, next_cursor=next_cursor)

Cursors are opaque to the client (url-safe base64 of a small JSON object) and carry the offset
and a `scope`, so a cursor issued for one list is refused by another. A cursor this helper did not
issue is answered with -32602 whose `data` names `params.cursor`. The cursor is not signed: a client
that forges one can only ask for a different page of a list it may already read.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import orjson

from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError
from mcp_bindings.runtime.rpc.jsonrpc import as_object

T = TypeVar("T")


def encode_cursor(offset: int, scope: str = "") -> str:
    payload = orjson.dumps({"o": offset, "s": scope})
    return base64.urlsafe_b64encode(payload).rstrip(b"=").decode("ascii")


def decode_cursor(cursor: str, scope: str = "") -> int:
    """The offset a cursor stands for; -32602 when it is not one of ours (or not for `scope`)."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = as_object(orjson.loads(raw))
    except (binascii.Error, ValueError, TypeError):
        data = None
    offset = data.get("o") if data is not None else None
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0 or data is None or data.get("s") != scope:
        raise invalid_cursor(cursor)
    return offset


def invalid_cursor(cursor: object) -> McpError:
    return McpError(
        INVALID_PARAMS,
        "Invalid params: params.cursor is not a cursor this server issued",
        {
            "errors": [{"path": "params.cursor", "message": "invalid cursor", "type": "invalid_cursor"}],
            "cursor": cursor,
        },
    )


def paginate(items: Sequence[T], cursor: str | None, page_size: int, *, scope: str = "") -> tuple[list[T], str | None]:
    """One page of `items` starting at `cursor` (None: the first page) and the cursor of the next
    page (None on the last one). An offset past the end (the list shrank) yields an empty last page."""
    if page_size < 1:
        raise ValueError("page_size must be at least 1")
    offset = 0 if cursor is None else decode_cursor(cursor, scope)
    end = offset + page_size
    page = list(items[offset:end])
    return page, (encode_cursor(end, scope) if end < len(items) else None)


async def every_page(page: Callable[[str | None], Awaitable[Any]], field: str, max_pages: int = 10_000) -> list[Any]:
    """The items (each result's `field`) of every page of a paginated list: `await page(cursor)` from
    the first (cursor None) until a result has no `next_cursor`, at most `max_pages` pages (bounded: a
    server that pages for ever is not followed for ever)."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(max_pages):
        result = await page(cursor)
        items += getattr(result, field)
        cursor = getattr(result, "next_cursor", None)
        if not cursor:
            break
    return items
