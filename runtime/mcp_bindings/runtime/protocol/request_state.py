"""Sealing of `requestState` (2026-07-28 multi-round-trip requests).

The state a handler puts in an `InputRequiredResult` travels through the client and comes back on
the retry, beside the `inputResponses`. The runtime seals it so that, on the way back, it is:

* opaque and unforgeable: AES-256-GCM (`cryptography`'s AESGCM, authenticated encryption; a random
  96-bit nonce per token) under a key derived with HKDF-SHA256 from the configured secret (the
  server's `request_state_secret`, else `create_app(request_state_secret=...)`, else the
  `MCP_REQUEST_STATE_SECRET` environment variable; a random key per process when none is set,
  which several workers cannot share: `check_shareable` refuses that). The client sees random
  bytes; any change to them fails the tag check.
* rotatable: a previous secret (`MCP_REQUEST_STATE_PREVIOUS_SECRET`, or `previous=`) still opens
  states for a grace period (`grace_s`, by default the TTL: every state sealed under it has expired
  by then), counted from when this sealer was made; states are always sealed with the current one.
* bound to its request: the method, a SHA-256 digest of the request's params other than
  `inputResponses`, `requestState` and `_meta` (for tools/call: the tool's name and arguments; for
  prompts/get: the prompt's name and arguments; for resources/read: the URI), and a digest of the
  principal the transport authenticated (None when it authenticated none: stdio, in memory, HTTP
  without the bearer middleware). State issued for one tool, one set of arguments or one user is
  refused for any other.
* short-lived: it carries its expiry (the server's `request_state_ttl_s` from the time it was
  issued, wall-clock so that workers sharing the secret agree).
* bounded in rounds: it carries its round number; one request may take at most `max_rounds`.

Replay: a state is not single-use. Within its lifetime, a state can only be sent again by the same
principal, for the same method, target and arguments, so a replay can do only what that principal
could do by starting the same call over. A single-use cache would refuse a client's legitimate
retry after a lost response, and would bind nothing across workers sharing the secret. A
non-idempotent handler that must complete once should carry its own id in its state and deduplicate.

Any failure (garbage, tampering, another key, another request or principal, expiry) is -32602
naming `params.requestState` and the reason; nothing here answers -32603.
"""

from __future__ import annotations

import base64
import os
import re
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import orjson

from mcp_bindings.runtime.rpc.errors import INVALID_PARAMS, McpError
from mcp_bindings.runtime.rpc.jsonrpc import invalid_field, json_object

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

# Rounds of input requests one request may take, in either direction (server, bridge, client).
MAX_INPUT_ROUNDS = 16
# How long an issued requestState is accepted (ServerStub.request_state_ttl_s overrides it).
DEFAULT_TTL_S = 600.0
# Where a deployment configures the secret (and the one it rotates away from).
SECRET_ENV = "MCP_REQUEST_STATE_SECRET"
PREVIOUS_SECRET_ENV = "MCP_REQUEST_STATE_PREVIOUS_SECRET"
MIN_SECRET_BYTES = 32  # HKDF input: at least as much entropy as the derived AES-256 key
# The params keys that change from one round to the next (and `_meta`, the protocol's envelope);
# everything else in the params must come back as it was when the state was issued.
ROUND_KEYS = frozenset({"inputResponses", "requestState", "_meta"})

FIELD = "params.requestState"
_VERSION = b"\x01"  # the token's first byte; also the AEAD's associated data
_NONCE_BYTES = 12
_TAG_BYTES = 16
_HKDF_INFO = b"mcp-bindings requestState AES-256-GCM v1"
_B64URL = re.compile(r"[A-Za-z0-9_-]*")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    if _B64URL.fullmatch(text) is None:  # b64decode would skip stray characters
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sha256(data: bytes) -> bytes:
    # Imported on first use: hashlib loads OpenSSL (~3.5 MB of RSS), which a server that never
    # issues requestState (every handshake-era session) has no need for.
    import hashlib

    return hashlib.sha256(data).digest()


def _canonical(value: Any) -> bytes:
    """Decoded JSON -> one byte string per value (keys sorted; integers beyond 64 bits, which
    orjson refuses, by the standard library)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        import json

        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def request_digest(method: str, params: Any) -> bytes:
    """What a state is bound to in its request: the method and the params other than `ROUND_KEYS`
    (for tools/call the name and arguments, for resources/read the URI, ...)."""
    fields = json_object(params)
    target = {k: v for k, v in fields.items() if k not in ROUND_KEYS}
    return _sha256(_canonical([method, target]))


def principal_digest(principal: str | None) -> bytes | None:
    return None if principal is None else _sha256(principal.encode("utf-8", "surrogatepass"))


class SecretError(ValueError):
    """A configured secret that cannot be used (too short), or none where one is needed."""


def secret_bytes(value: bytes | str | None, where: str) -> bytes | None:
    if value is None or value in (b"", ""):
        return None
    data = value.encode("utf-8") if isinstance(value, str) else value
    if len(data) < MIN_SECRET_BYTES:
        raise SecretError(
            f"{where} is {len(data)} bytes; use at least {MIN_SECRET_BYTES} random bytes"
            " (e.g. `python -c 'import secrets; print(secrets.token_urlsafe(48))'`)"
        )
    return data


def secrets_from_env(environ: Mapping[str, str] | None = None) -> tuple[bytes | None, bytes | None]:
    """The current and previous secrets from `MCP_REQUEST_STATE_SECRET` and
    `MCP_REQUEST_STATE_PREVIOUS_SECRET` (None where unset); `SecretError` for one too short."""
    env = os.environ if environ is None else environ
    return secret_bytes(env.get(SECRET_ENV), SECRET_ENV), secret_bytes(
        env.get(PREVIOUS_SECRET_ENV), PREVIOUS_SECRET_ENV
    )


def _derive(secret: bytes) -> AESGCM:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return AESGCM(HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_HKDF_INFO).derive(secret))


def _refused(reason: str, kind: str) -> McpError:
    return invalid_field(FIELD, reason, kind)


class RequestStateSealer:
    """Seals and opens `requestState`; one per server object (its `ServerHost`)."""

    def __init__(
        self,
        secret: bytes | None = None,
        max_rounds: int = MAX_INPUT_ROUNDS,
        *,
        ttl_s: float = DEFAULT_TTL_S,
        clock: Callable[[], float] = time.time,
        previous: bytes | None = None,
        grace_s: float | None = None,
    ) -> None:
        self._secret = secret
        self._random_key = os.urandom(32) if not secret else None  # what secrets.token_bytes uses
        self._aead: AESGCM | None = None
        self._previous = previous or None
        self._previous_aead: AESGCM | None = None
        self.max_rounds = max_rounds
        self.ttl_s = ttl_s  # used when `seal` is given no ttl
        self.clock = clock  # wall-clock seconds; tests inject their own
        # The previous secret opens states until then (wall clock, like the states' expiry).
        self.previous_until = clock() + (ttl_s if grace_s is None else grace_s)

    @property
    def configured(self) -> bool:
        """Whether the key comes from a configured secret (so other workers can share it)."""
        return self._random_key is None

    def check_shareable(self) -> None:
        """`SecretError` unless the key can be shared by several workers (a configured secret)."""
        if not self.configured:
            raise SecretError(
                "several workers need one requestState secret: set MCP_REQUEST_STATE_SECRET (the same"
                f" {MIN_SECRET_BYTES}+ random bytes in every worker) or create_app(request_state_secret=...)"
            )

    def _cipher(self) -> AESGCM:
        # Imported on first use, like hashlib above: cryptography's OpenSSL bindings cost memory
        # that a server which never issues requestState does not need to pay.
        if self._aead is None:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            if self._random_key is not None:
                self._aead = AESGCM(self._random_key)
            else:
                assert self._secret is not None
                self._aead = _derive(self._secret)
        return self._aead

    def _decrypt(self, nonce: bytes, sealed: bytes) -> bytes:
        """The payload, under the current key or (within its grace period) the previous one."""
        from cryptography.exceptions import InvalidTag

        try:
            return self._cipher().decrypt(nonce, sealed, _VERSION)
        except InvalidTag:
            if self._previous is None or self.clock() >= self.previous_until:
                raise
        if self._previous_aead is None:
            self._previous_aead = _derive(self._previous)
        return self._previous_aead.decrypt(nonce, sealed, _VERSION)

    def seal(
        self,
        method: str,
        state: str,
        round_number: int,
        *,
        params: Any = None,
        principal: str | None = None,
        ttl_s: float | None = None,
    ) -> str:
        """The token a client sends back as `requestState`: `state`, for `method` with these
        `params` (`request_digest`) from this `principal`, in `round_number`, expiring in `ttl_s`."""
        if round_number > self.max_rounds:
            raise McpError(INVALID_PARAMS, f"{method}: more than {self.max_rounds} rounds of input requests")
        principal_hash = principal_digest(principal)
        payload = orjson.dumps(
            {
                "m": method,
                "d": _b64(request_digest(method, params)),
                "p": None if principal_hash is None else _b64(principal_hash),
                "r": round_number,
                "e": self.clock() + (self.ttl_s if ttl_s is None else ttl_s),
                "s": state,
            }
        )
        nonce = os.urandom(_NONCE_BYTES)
        return _b64(_VERSION + nonce + self._cipher().encrypt(nonce, payload, _VERSION))

    def open(self, method: str, sealed: str, *, params: Any = None, principal: str | None = None) -> tuple[str, int]:
        """The handler's state and its round number; -32602 naming the reason if `sealed` was not
        issued by this server for this request and principal, or has expired."""
        from cryptography.exceptions import InvalidTag

        try:
            token = _unb64(sealed)
            if len(token) < 1 + _NONCE_BYTES + _TAG_BYTES or token[:1] != _VERSION:
                raise ValueError("not a sealed state")
            nonce = token[1 : 1 + _NONCE_BYTES]
            data = json_object(orjson.loads(self._decrypt(nonce, token[1 + _NONCE_BYTES :])))
            state, round_number, expires = data.get("s"), data.get("r"), data.get("e")
            if not (isinstance(state, str) and type(round_number) is int and isinstance(expires, int | float)):
                raise ValueError("not a sealed state")
        except (ValueError, TypeError, InvalidTag):  # binascii.Error and JSONDecodeError are ValueErrors
            raise _refused(
                "not a state this server issued (malformed, altered, or sealed with another key)",
                "request_state_invalid",
            ) from None
        if self.clock() >= expires:
            raise _refused("expired; start the request over", "request_state_expired")
        if data.get("m") != method:
            raise _refused(f"issued for another method, not {method}", "request_state_mismatch")
        if not _same(data.get("d"), request_digest(method, params)):
            raise _refused(
                "issued for another request (its params other than inputResponses, requestState and _meta differ:"
                " another name, URI or arguments)",
                "request_state_mismatch",
            )
        principal_hash = principal_digest(principal)
        if not _same(data.get("p"), principal_hash):
            raise _refused("issued to another principal", "request_state_mismatch")
        return state, round_number


def _same(sealed: Any, digest: bytes | None) -> bool:
    if sealed is None or digest is None:
        return sealed is None and digest is None
    import hmac

    return isinstance(sealed, str) and hmac.compare_digest(sealed, _b64(digest))
