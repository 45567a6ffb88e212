"""The MCP Apps proof in a real browser: examples/app_ui_server.py over Streamable HTTP; a host page
(tests/peers/apps_browser/) whose TypeScript SDK v2 client reads the counter tool's UI resource and
loads it into a sandboxed iframe through the official `AppBridge` of @modelcontextprotocol/ext-apps
2.0.4; the view (the official `App` class of the same package) calls the app-only `increment` tool
through the bridge and tells the host the new value. Headless Debian chromium drives the page; the
test reads the host page's DOM and saves a screenshot to .cache/artifacts/apps-browser.png."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import pytest

from examples.app_ui_server import make_app
from tests.support import REPO_ROOT
from tests.support.browser import ARTIFACTS, Browser, bundle, chromium_path, ensure_packages
from tests.support.http import serve_in_thread

pytestmark = [pytest.mark.interop, pytest.mark.slow]

PAGES = REPO_ROOT / "tests" / "peers" / "apps_browser"
ASGI = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]
]


def with_host_page(mcp: ASGI, files: dict[str, tuple[bytes, str]]) -> ASGI:
    """The MCP app, plus the host page's files at their paths (same origin: no CORS in the way)."""

    async def app(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        found = files.get(scope.get("path", "")) if scope["type"] == "http" else None
        if found is None:
            await mcp(scope, receive, send)
            return
        body, kind = found
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind.encode())]})
        await send({"type": "http.response.body", "body": body})

    return app


def test_the_official_app_bridge_runs_the_view_and_the_view_calls_the_server(tmp_path: Path) -> None:
    chromium = chromium_path()
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium; .ci/run does)")
    ensure_packages()
    host_js = bundle(PAGES / "host.js", tmp_path / "host.js")
    view_js = bundle(PAGES / "view.js", tmp_path / "view.js")
    server = make_app(view_js)
    files = {
        "/host.html": ((PAGES / "host.html").read_bytes(), "text/html; charset=utf-8"),
        "/host.js": (host_js.read_bytes(), "text/javascript"),
    }
    with serve_in_thread(with_host_page(server.asgi(), files)) as url:
        browser = Browser(chromium, tmp_path / "profile")
        try:
            browser.open(f"{url}/host.html")
            log = browser.wait_for(
                "(() => { const l = document.getElementById('log');"
                " return l && /message|error/.test([...l.children].map(c => c.id).join(' ')) ? l.innerText : ''; })()"
            )
            shot = browser.screenshot(ARTIFACTS / "apps-browser.png")
            items = browser.evaluate(
                "Object.fromEntries([...document.querySelectorAll('#log li')].map(li => [li.id, li.textContent]))"
            )
        finally:
            browser.close()
    assert log, "the host page wrote nothing: the view never finished"
    assert "error" not in items, items["error"]
    assert items["tools"] == "counter:model+app increment:app"
    assert items["resource"] == "ui://counter/view text/html;profile=mcp-app"
    assert items["initialized"] == "view initialized"
    assert items["call-counter"] == '{"value":41}'
    assert items["call-increment"] == '{"value":42}'  # the view called the app-only tool through the bridge
    assert items["message"] == "counter is 42"  # and shows the new value, which it sent with ui/message
    assert shot.stat().st_size > 1000
