"""The MCP clients the proxy knows: registered with Dynamic Client Registration (RFC 7591, bounded
per address), or named by a Client ID Metadata Document URL (fetched, bounded in size and time), and
the redirect URI rules both follow.

Redirect URIs: `https` anywhere; `http` only on a loopback host (127.0.0.1, [::1], localhost); a
private-use scheme with a dot in it (`com.example.app:/cb`, RFC 8252 §7.1); never a fragment. At the
authorization request, the URI must equal a registered one character for character; the one latitude
is RFC 8252 §7.3's: an `http` loopback URI matches with any port (native apps bind a free port)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlsplit

import httpx

from mcp_bindings.runtime.auth.discovery import get_json, is_loopback_host, require_secure
from mcp_bindings.runtime.auth.dpop import b64url_sha256
from mcp_bindings.runtime.auth.errors import DiscoveryError, OAuthError
from mcp_bindings.runtime.auth.proxy.store import SealedRecords

AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post")
MAX_CIMD_BYTES = 64 * 1024


class Refused(Exception):
    """A request the proxy refuses: `error` is the OAuth error code, `description` names the reason,
    `status` the HTTP status where the answer is not a redirect."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status


class ClientError(Refused):
    """A registration or a client named at the authorization endpoint that is refused
    (`invalid_redirect_uri`, `invalid_client_metadata`, `invalid_client`, ...)."""


@dataclass(frozen=True)
class ProxyClient:
    client_id: str
    redirect_uris: tuple[str, ...]
    client_name: str | None = None
    auth_method: str = "none"
    secret_digest: str | None = None  # SHA-256 of the client secret (never the secret itself)

    def to_record(self) -> dict[str, Any]:
        return {
            "client_id": self.client_id,
            "redirect_uris": list(self.redirect_uris),
            "client_name": self.client_name,
            "auth_method": self.auth_method,
            "secret_digest": self.secret_digest,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ProxyClient:
        return cls(
            client_id=str(record["client_id"]),
            redirect_uris=tuple(str(u) for u in record.get("redirect_uris") or ()),
            client_name=record.get("client_name"),
            auth_method=str(record.get("auth_method") or "none"),
            secret_digest=record.get("secret_digest"),
        )

    def allows(self, redirect_uri: str) -> bool:
        return any(redirect_matches(redirect_uri, registered) for registered in self.redirect_uris)


def check_redirect_uri(uri: Any) -> str:
    """`uri` if it may be registered (see the module docstring), else `ClientError`."""
    if not isinstance(uri, str) or not uri:
        raise ClientError("invalid_redirect_uri", "a redirect URI must be a non-empty string")
    try:
        parts = urlsplit(uri)
    except ValueError:
        raise ClientError("invalid_redirect_uri", f"redirect URI {uri!r} is not a URI") from None
    if parts.fragment or "#" in uri:
        raise ClientError("invalid_redirect_uri", f"redirect URI {uri!r} has a fragment")
    scheme = parts.scheme.lower()
    if scheme == "https" and parts.netloc:
        return uri
    if scheme == "http" and is_loopback_host(parts.hostname):
        return uri
    if scheme and "." in scheme and scheme not in ("javascript", "data", "file"):
        return uri  # a private-use URI scheme (RFC 8252 §7.1: reverse domain name)
    raise ClientError(
        "invalid_redirect_uri",
        f"redirect URI {uri!r} is refused: https, http on a loopback address, or a reverse-domain private scheme",
    )


def redirect_matches(requested: str, registered: str) -> bool:
    """Exact equality; or both `http` loopback URIs differing in the port only (RFC 8252 §7.3)."""
    if requested == registered:
        return True
    try:
        a, b = urlsplit(requested), urlsplit(registered)
        if a.scheme != "http" or b.scheme != "http" or not is_loopback_host(a.hostname):
            return False
        _ = (a.port, b.port)  # a malformed port raises ValueError here
    except ValueError:
        return False
    return (a.hostname, a.path, a.query, a.fragment) == (b.hostname, b.path, b.query, b.fragment) and (
        a.username,
        a.password,
    ) == (b.username, b.password)


def is_cimd_client_id(client_id: str) -> bool:
    """A Client ID Metadata Document URL: https (or http on loopback) with a path."""
    parts = urlsplit(client_id)
    return parts.scheme in ("https", "http") and bool(parts.netloc) and parts.path not in ("", "/")


class ClientRegistry:
    """Registered clients in the proxy's sealed store, and CIMD clients fetched on use."""

    def __init__(
        self,
        records: SealedRecords,
        *,
        registration_ttl_s: float,
        registrations_per_address: int,
        registration_window_s: float,
        allow_insecure_http: bool = False,
    ) -> None:
        self.records = records
        self.registration_ttl_s = registration_ttl_s
        self.registrations_per_address = registrations_per_address
        self.registration_window_s = registration_window_s
        self.allow_insecure_http = allow_insecure_http

    async def register(self, metadata: Any, address: str) -> dict[str, Any]:
        """RFC 7591 §3.2.1: the registration response for `metadata` (the request's JSON); the
        registration is refused with a `ClientError` (429 past the bound per address)."""
        if not isinstance(metadata, dict):
            raise ClientError("invalid_client_metadata", "the registration request must be a JSON object")
        body = cast("dict[str, Any]", metadata)
        uris = body.get("redirect_uris")
        if not isinstance(uris, list) or not uris:
            raise ClientError("invalid_redirect_uri", "redirect_uris must be a non-empty list")
        redirect_uris = tuple(check_redirect_uri(u) for u in cast("list[Any]", uris))
        method = body.get("token_endpoint_auth_method", "none")
        if method not in AUTH_METHODS:
            raise ClientError(
                "invalid_client_metadata", f"token_endpoint_auth_method {method!r}: one of {AUTH_METHODS}"
            )
        grants = body.get("grant_types", ["authorization_code"])
        if not isinstance(grants, list) or any(g not in ("authorization_code", "refresh_token") for g in grants):
            raise ClientError("invalid_client_metadata", "grant_types: authorization_code and refresh_token only")
        name = body.get("client_name")
        count = await self.records.count(f"registrations:{address}", self.registration_window_s)
        if count > self.registrations_per_address:
            raise ClientError(
                "too_many_registrations",
                f"at most {self.registrations_per_address} client registrations per "
                f"{int(self.registration_window_s)} s from one address (registrations_per_address); try again later",
                status=429,
            )
        client_id = secrets.token_urlsafe(24)
        secret = secrets.token_urlsafe(32) if method != "none" else None
        client = ProxyClient(
            client_id,
            redirect_uris,
            client_name=name if isinstance(name, str) and name else None,
            auth_method=str(method),
            secret_digest=b64url_sha256(secret) if secret else None,
        )
        await self.records.put(f"client:{client_id}", client.to_record(), self.registration_ttl_s)
        answer: dict[str, Any] = {
            **{k: v for k, v in body.items() if k in ("client_name", "client_uri", "scope", "application_type")},
            "client_id": client_id,
            "client_id_issued_at": int(time.time()),
            "redirect_uris": list(redirect_uris),
            "grant_types": grants,
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
        }
        if secret is not None:
            answer["client_secret"] = secret
            answer["client_secret_expires_at"] = 0
        return answer

    async def find(self, client_id: str) -> ProxyClient:
        """The client named `client_id` (a registered id or a CIMD URL); `ClientError` when unknown."""
        if is_cimd_client_id(client_id):
            return await self._metadata_document(client_id)
        record = await self.records.get(f"client:{client_id}")
        if record is None:
            raise ClientError("invalid_client", "unknown client_id (not registered here, or its registration expired)")
        return ProxyClient.from_record(record)

    async def _metadata_document(self, url: str) -> ProxyClient:
        try:
            require_secure(url, "client_id metadata document", allow_insecure_http=self.allow_insecure_http)
        except OAuthError as exc:
            raise ClientError("invalid_client", str(exc)) from None
        document = await _fetch_document(url)
        if document.get("client_id") != url:
            raise ClientError("invalid_client", f"the client metadata document at {url} names another client_id")
        uris = document.get("redirect_uris")
        if not isinstance(uris, list) or not uris:
            raise ClientError("invalid_client", f"the client metadata document at {url} lists no redirect_uris")
        method = document.get("token_endpoint_auth_method", "none")
        if method != "none":
            raise ClientError("invalid_client", f"a client metadata document client must be public, not {method!r}")
        name = document.get("client_name")
        redirect_uris = tuple(check_redirect_uri(u) for u in cast("list[Any]", uris))
        return ProxyClient(url, redirect_uris, client_name=name if isinstance(name, str) else None)


async def _fetch_document(url: str) -> dict[str, Any]:
    """The JSON object at `url`: no redirects, at most `MAX_CIMD_BYTES`, within 5 s."""
    where = f"the client metadata document at {url}"
    try:
        async with httpx.AsyncClient(timeout=5.0, follow_redirects=False) as http:
            status, document = await get_json(http, url, MAX_CIMD_BYTES)
    except DiscoveryError as exc:
        raise ClientError("invalid_client", f"{where} could not be fetched: {exc}") from None
    if status != 200:
        raise ClientError("invalid_client", f"{where}: HTTP {status}")
    if not isinstance(document, dict):
        raise ClientError("invalid_client", f"{where} is not a JSON object")
    return cast("dict[str, Any]", document)
