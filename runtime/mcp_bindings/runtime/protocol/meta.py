"""The one `_meta` type every typed client method takes (`meta=`), at every protocol version.

The schemas give each request its own `_meta` class with the same content (an optional
`progressToken` plus any reserved or vendor keys), so a caller would have to import a different
class per method and per version. `Meta` is a plain dict type that fits all of them: the typed
key is checked, other keys pass as they are (the server validates them against its version).
"""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict


class Meta(TypedDict, total=False, extra_items=Any):
    """A request's or notification's `_meta`: `{"progressToken": "p1", "example.com/key": ...}`.

    A progress token set here is sent as is; `ClientRuntime.progress` sets one for you with a
    callback that receives the server's `notifications/progress`."""

    progressToken: str | int
