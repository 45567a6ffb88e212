"""How a confidential (or public) client authenticates at a token endpoint, for the machine grants.

* `ClientSecretBasic(client_id, secret)`: HTTP Basic, id and secret form-urlencoded first (RFC 6749 §2.3.1);
* `ClientSecretPost(client_id, secret)`: both in the form body;
* `PrivateKeyJwt(client_id, private_key)`: an RFC 7523 client assertion, signed with PyJWT (`iss` = `sub`
  = the client id, `aud` = the authorization server's issuer, a fresh `jti`, one minute of life);
* `PublicClient(client_id)`: no authentication, `client_id` in the form (e.g. workload identity).

Each one only adds fields and headers to a request; a fresh assertion is made for every request.
"""

from __future__ import annotations

import base64
import secrets
import time
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Protocol, cast, runtime_checkable
from urllib.parse import quote_plus

from mcp_bindings.runtime.auth.dpop import (  # PyJWT and cryptography: imported where used
    ASYMMETRIC_ALGORITHMS,
    private_key_of,
)

CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def basic_credentials(client_id: str, client_secret: str) -> str:
    """`Basic ...` for client_secret_basic: id and secret form-urlencoded first (RFC 6749 §2.3.1)."""
    raw = f"{quote_plus(client_id)}:{quote_plus(client_secret)}".encode()
    return "Basic " + base64.b64encode(raw).decode("ascii")


@runtime_checkable
class ClientAuthentication(Protocol):
    """Adds this client's authentication to a token (or revocation) request to `issuer`."""

    @property
    def client_id(self) -> str: ...

    @property
    def method(self) -> str: ...  # the RFC 8414 token_endpoint_auth_method name

    def apply(self, form: dict[str, str], headers: dict[str, str], *, issuer: str, endpoint: str) -> None: ...


class _ClientSecret:
    method: str

    def __init__(self, client_id: str, client_secret: str) -> None:
        if not client_id or not client_secret:
            raise ValueError(f"{self.method} needs a client_id and a client_secret")
        self.client_id = client_id
        self._secret = client_secret


class ClientSecretBasic(_ClientSecret):
    method = "client_secret_basic"

    def apply(self, form: dict[str, str], headers: dict[str, str], *, issuer: str, endpoint: str) -> None:
        headers["Authorization"] = basic_credentials(self.client_id, self._secret)


class ClientSecretPost(_ClientSecret):
    method = "client_secret_post"

    def apply(self, form: dict[str, str], headers: dict[str, str], *, issuer: str, endpoint: str) -> None:
        form.update(client_id=self.client_id, client_secret=self._secret)


class PublicClient:
    method = "none"

    def __init__(self, client_id: str) -> None:
        if not client_id:
            raise ValueError("a client_id is required")
        self.client_id = client_id

    def apply(self, form: dict[str, str], headers: dict[str, str], *, issuer: str, endpoint: str) -> None:
        form["client_id"] = self.client_id


@dataclass(eq=False)
class PrivateKeyJwt:
    """RFC 7523 §2.2 client authentication. `private_key`: a PEM string/bytes or a `cryptography` key;
    `audience`: default the authorization server's issuer identifier."""

    client_id: str
    private_key: Any = field(repr=False)  # a PEM key is loaded once made
    _: KW_ONLY
    algorithm: str = "ES256"
    key_id: str | None = None
    audience: str | None = None
    lifetime: int = 60

    @property
    def method(self) -> str:
        return "private_key_jwt"

    def __post_init__(self) -> None:
        if not self.client_id:
            raise ValueError("a client_id is required")
        if self.algorithm not in ASYMMETRIC_ALGORITHMS:
            accepted = ", ".join(ASYMMETRIC_ALGORITHMS)
            raise ValueError(f"private_key_jwt needs an asymmetric algorithm, one of {accepted}")
        if isinstance(self.private_key, (str, bytes)):
            try:
                self.private_key = private_key_of(cast("str | bytes", self.private_key))
            except ValueError as exc:
                raise ValueError(f"private_key_jwt: the private key is not a readable PEM key ({exc})") from None

    def assertion(self, audience: str) -> str:
        import jwt

        now = int(time.time())
        claims = {
            "iss": self.client_id,
            "sub": self.client_id,
            "aud": audience,
            "jti": secrets.token_urlsafe(24),
            "iat": now,
            "exp": now + self.lifetime,
        }
        headers = {"kid": self.key_id} if self.key_id else None
        return jwt.encode(claims, self.private_key, algorithm=self.algorithm, headers=headers)

    def apply(self, form: dict[str, str], headers: dict[str, str], *, issuer: str, endpoint: str) -> None:
        form["client_id"] = self.client_id
        form["client_assertion_type"] = CLIENT_ASSERTION_TYPE
        form["client_assertion"] = self.assertion(self.audience or issuer)
