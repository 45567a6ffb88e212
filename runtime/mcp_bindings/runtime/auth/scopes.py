"""Which scopes an authorization asks for (MCP authorization spec, scope selection and step-up)."""

from __future__ import annotations

from collections.abc import Sequence

from mcp_bindings.runtime.auth.challenge import Challenge
from mcp_bindings.runtime.auth.discovery import Discovery

OFFLINE_ACCESS = "offline_access"


def select_scope(
    found: Discovery,
    challenge: Challenge | None,
    previous: str | None,
    *,
    configured: str | None,
    offline_access: bool,
    step_up: bool = False,
) -> str | None:
    """The scope to ask for: the configured one (except on step-up), else the challenge's, else the
    resource's `scopes_supported`, else none; united with what was asked before, plus
    `offline_access` where the authorization server offers it and the refresh_token grant."""
    if configured is not None and not step_up:
        base = configured.split()
    elif challenge is not None and challenge.scopes:
        base = challenge.scopes  # authoritative for the current request
    elif found.protected_resource is not None and found.protected_resource.scopes_supported:
        base = list(found.protected_resource.scopes_supported)
    else:
        base = []
    scopes = _union((previous or "").split(), base)
    metadata = found.metadata
    if (
        offline_access
        and scopes
        and OFFLINE_ACCESS not in scopes
        and OFFLINE_ACCESS in (metadata.scopes_supported or ())
        and metadata.supports_grant("refresh_token")
    ):
        scopes.append(OFFLINE_ACCESS)
    return " ".join(scopes) or None


def _union(*scope_lists: Sequence[str]) -> list[str]:
    seen: list[str] = []
    for scopes in scope_lists:
        for scope in scopes:
            if scope and scope not in seen:
                seen.append(scope)
    return seen
