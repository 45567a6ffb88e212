"""Who a request speaks for: the typed `Principal` a handler reads (`ctx.principal`, middleware's
`call.principal`), and its stable key.

A transport that authenticates (HTTP bearer auth, `auth.resource_server`) hands the runtime the
principal's key, a `PrincipalKey`: a `str`, the JSON array `["issuer","subject","client_id"]`, which
is what the runtime binds per-principal state to (an HTTP session, a task's requester, sealed
`requestState`, per-client bounds) because it stays the same across the tokens of one user and
client (refreshed, stepped up). The key carries the `Principal` of the request's token (its scopes,
expiry and verified claims), which `principal_of` reads back; a plain string key (a test's, a record
from another worker) reads as a `Principal` with that key's issuer, subject and client id only.

Here rather than in `auth/`: the server and authoring layers read it without the OAuth extras.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, cast

__all__ = ["Principal", "PrincipalKey", "principal_of"]


def _key(issuer: str | None, subject: str | None, client_id: str | None) -> str:
    return json.dumps([issuer, subject, client_id], separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request's access token speaks for, as verified: its `issuer`, `subject` (the user, or the
    client itself for a machine grant), `client_id`, granted `scopes` (with those a granted one
    implies, `scope_hierarchy`), `expires_at` (seconds since the epoch; None: the token named none)
    and every verified `claims` (read-only). Immutable; equal when all but the claims are."""

    issuer: str | None = None
    subject: str | None = None
    client_id: str | None = None
    scopes: frozenset[str] = frozenset()
    expires_at: float | None = None
    claims: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}), compare=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.scopes, str):
            raise ValueError(f"Principal(scopes={self.scopes!r}) is one string; give a collection of scopes")
        object.__setattr__(self, "scopes", frozenset(self.scopes))
        if not isinstance(self.claims, MappingProxyType):
            object.__setattr__(self, "claims", MappingProxyType(dict(self.claims)))

    @property
    def key(self) -> str:
        """The stable key of who this is (issuer, subject, client id as a JSON array): the string
        `ctx.principal` was before it was typed, and what sessions and tasks are bound to."""
        return _key(self.issuer, self.subject, self.client_id)

    def missing(self, scopes: Collection[str]) -> tuple[str, ...]:
        """The scopes of `scopes` this principal was not granted, in their order."""
        return tuple(s for s in scopes if s not in self.scopes)

    def has(self, *scopes: str) -> bool:
        """Whether it was granted every one of `scopes`."""
        return not self.missing(scopes)


class PrincipalKey(str):
    """A principal's key (`Principal.key`), as transports carry it, holding the `Principal` it was
    made from (`principal`). Compared, hashed and stored as the plain string it is."""

    principal: Principal

    def __new__(cls, principal: Principal) -> PrincipalKey:
        key = super().__new__(cls, principal.key)
        object.__setattr__(key, "principal", principal)
        return key

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a PrincipalKey is immutable (cannot set {name!r})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (str, (str(self),))  # pickled / copied as its key alone


def principal_of(value: object) -> Principal | None:
    """The typed principal a context holds: a `PrincipalKey`'s, a `Principal` itself, a plain key
    read back (issuer, subject and client id of a JSON array; any other string is the subject);
    None for nobody."""
    if isinstance(value, PrincipalKey):
        return value.principal
    if isinstance(value, Principal):
        return value
    if not isinstance(value, str):
        return None
    try:
        parts = json.loads(value)
    except ValueError:
        parts = None
    if isinstance(parts, list) and len(cast("list[Any]", parts)) == 3:
        fields = [p if isinstance(p, str) else None for p in cast("list[Any]", parts)]
        if _key(*fields) == value:
            return Principal(fields[0], fields[1], fields[2])
    return _Keyed(subject=value, literal=value)


@dataclass(frozen=True, slots=True)
class _Keyed(Principal):
    """A principal known by a key that is not an issuer-subject-client array (a test's "alice"):
    its subject, and that key kept as its `key`."""

    literal: str = ""

    @property
    def key(self) -> str:
        return self.literal
