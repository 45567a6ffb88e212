"""The MCP-specific discovery order: Protected Resource Metadata (RFC 9728), then authorization server
metadata (RFC 8414 / OpenID Connect Discovery), with the fallbacks the MCP specification lists.

1. PRM: the `resource_metadata` URL of the 401's `WWW-Authenticate` when present; otherwise
   `/.well-known/oauth-protected-resource/<path of the MCP endpoint>`, then
   `/.well-known/oauth-protected-resource` at the root (2025-11-25 and 2026-07-28).
2. The PRM's `resource` must identify the server being accessed (same origin; its path the server's
   path or a parent of it). It is the `resource` parameter (RFC 8707) of every authorization and token
   request.
3. Authorization server metadata for the chosen issuer: with a path (`https://as/tenant1`) try
   `/.well-known/oauth-authorization-server/tenant1`, `/.well-known/openid-configuration/tenant1`,
   `/tenant1/.well-known/openid-configuration`; without one, `/.well-known/oauth-authorization-server`
   then `/.well-known/openid-configuration`. The document's `issuer` must equal the issuer the URL was
   built from, character for character; PKCE `S256` must be advertised.
4. 2025-03-26 servers (no PRM anywhere): the MCP server's origin is the authorization server; its
   metadata at the root well-known URLs, or, failing that, the default endpoints `/authorize`,
   `/token` and `/register`.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import SplitResult, urlsplit

import httpx

from mcp_bindings.runtime.auth.errors import (
    DiscoveryError,
    InsecureEndpointError,
    IssuerMismatchError,
    PkceNotSupportedError,
    ResourceMismatchError,
)

WELL_KNOWN_PRM = "/.well-known/oauth-protected-resource"
WELL_KNOWN_OAUTH = "/.well-known/oauth-authorization-server"
WELL_KNOWN_OIDC = "/.well-known/openid-configuration"
MAX_METADATA_BYTES = 1024 * 1024
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class ProtectedResourceMetadata:
    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None = None
    url: str | None = None  # where it was fetched
    raw: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AuthorizationServerMetadata:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    grant_types_supported: tuple[str, ...] | None = None
    token_endpoint_auth_methods_supported: tuple[str, ...] | None = None
    code_challenge_methods_supported: tuple[str, ...] | None = None
    client_id_metadata_document_supported: bool = False
    authorization_response_iss_parameter_supported: bool = False
    url: str | None = None  # where it was fetched; None for the 2025-03-26 default endpoints
    raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def legacy_defaults(self) -> bool:
        return self.url is None

    def supports_grant(self, grant: str) -> bool:
        # RFC 8414: omitted means ["authorization_code", "implicit"].
        supported = self.grant_types_supported or ("authorization_code", "implicit")
        return grant in supported


@dataclass(frozen=True)
class Discovery:
    """Everything discovered for one MCP server: whom to ask for tokens, and for which `resource`."""

    server_url: str  # the canonical URL of the MCP endpoint
    resource: str  # the RFC 8707 `resource` parameter
    metadata: AuthorizationServerMetadata
    protected_resource: ProtectedResourceMetadata | None  # None: a 2025-03-26 server without PRM

    @property
    def issuer(self) -> str:
        return self.metadata.issuer


# -- URLs ----------------------------------------------------------------------------------------


def _origin(parts: SplitResult) -> str:
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    scheme = parts.scheme.lower()
    port = parts.port
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        host = f"{host}:{port}"
    return f"{scheme}://{host}"


def origin_of(url: str) -> str:
    return _origin(urlsplit(url))


def canonical_server_url(url: str) -> str:
    """RFC 8707 / MCP canonical form: lower-case scheme and host, no default port, no fragment or
    query, and no trailing slash on an empty path."""
    parts = urlsplit(url)
    path = "" if parts.path in ("", "/") else parts.path
    return _origin(parts) + path


def protected_resource_metadata_urls(server_url: str) -> list[str]:
    """The well-known PRM URLs to try, in the MCP order (path-inserted first, then the root)."""
    parts = urlsplit(server_url)
    origin = _origin(parts)
    path = parts.path.rstrip("/")
    urls = [origin + WELL_KNOWN_PRM + path] if path else []
    urls.append(origin + WELL_KNOWN_PRM)
    return urls


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """The metadata URLs to try for an issuer, in the MCP order (RFC 8414 §3.1 and §5)."""
    parts = urlsplit(issuer)
    origin = _origin(parts)
    path = parts.path.rstrip("/")
    if path:
        return [origin + WELL_KNOWN_OAUTH + path, origin + WELL_KNOWN_OIDC + path, origin + path + WELL_KNOWN_OIDC]
    return [origin + WELL_KNOWN_OAUTH, origin + WELL_KNOWN_OIDC]


def resource_matches(resource: str, server_url: str) -> bool:
    """The PRM `resource` identifies `server_url`: same scheme, host and port (host and scheme compared
    case-insensitively, default ports elided) and its path is the server's path or a parent of it."""
    try:
        r, s = urlsplit(resource), urlsplit(server_url)
        r_port, s_port = r.port, s.port
    except ValueError:
        return False
    if not r.scheme or not r.netloc or r.fragment:
        return False
    r_scheme, s_scheme = r.scheme.lower(), s.scheme.lower()
    if r_scheme != s_scheme or (r.hostname or "") != (s.hostname or ""):
        return False
    if (r_port or _DEFAULT_PORTS.get(r_scheme)) != (s_port or _DEFAULT_PORTS.get(s_scheme)):
        return False
    r_path, s_path = r.path.rstrip("/"), s.path.rstrip("/")
    return s_path == r_path or s_path.startswith(r_path + "/")


def is_loopback_host(host: str | None) -> bool:
    if not host:
        return False
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_secure(url: str, what: str, *, allow_insecure_http: bool = False) -> None:
    """Authorization server endpoints MUST be HTTPS; plain HTTP is accepted on loopback addresses only
    (local development and tests) unless `allow_insecure_http`."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise DiscoveryError(f"{what} {url!r} is not a URL") from exc
    scheme = parts.scheme.lower()
    if scheme == "https" and parts.netloc:
        return
    if scheme == "http" and parts.netloc and (allow_insecure_http or is_loopback_host(parts.hostname)):
        return
    raise InsecureEndpointError(f"{what} {url!r} is not an https URL")


# -- fetching ------------------------------------------------------------------------------------


async def get_json(http: httpx.AsyncClient, url: str, limit: int = MAX_METADATA_BYTES) -> tuple[int, Any]:
    """(status, decoded JSON or None) of a GET of `url` (no redirects). Transport failures, and an
    answer over `limit` bytes, raise DiscoveryError."""
    try:
        async with http.stream("GET", url, headers={"Accept": "application/json"}, follow_redirects=False) as response:
            if response.status_code != 200:
                return response.status_code, None
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > limit:
                    raise DiscoveryError(f"{url}: metadata larger than {limit} bytes")
    except httpx.HTTPError as exc:
        raise DiscoveryError(f"could not fetch {url}: {exc}") from exc
    try:
        return 200, json.loads(bytes(body))
    except ValueError:
        return 200, None


def _str_tuple(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    return tuple(v for v in value if isinstance(v, str))  # pyright: ignore[reportUnknownVariableType]


def parse_protected_resource_metadata(data: Any, url: str | None = None) -> ProtectedResourceMetadata:
    if not isinstance(data, dict):
        raise DiscoveryError(f"Protected Resource Metadata at {url} is not a JSON object")
    doc: dict[str, Any] = data  # pyright: ignore[reportUnknownVariableType]
    resource = doc.get("resource")
    if not isinstance(resource, str) or not resource:
        raise DiscoveryError(f"Protected Resource Metadata at {url} has no `resource`")
    servers = _str_tuple(doc.get("authorization_servers"))
    if not servers:
        raise DiscoveryError(f"Protected Resource Metadata at {url} lists no `authorization_servers`")
    return ProtectedResourceMetadata(
        resource=resource,
        authorization_servers=servers,
        scopes_supported=_str_tuple(doc.get("scopes_supported")),
        url=url,
        raw=doc,
    )


def parse_authorization_server_metadata(
    data: Any, url: str | None = None, *, allow_insecure_http: bool = False
) -> AuthorizationServerMetadata:
    if not isinstance(data, dict):
        raise DiscoveryError(f"authorization server metadata at {url} is not a JSON object")
    doc: dict[str, Any] = data  # pyright: ignore[reportUnknownVariableType]
    issuer = doc.get("issuer")
    authorization_endpoint = doc.get("authorization_endpoint")
    token_endpoint = doc.get("token_endpoint")
    registration_endpoint = doc.get("registration_endpoint")
    if not isinstance(issuer, str) or not issuer:
        raise DiscoveryError(f"authorization server metadata at {url} has no `issuer`")
    grants = _str_tuple(doc.get("grant_types_supported"))
    if authorization_endpoint is None and grants is not None and "authorization_code" not in grants:
        authorization_endpoint = ""  # RFC 8414 §2: only required where a grant uses it (machine-only servers)
    if not isinstance(authorization_endpoint, str) or not isinstance(token_endpoint, str):
        raise DiscoveryError(f"authorization server metadata at {url} lacks authorization_endpoint/token_endpoint")
    if registration_endpoint is not None and not isinstance(registration_endpoint, str):
        registration_endpoint = None
    for what, endpoint in (
        ("authorization_endpoint", authorization_endpoint),
        ("token_endpoint", token_endpoint),
        ("registration_endpoint", registration_endpoint),
    ):
        if endpoint:
            require_secure(endpoint, what, allow_insecure_http=allow_insecure_http)
    return AuthorizationServerMetadata(
        issuer=issuer,
        authorization_endpoint=authorization_endpoint,
        token_endpoint=token_endpoint,
        registration_endpoint=registration_endpoint,
        scopes_supported=_str_tuple(doc.get("scopes_supported")),
        grant_types_supported=grants,
        token_endpoint_auth_methods_supported=_str_tuple(doc.get("token_endpoint_auth_methods_supported")),
        code_challenge_methods_supported=_str_tuple(doc.get("code_challenge_methods_supported")),
        client_id_metadata_document_supported=doc.get("client_id_metadata_document_supported") is True,
        authorization_response_iss_parameter_supported=doc.get("authorization_response_iss_parameter_supported")
        is True,
        url=url,
        raw=doc,
    )


async def fetch_protected_resource_metadata(
    http: httpx.AsyncClient, server_url: str, resource_metadata_url: str | None = None
) -> ProtectedResourceMetadata | None:
    """The server's PRM; None when no well-known location has one (a 2025-03-26 server). A
    `resource_metadata` URL from the challenge is authoritative: if it fails, discovery fails."""
    if resource_metadata_url:
        status, data = await get_json(http, resource_metadata_url)
        if data is None:
            raise DiscoveryError(
                f"Protected Resource Metadata at {resource_metadata_url}: HTTP {status}, no JSON document"
            )
        return parse_protected_resource_metadata(data, resource_metadata_url)
    for url in protected_resource_metadata_urls(server_url):
        _, data = await get_json(http, url)
        if data is not None:
            return parse_protected_resource_metadata(data, url)
    return None


async def fetch_authorization_server_metadata(
    http: httpx.AsyncClient, issuer: str, *, allow_insecure_http: bool = False
) -> AuthorizationServerMetadata | None:
    """The first metadata document, in the MCP order, whose `issuer` is exactly `issuer`. None when no
    location has a document; IssuerMismatchError when documents were found but none matched."""
    mismatch: IssuerMismatchError | None = None
    for url in authorization_server_metadata_urls(issuer):
        _, data = await get_json(http, url)
        if not isinstance(data, dict):
            continue
        found = data.get("issuer")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if found != issuer:
            mismatch = IssuerMismatchError(
                f"authorization server metadata at {url} names issuer {found!r}, expected exactly {issuer!r}"
            )
            continue
        return parse_authorization_server_metadata(data, url, allow_insecure_http=allow_insecure_http)
    if mismatch is not None:
        raise mismatch
    return None


def legacy_default_metadata(server_url: str) -> AuthorizationServerMetadata:
    """2025-03-26 "fallbacks for servers without metadata discovery": default endpoint paths at the
    MCP server's origin (the authorization base URL)."""
    origin = origin_of(server_url)
    return AuthorizationServerMetadata(
        issuer=origin,
        authorization_endpoint=origin + "/authorize",
        token_endpoint=origin + "/token",
        registration_endpoint=origin + "/register",
        code_challenge_methods_supported=("S256",),
        grant_types_supported=("authorization_code", "refresh_token"),
    )


def check_pkce(metadata: AuthorizationServerMetadata) -> None:
    if metadata.legacy_defaults:
        return  # no metadata to consult (2025-03-26 fallback): PKCE S256 is used regardless
    if "S256" not in (metadata.code_challenge_methods_supported or ()):
        raise PkceNotSupportedError(
            f"authorization server {metadata.issuer} does not advertise PKCE S256 "
            "(code_challenge_methods_supported); refusing to proceed"
        )


def choose_authorization_server(servers: Sequence[str], preferred: Sequence[str] = ()) -> str:
    """RFC 9728 §7.6 leaves the choice to the client: an issuer we already hold credentials or tokens
    for, if it is still listed, else the first one listed."""
    for issuer in preferred:
        if issuer in servers:
            return issuer
    return servers[0]


async def discover(
    http: httpx.AsyncClient,
    server_url: str,
    *,
    resource_metadata_url: str | None = None,
    preferred_issuers: Sequence[str] = (),
    allow_insecure_http: bool = False,
    require_pkce: bool = True,
) -> Discovery:
    """The full discovery for `server_url` (see the module docstring). Raises DiscoveryError (or a
    subclass: ResourceMismatchError, IssuerMismatchError, PkceNotSupportedError, InsecureEndpointError)."""
    canonical = canonical_server_url(server_url)
    prm = await fetch_protected_resource_metadata(http, server_url, resource_metadata_url)
    if prm is None:
        issuer = origin_of(server_url)
        require_secure(issuer, "authorization server", allow_insecure_http=allow_insecure_http)
        metadata = await fetch_authorization_server_metadata(http, issuer, allow_insecure_http=allow_insecure_http)
        metadata = metadata or legacy_default_metadata(server_url)
        if require_pkce:
            check_pkce(metadata)
        return Discovery(server_url=canonical, resource=canonical, metadata=metadata, protected_resource=None)
    if not resource_matches(prm.resource, server_url):
        raise ResourceMismatchError(
            f"Protected Resource Metadata at {prm.url} is for resource {prm.resource!r}, not for {canonical!r}"
        )
    issuer = choose_authorization_server(prm.authorization_servers, preferred_issuers)
    require_secure(issuer, "authorization server issuer", allow_insecure_http=allow_insecure_http)
    metadata = await fetch_authorization_server_metadata(http, issuer, allow_insecure_http=allow_insecure_http)
    if metadata is None:
        tried = ", ".join(authorization_server_metadata_urls(issuer))
        raise DiscoveryError(f"no authorization server metadata for {issuer} (tried {tried})")
    if require_pkce:  # the authorization code flow's requirement; machine grants do not use PKCE
        check_pkce(metadata)
    return Discovery(server_url=canonical, resource=prm.resource, metadata=metadata, protected_resource=prm)
