"""The authorization tests' app with per-user visibility (tests/auth/test_access.py): served over HTTP
behind `App(auth=...)` by the tests, and on stdio by `python -m tests.auth.conftest`."""

from __future__ import annotations

from typing import Any

from mcp_bindings.runtime.app import App, Auth, Context, Principal

READ, WRITE, ADMIN = "mcp:read", "mcp:write", "notes:admin"


def in_acme(principal: Principal | None) -> bool:
    """The `allow=` predicate of the tests: a user of acme's (its token's verified `sub` claim)."""
    return principal is not None and str(principal.claims.get("sub", "")).startswith("acme-")


def guarded_app(auth: Auth | None = None, protocol: str | None = None) -> App:
    """Entries for everyone, for mcp:write, for notes:admin, and for acme's callers only."""
    app = App("guarded", auth=auth, protocol=protocol)

    @app.tool
    def notes() -> list[str]:
        return ["first"]

    @app.tool(scopes=[WRITE])
    def add_note(text: str) -> str:
        return f"added {text}"

    @app.tool(allow=in_acme)
    def acme_report() -> str:
        return "acme only"

    @app.tool
    def whoami(ctx: Context) -> dict[str, Any]:
        principal = ctx.principal
        if principal is None:
            return {"nobody": True}
        return {
            "issuer": principal.issuer,
            "subject": principal.subject,
            "client_id": principal.client_id,
            "scopes": sorted(principal.scopes),
            "expires_at": principal.expires_at,
            "jti": principal.claims.get("jti"),
            "key": principal.key,
        }

    @app.resource("notes://public")
    def public() -> str:
        return "public"

    @app.resource("notes://audit", scopes=[ADMIN])
    def audit() -> str:
        return "audit log"

    @app.resource("notes://by/{author}", scopes=[ADMIN])
    def by_author(author: str) -> str:
        return f"notes of {author}"

    @app.resource("notes://acme", allow=in_acme)
    def acme_notes() -> str:
        return "acme's notes"

    @app.prompt(scopes=[WRITE])
    def draft(topic: str) -> str:
        return f"Draft a note on {topic}"

    return app


if __name__ == "__main__":
    guarded_app().run()
