"""The proxy's HTML: the consent page (server-rendered, every value escaped, no script) and the
error page shown when a request cannot be sent back to a client (unknown client, redirect URI not
registered). Both are sent with headers that keep them out of frames and caches."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from starlette.responses import HTMLResponse

PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
    # same-origin, not no-referrer: under no-referrer a browser posts the consent form with
    # `Origin: null`, which the proxy's Origin check refuses; nothing leaks to other origins either way
    "Referrer-Policy": "same-origin",
}
_STYLE = (
    "body{font:16px system-ui,sans-serif;max-width:34em;margin:3em auto;padding:0 1em}"
    "code{word-break:break-all}button{font-size:1em;margin-right:1em;padding:.4em 1.2em}"
)


def _page(title: str, body: str) -> str:
    return (
        f"<!doctype html><html lang=en><meta charset=utf-8><title>{escape(title)}</title>"
        f"<meta name=viewport content='width=device-width'><style>{_STYLE}</style><body>{body}</body></html>"
    )


def consent_page(
    *,
    action: str,
    transaction: str,
    csrf: str,
    client_name: str | None,
    client_id: str,
    redirect_uri: str,
    scopes: Sequence[str],
    provider: str,
    server: str,
) -> HTMLResponse:
    """The page asking the user whether `client_name` may act for them on `server`; it names the
    client, its id and where the answer goes (the redirect URI)."""
    name = escape(client_name or "An unnamed application")
    scope_items = "".join(f"<li><code>{escape(s)}</code></li>" for s in scopes) or "<li>(no particular scope)</li>"
    body = (
        f"<h1>Allow access?</h1><p><strong id=client-name>{name}</strong> "
        f"(client <code id=client-id>{escape(client_id)}</code>) asks to use <strong>{escape(server)}</strong> "
        f"on your behalf.</p><p>After you sign in with <strong>{escape(provider)}</strong>, you will be sent to "
        f"<code id=redirect-uri>{escape(redirect_uri)}</code>.</p><p>Scopes:</p><ul>{scope_items}</ul>"
        f"<form method=post action='{escape(action)}'>"
        f"<input type=hidden name=transaction value='{escape(transaction)}'>"
        f"<input type=hidden name=csrf value='{escape(csrf)}'>"
        "<button name=decision value=approve>Allow</button><button name=decision value=deny>Deny</button>"
        "</form><p>Only allow applications you started yourself.</p>"
    )
    return HTMLResponse(_page("Allow access?", body), headers=PAGE_HEADERS)


def error_page(status: int, message: str) -> HTMLResponse:
    body = f"<h1>Sign-in cannot continue</h1><p id=error>{escape(message)}</p>"
    return HTMLResponse(_page("Sign-in error", body), status_code=status, headers=PAGE_HEADERS)
