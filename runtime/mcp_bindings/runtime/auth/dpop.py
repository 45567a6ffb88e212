"""DPoP (RFC 9449): sender-constrained access tokens, both sides. JOSE by PyJWT; no crypto here.

Client: a `DPoPKey` (an asymmetric key pair, ES256 by default) signs one fresh proof JWT per HTTP
request (`typ` dpop+jwt, the public `jwk` in the header; `jti`, `htm`, `htu`, `iat`, plus `ath` when
an access token is presented and `nonce` once a server asked for one). `DPoPSigner` adds the nonces
each server handed out (`DPoP-Nonce`), per origin, to that key.

Server: `DPoPProofVerifier` checks a proof (RFC 9449 §4.3): one well-formed JWT, `typ`, an accepted
asymmetric `alg`, a public `jwk` the signature verifies with, `htm`/`htu` of this request, `iat` within
`max_age` either way (the MCP DPoP profile: ±5 minutes), `jti` not seen before (`ReplayCache`), `ath`
of the presented token, the key's thumbprint equal to the token's `cnf.jkt`, and, when required, a
current server nonce (`NonceIssuer`). The profile's current draft adds no MCP-specific claims.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcp_bindings.runtime.auth.discovery import origin_of

# PyJWT and cryptography are imported where used: importing the auth client stays cheap.

ASYMMETRIC_ALGORITHMS = ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA")
_THUMBPRINT_MEMBERS = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}


def b64url_sha256(text: str) -> str:
    """BASE64URL(SHA-256(ASCII(text))) without padding (`ath`, PKCE S256); also the OAuth proxy's store
    key of a secret value (a code, a token), which may be any text: encoded as UTF-8, ASCII's superset."""
    digest = hashlib.sha256(text.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def jwk_thumbprint(jwk: Mapping[str, Any]) -> str:
    """RFC 7638 SHA-256 thumbprint (base64url): the required members, sorted, no whitespace."""
    members = _THUMBPRINT_MEMBERS.get(str(jwk.get("kty")))
    if members is None or any(not isinstance(jwk.get(m), str) for m in members):
        raise ValueError(f"cannot compute a thumbprint of a {jwk.get('kty')!r} key without {members}")
    canonical = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
    digest = hashlib.sha256(canonical.encode("utf-8")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def private_key_of(pem: str | bytes, password: bytes | None = None) -> Any:
    """A PEM private key (text or bytes) as a `cryptography` key; ValueError when it is none."""
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    return load_pem_private_key(pem.encode("ascii") if isinstance(pem, str) else pem, password=password)


def htu_of(url: str) -> str:
    """The `htu` of a request URL: scheme, authority and path; no query or fragment (RFC 9449 §4.2)."""
    parts = urlsplit(url)
    return origin_of(url) + (parts.path or "/")


# -- client ----------------------------------------------------------------------------------------


class DPoPKey:
    """The key pair proofs are signed with. `DPoPKey()` makes a fresh P-256 key (ES256); pass a key
    object or PEM (`DPoPKey.from_pem(...)`) to keep the binding across processes."""

    def __init__(self, private_key: Any = None, *, algorithm: str = "ES256") -> None:
        if algorithm not in ASYMMETRIC_ALGORITHMS:
            raise ValueError(f"DPoP needs an asymmetric algorithm, one of {', '.join(ASYMMETRIC_ALGORITHMS)}")
        from cryptography.hazmat.primitives.asymmetric import ec
        from jwt.algorithms import get_default_algorithms

        self.algorithm = algorithm
        self._private_key: Any = private_key if private_key is not None else ec.generate_private_key(ec.SECP256R1())
        public_jwk: dict[str, Any] = get_default_algorithms()[algorithm].to_jwk(  # pyright: ignore[reportUnknownMemberType]
            self._private_key.public_key(), as_dict=True
        )
        self.public_jwk = {k: v for k, v in public_jwk.items() if k in ("kty", "crv", "x", "y", "n", "e")}
        self.thumbprint = jwk_thumbprint(self.public_jwk)  # the `cnf.jkt` of tokens bound to this key

    @classmethod
    def from_pem(cls, pem: str | bytes, *, algorithm: str = "ES256", password: bytes | None = None) -> DPoPKey:
        return cls(private_key_of(pem, password), algorithm=algorithm)

    def proof(self, method: str, url: str, *, access_token: str | None = None, nonce: str | None = None) -> str:
        import jwt

        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(24),
            "htm": method.upper(),
            "htu": htu_of(url),
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = b64url_sha256(access_token)
        if nonce is not None:
            claims["nonce"] = nonce
        headers = {"typ": "dpop+jwt", "jwk": self.public_jwk}
        return jwt.encode(claims, self._private_key, algorithm=self.algorithm, headers=headers)


class DPoPSigner:
    """A `DPoPKey` plus the latest `DPoP-Nonce` of each server origin (authorization and resource
    servers hand out their own)."""

    def __init__(self, key: DPoPKey) -> None:
        self.key = key
        self.nonces: dict[str, str] = {}

    def proof(self, method: str, url: str, access_token: str | None = None) -> str:
        return self.key.proof(method, url, access_token=access_token, nonce=self.nonces.get(origin_of(url)))

    def remember(self, url: str, nonce: str | None) -> bool:
        """Record a `DPoP-Nonce` answer header; True if it is new for that origin."""
        if not nonce:
            return False
        origin = origin_of(url)
        if self.nonces.get(origin) == nonce:
            return False
        self.nonces[origin] = nonce
        return True


# -- server ----------------------------------------------------------------------------------------


class DPoPProofError(Exception):
    """The DPoP proof is unacceptable; `use_nonce` when only the server nonce is missing or stale."""

    def __init__(self, message: str, *, use_nonce: bool = False) -> None:
        self.use_nonce = use_nonce
        super().__init__(message)


class ReplayCache:
    """`jti`s seen within their proofs' lifetime, bounded (the oldest are forgotten first)."""

    def __init__(self, max_entries: int = 100_000) -> None:
        self.max_entries = max_entries
        self._seen: OrderedDict[str, float] = OrderedDict()

    def check_and_add(self, key: str, expires_at: float, now: float | None = None) -> bool:
        """True if `key` is new (and remembers it until `expires_at`); False for a replay."""
        now = time.time() if now is None else now
        while self._seen and next(iter(self._seen.values())) < now:
            self._seen.popitem(last=False)
        if key in self._seen:
            return False
        self._seen[key] = expires_at
        while len(self._seen) > self.max_entries:
            self._seen.popitem(last=False)
        return True


class NonceIssuer:
    """Server nonces (RFC 9449 §8-9): a random value that changes every `lifetime` seconds; the
    current and the previous one are accepted."""

    def __init__(self, lifetime: float = 300.0) -> None:
        self.lifetime = lifetime
        self._current = secrets.token_urlsafe(24)
        self._previous: str | None = None
        self._since = time.monotonic()

    def current(self) -> str:
        if time.monotonic() - self._since >= self.lifetime:
            self._previous, self._current = self._current, secrets.token_urlsafe(24)
            self._since = time.monotonic()
        return self._current

    def valid(self, nonce: Any) -> bool:
        current = self.current()
        return isinstance(nonce, str) and nonce in (current, self._previous)


@dataclass(frozen=True)
class DPoPProof:
    jkt: str  # the thumbprint of the proof's key
    jti: str
    claims: Mapping[str, Any] = field(default_factory=dict)


class DPoPProofVerifier:
    """Checks DPoP proofs (see the module docstring). `nonces`: require a server nonce."""

    def __init__(
        self,
        *,
        algorithms: Sequence[str] = ("ES256", "ES384", "ES512", "RS256", "PS256", "EdDSA"),
        max_age: float = 300.0,
        leeway: float = 5.0,
        replay_cache: ReplayCache | None = None,
        nonces: NonceIssuer | None = None,
    ) -> None:
        unknown = [a for a in algorithms if a not in ASYMMETRIC_ALGORITHMS]
        if unknown:
            raise ValueError(f"not asymmetric JWS algorithms: {', '.join(unknown)}")
        self.algorithms = tuple(algorithms)
        self.max_age = max_age
        self.leeway = leeway
        self.replay_cache = replay_cache or ReplayCache()
        self.nonces = nonces

    def verify(
        self,
        proof: str | None,
        *,
        method: str,
        url: str,
        access_token: str | None = None,
        expected_jkt: str | None = None,
    ) -> DPoPProof:
        public_jwk, claims = self._signed_claims(proof)
        jkt = jwk_thumbprint(public_jwk)
        if claims.get("htm") != method.upper():
            raise DPoPProofError(f"the DPoP proof's htm is not {method.upper()}")
        htu = claims.get("htu")
        if not isinstance(htu, str) or "?" in htu or "#" in htu or htu_of(htu) != htu_of(url):
            raise DPoPProofError(f"the DPoP proof's htu is not {htu_of(url)}")
        iat = claims.get("iat")
        now = time.time()
        if not isinstance(iat, (int, float)) or abs(now - iat) > self.max_age + self.leeway:  # MCP DPoP: ±5 min
            raise DPoPProofError("the DPoP proof's iat is outside the accepted window")
        if access_token is not None and claims.get("ath") != b64url_sha256(access_token):
            raise DPoPProofError("the DPoP proof's ath does not match the access token")
        if expected_jkt is not None and jkt != expected_jkt:
            raise DPoPProofError("the DPoP proof's key is not the one the access token is bound to")
        if self.nonces is not None and not self.nonces.valid(claims.get("nonce")):
            raise DPoPProofError("a DPoP nonce is required", use_nonce=True)
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti:
            raise DPoPProofError("the DPoP proof has no jti")
        if not self.replay_cache.check_and_add(f"{jkt}:{jti}", float(iat) + self.max_age + self.leeway, now):
            raise DPoPProofError("the DPoP proof was already used (replayed jti)")
        return DPoPProof(jkt=jkt, jti=jti, claims=claims)

    def _signed_claims(self, proof: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """The proof's public `jwk` and its claims, once it is one JWT of an accepted form whose signature
        verifies with that key (the claims are not checked against the request here)."""
        import jwt
        from jwt.algorithms import get_default_algorithms

        if not proof:
            raise DPoPProofError("the request has no DPoP proof")
        if "," in proof:
            raise DPoPProofError("the request has more than one DPoP proof")
        try:
            header = jwt.get_unverified_header(proof)
        except jwt.PyJWTError as exc:
            raise DPoPProofError("the DPoP proof is not a well-formed JWT") from exc
        if header.get("typ") != "dpop+jwt":
            raise DPoPProofError("the DPoP proof's typ is not dpop+jwt")
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise DPoPProofError(f"the DPoP proof's alg {alg!r} is not accepted")
        jwk = header.get("jwk")
        if not isinstance(jwk, dict):
            raise DPoPProofError("the DPoP proof has no jwk header")
        public_jwk: dict[str, Any] = jwk  # pyright: ignore[reportUnknownVariableType]
        if "d" in public_jwk:
            raise DPoPProofError("the DPoP proof's jwk holds a private key")
        try:
            key: Any = get_default_algorithms()[alg].from_jwk(public_jwk)  # pyright: ignore[reportUnknownMemberType]
            claims: dict[str, Any] = jwt.decode(
                proof, key, algorithms=[alg], options={"verify_aud": False, "require": ["jti", "htm", "htu", "iat"]}
            )
        except (jwt.PyJWTError, ValueError, TypeError) as exc:
            raise DPoPProofError(f"the DPoP proof does not verify: {exc}") from exc
        return public_jwk, claims
