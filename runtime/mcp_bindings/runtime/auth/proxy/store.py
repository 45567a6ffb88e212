"""Where the OAuth proxy keeps what it must remember: client registrations, pending authorizations,
authorization codes, grants (with the upstream provider's tokens) and refresh tokens.

A `ProxyStore` is a small key-value store with expiry and an atomic take (a code or a refresh token is
used once, even when two workers race for it): `MemoryProxyStore` for one process (the default),
`RedisProxyStore` over the scale-out plug-in's Redis backend for several workers (the same
`RedisBackend` the HTTP app shares its sessions through, keys under its prefix + `oauth:`).

Every record is sealed before it reaches the store (`SealedRecords`): AES-256-GCM (`cryptography`'s
AESGCM) under a key derived with HKDF-SHA256 from the operator's key (`MCP_OAUTH_PROXY_KEY`, or
`OAuthProxy(key=...)`), the record's store key as associated data (a record copied under another key
does not open). Keys name no secret: a code or a token is keyed by its SHA-256 (`dpop.b64url_sha256`).
The same operator key derives the ES256 key the proxy signs its access tokens with (`ProxyKeys`), so
every worker holding the key issues and verifies the same tokens."""

from __future__ import annotations

import os
import time
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import orjson

from mcp_bindings.runtime.auth.dpop import jwk_thumbprint
from mcp_bindings.runtime.protocol.request_state import SecretError, secret_bytes

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ec import EllipticCurvePrivateKey
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

KEY_ENV = "MCP_OAUTH_PROXY_KEY"
_STORE_INFO = b"mcp-bindings oauth-proxy store AES-256-GCM v1"
_SIGNING_INFO = b"mcp-bindings oauth-proxy ES256 signing key v1"
_NONCE_BYTES = 12


@runtime_checkable
class ProxyStore(Protocol):
    """Bytes under string keys, each with a lifetime."""

    async def put(self, key: str, value: bytes, ttl_s: float) -> None: ...

    async def get(self, key: str) -> bytes | None: ...

    async def take(self, key: str) -> bytes | None:
        """The value, deleted in the same step: of two takers, one gets it."""
        ...

    async def delete(self, key: str) -> None: ...

    async def count(self, key: str, ttl_s: float) -> int:
        """Add one to the counter at `key` (created with lifetime `ttl_s`) and return it."""
        ...


class MemoryProxyStore:
    """One process's store (the default): a dict, expired entries dropped as they are met, at most
    `max_entries` (the oldest go first)."""

    def __init__(self, max_entries: int = 100_000) -> None:
        self.entries: dict[str, tuple[float, bytes]] = {}
        self.max_entries = max_entries

    def _live(self, key: str) -> bytes | None:
        found = self.entries.get(key)
        if found is None:
            return None
        if found[0] <= time.monotonic():
            del self.entries[key]
            return None
        return found[1]

    async def put(self, key: str, value: bytes, ttl_s: float) -> None:
        self.entries.pop(key, None)
        while len(self.entries) >= self.max_entries:
            del self.entries[next(iter(self.entries))]
        self.entries[key] = (time.monotonic() + ttl_s, value)

    async def get(self, key: str) -> bytes | None:
        return self._live(key)

    async def take(self, key: str) -> bytes | None:
        value = self._live(key)
        self.entries.pop(key, None)
        return value

    async def delete(self, key: str) -> None:
        self.entries.pop(key, None)

    async def count(self, key: str, ttl_s: float) -> int:
        current = self._live(key)
        number = int(current or b"0") + 1
        expires = self.entries[key][0] if current is not None else time.monotonic() + ttl_s
        self.entries[key] = (expires, str(number).encode())
        return number


@runtime_checkable
class RedisConnection(Protocol):
    """What `RedisProxyStore` uses of the scale-out plug-in's `RedisBackend` (its client and prefix,
    and its `guard`: Redis errors as `BackendUnavailable` naming Redis)."""

    prefix: str

    @property
    def client(self) -> Any: ...

    def guard(self) -> AbstractContextManager[None]: ...


_COUNT = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n
"""


class RedisProxyStore:
    """The store in Redis, through a `RedisBackend` (`RedisProxyStore(RedisBackend(url))`, or the
    app's own when `MCP_REDIS_URL` is set): keys `<prefix>oauth:<key>`, `take` is GETDEL."""

    shared = True

    def __init__(self, backend: RedisConnection) -> None:
        self.backend = backend

    def _key(self, key: str) -> str:
        return f"{self.backend.prefix}oauth:{key}"

    async def _run(self, command: str, *args: Any) -> Any:
        with self.backend.guard():
            return await getattr(self.backend.client, command)(*args)

    async def put(self, key: str, value: bytes, ttl_s: float) -> None:
        await self._run("set", self._key(key), value, None, max(1, int(ttl_s * 1000)))

    async def get(self, key: str) -> bytes | None:
        value = await self._run("get", self._key(key))
        return value if isinstance(value, bytes) else None

    async def take(self, key: str) -> bytes | None:
        value = await self._run("getdel", self._key(key))
        return value if isinstance(value, bytes) else None

    async def delete(self, key: str) -> None:
        await self._run("delete", self._key(key))

    async def count(self, key: str, ttl_s: float) -> int:
        return int(await self._run("eval", _COUNT, 1, self._key(key), max(1, int(ttl_s * 1000))))


def operator_key(key: bytes | str | None, *, shared: bool) -> bytes:
    """The operator's key: `key`, else `MCP_OAUTH_PROXY_KEY` (at least 32 bytes either way). Without
    one, a random key for this process, which a shared store refuses (`SecretError` naming the
    variable): other workers could not open its records nor verify its tokens."""
    found = secret_bytes(key, "OAuthProxy(key=...)") or secret_bytes(os.environ.get(KEY_ENV), KEY_ENV)
    if found is not None:
        return found
    if shared:
        raise SecretError(
            f"an OAuth proxy on a shared store needs one key in every worker: set {KEY_ENV} "
            "(32+ random bytes) or OAuthProxy(key=...)"
        )
    return os.urandom(32)


def _hkdf(secret: bytes, info: bytes) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(secret)


class ProxyKeys:
    """What the operator's key derives: the store's AES-256-GCM key and the ES256 signing key of the
    access tokens (a P-256 scalar from HKDF: the same key in every worker), with its public JWKS."""

    def __init__(self, secret: bytes) -> None:
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        from jwt.algorithms import ECAlgorithm

        self.aead: AESGCM = AESGCM(_hkdf(secret, _STORE_INFO))
        order = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551  # of P-256
        scalar = int.from_bytes(_hkdf(secret, _SIGNING_INFO), "big") % (order - 1) + 1
        self.signing_key: EllipticCurvePrivateKey = ec.derive_private_key(scalar, ec.SECP256R1())
        public: dict[str, Any] = ECAlgorithm.to_jwk(self.signing_key.public_key(), as_dict=True)  # pyright: ignore[reportUnknownMemberType]
        self.kid = jwk_thumbprint(public)
        self.jwks: dict[str, Any] = {"keys": [{**public, "kid": self.kid, "alg": "ES256", "use": "sig"}]}


class SealedRecords:
    """JSON records in a `ProxyStore`, sealed with the operator's key (see the module docstring)."""

    def __init__(self, store: ProxyStore, keys: ProxyKeys) -> None:
        self.store = store
        self.keys = keys

    def _seal(self, key: str, record: dict[str, Any]) -> bytes:
        nonce = os.urandom(_NONCE_BYTES)
        return nonce + self.keys.aead.encrypt(nonce, orjson.dumps(record), key.encode())

    def _open(self, key: str, sealed: bytes | None) -> dict[str, Any] | None:
        from cryptography.exceptions import InvalidTag

        if sealed is None or len(sealed) <= _NONCE_BYTES:
            return None
        try:
            value = orjson.loads(self.keys.aead.decrypt(sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:], key.encode()))
        except (InvalidTag, orjson.JSONDecodeError):
            return None  # sealed under another key (rotated), or altered: as if absent
        return value if isinstance(value, dict) else None  # pyright: ignore[reportUnknownVariableType]

    async def put(self, key: str, record: dict[str, Any], ttl_s: float) -> None:
        await self.store.put(key, self._seal(key, record), ttl_s)

    async def get(self, key: str) -> dict[str, Any] | None:
        return self._open(key, await self.store.get(key))

    async def take(self, key: str) -> dict[str, Any] | None:
        return self._open(key, await self.store.take(key))

    async def delete(self, key: str) -> None:
        await self.store.delete(key)

    async def count(self, key: str, ttl_s: float) -> int:
        return await self.store.count(key, ttl_s)
