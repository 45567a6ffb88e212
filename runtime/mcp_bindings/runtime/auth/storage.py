"""Where the OAuth client keeps client registrations and tokens.

Client credentials are keyed by the authorization server's `issuer` (they are only ever used with the
issuer that issued them: SEP-2352 "Authorization Server Binding"); tokens are keyed by the MCP server
(the canonical server URL) and record the issuer that issued them, so tokens of an authorization server
the resource no longer names are dropped instead of sent.

`InMemoryTokenStorage` (the default) forgets everything with the process; `JsonFileTokenStorage` keeps
one JSON file, written atomically with mode 0600. Anything with the six methods of `TokenStorage` works
(a keyring, a database, ...).
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

T = TypeVar("T")


@dataclass(frozen=True)
class ClientCredentials:
    """An OAuth client: pre-registered, from Dynamic Client Registration, or a CIMD URL client_id.

    `issuer`: the authorization server these credentials belong to. Pre-registered credentials without
    one are bound to the first issuer they are used with. `token_endpoint_auth_method`: None picks one
    from the server's metadata (`client_secret_basic` / `client_secret_post` with a secret, else `none`).
    """

    client_id: str
    client_secret: str | None = None
    token_endpoint_auth_method: str | None = None
    issuer: str | None = None
    redirect_uris: tuple[str, ...] = ()
    client_secret_expires_at: float | None = None  # 0 or None: never
    registration: Mapping[str, Any] = field(default_factory=dict)  # the registration response, as sent

    def expired(self, now: float | None = None) -> bool:
        expires = self.client_secret_expires_at
        return bool(expires) and (now or time.time()) >= float(expires or 0)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["redirect_uris"] = list(self.redirect_uris)
        data["registration"] = dict(self.registration)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClientCredentials:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["redirect_uris"] = tuple(values.get("redirect_uris") or ())
        values["registration"] = dict(values.get("registration") or {})
        return cls(**values)


@dataclass(frozen=True)
class OAuthTokens:
    """What a token endpoint issued, for one MCP server (`resource`) from one issuer."""

    access_token: str
    issuer: str
    resource: str
    token_type: str = "Bearer"
    expires_at: float | None = None  # wall clock (time.time()); None: unknown
    refresh_token: str | None = None
    scope: str | None = None  # granted (the response's `scope`, else what was requested)
    requested_scope: str | None = None  # what the client asked for (kept for step-up unions)

    def expired(self, skew: float = 30.0, now: float | None = None) -> bool:
        return self.expires_at is not None and (now or time.time()) >= self.expires_at - skew

    def with_(self, **changes: Any) -> OAuthTokens:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OAuthTokens:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@runtime_checkable
class TokenStorage(Protocol):
    async def get_client(self, issuer: str) -> ClientCredentials | None: ...

    async def set_client(self, issuer: str, client: ClientCredentials) -> None: ...

    async def delete_client(self, issuer: str) -> None: ...

    async def get_tokens(self, resource: str) -> OAuthTokens | None: ...

    async def set_tokens(self, resource: str, tokens: OAuthTokens) -> None: ...

    async def delete_tokens(self, resource: str) -> None: ...


class _Tables:
    """The six `TokenStorage` methods over two tables: "clients" (by issuer), "tokens" (by resource)."""

    def _get(self, table: str, key: str, load: Callable[[Mapping[str, Any]], T]) -> T | None:
        raise NotImplementedError

    def _put(self, table: str, key: str, value: ClientCredentials | OAuthTokens | None) -> None:
        raise NotImplementedError  # None: delete

    async def get_client(self, issuer: str) -> ClientCredentials | None:
        return self._get("clients", issuer, ClientCredentials.from_dict)

    async def set_client(self, issuer: str, client: ClientCredentials) -> None:
        self._put("clients", issuer, client)

    async def delete_client(self, issuer: str) -> None:
        self._put("clients", issuer, None)

    async def get_tokens(self, resource: str) -> OAuthTokens | None:
        return self._get("tokens", resource, OAuthTokens.from_dict)

    async def set_tokens(self, resource: str, tokens: OAuthTokens) -> None:
        self._put("tokens", resource, tokens)

    async def delete_tokens(self, resource: str) -> None:
        self._put("tokens", resource, None)


class InMemoryTokenStorage(_Tables):
    """Process-lifetime storage (the default)."""

    def __init__(self) -> None:
        self.clients: dict[str, ClientCredentials] = {}
        self.tokens: dict[str, OAuthTokens] = {}

    def _get(self, table: str, key: str, load: Callable[[Mapping[str, Any]], T]) -> T | None:
        return getattr(self, table).get(key)

    def _put(self, table: str, key: str, value: ClientCredentials | OAuthTokens | None) -> None:
        entries: dict[str, Any] = getattr(self, table)
        if value is None:
            entries.pop(key, None)
        else:
            entries[key] = value


class JsonFileTokenStorage(_Tables):
    """One JSON file: `{"version": 1, "clients": {issuer: ...}, "tokens": {resource: ...}}`.

    Rewritten whole on every change (temporary file + rename, mode 0600); read on every lookup, so
    several processes sharing the file see each other's writes (the last writer wins).
    """

    VERSION = 1

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            data = {}
        except (OSError, ValueError):
            data = {}  # unreadable or corrupt: start afresh rather than fail every request
        if not isinstance(data, dict) or data.get("version") != self.VERSION:
            data = {}
        data.setdefault("version", self.VERSION)
        data.setdefault("clients", {})
        data.setdefault("tokens", {})
        return data

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".oauth-", suffix=".json", dir=self.path.parent)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=2, sort_keys=True)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def _put(self, table: str, key: str, value: ClientCredentials | OAuthTokens | None) -> None:
        with self._lock:
            data = self._read()
            if value is None:
                data[table].pop(key, None)
            else:
                data[table][key] = value.to_dict()
            self._write(data)

    def _get(self, table: str, key: str, load: Callable[[Mapping[str, Any]], T]) -> T | None:
        with self._lock:
            value = self._read()[table].get(key)
        try:
            return load(value) if isinstance(value, dict) else None
        except TypeError:
            return None  # written by something else: as if absent
