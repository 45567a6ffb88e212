"""Upstream providers in a few words: `oidc(issuer, ...)` for any OpenID Connect provider (its
endpoints read from its discovery document). Settings default to environment variables
(`MCP_OAUTH_CLIENT_ID`, `MCP_OAUTH_CLIENT_SECRET`) so that no secret is written in the code."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from mcp_bindings.runtime.auth.proxy.upstream import Upstream

CLIENT_ID_ENV = "MCP_OAUTH_CLIENT_ID"
CLIENT_SECRET_ENV = "MCP_OAUTH_CLIENT_SECRET"


def _credentials(client_id: str | None, client_secret: str | None) -> tuple[str, str]:
    found = (client_id or os.environ.get(CLIENT_ID_ENV, ""), client_secret or os.environ.get(CLIENT_SECRET_ENV, ""))
    if not found[0] or not found[1]:
        raise ValueError(
            f"the upstream provider's client: pass client_id= and client_secret=, or set {CLIENT_ID_ENV} "
            f"and {CLIENT_SECRET_ENV}"
        )
    return found


def oidc(
    issuer: str,
    *,
    client_id: str | None = None,
    client_secret: str | None = None,
    scopes: Sequence[str] = ("openid", "email", "profile"),
    params: Mapping[str, str] | None = None,
    name: str | None = None,
) -> Upstream:
    """Any OpenID Connect provider by its issuer (discovery at `<issuer>/.well-known/openid-configuration`)."""
    client_id, client_secret = _credentials(client_id, client_secret)
    return Upstream(client_id, client_secret, issuer=issuer, scopes=tuple(scopes), params=dict(params or {}), name=name)
