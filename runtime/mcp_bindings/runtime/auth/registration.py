"""Which client this is to an authorization server, in the spec's order: pre-registered credentials,
stored credentials for the issuer, a Client ID Metadata Document URL where the server supports
it, then Dynamic Client Registration (RFC 7591)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from mcp_bindings.runtime.auth.discovery import AuthorizationServerMetadata, Discovery, is_loopback_host
from mcp_bindings.runtime.auth.errors import RegistrationError
from mcp_bindings.runtime.auth.grants import json_object_of, refused
from mcp_bindings.runtime.auth.handlers import AuthorizationHandler
from mcp_bindings.runtime.auth.storage import ClientCredentials, TokenStorage


@dataclass(eq=False, kw_only=True)
class ClientRegistrar:
    """`OAuthClientAuth`'s registration options (`client=` is `preregistered`) and the registration
    step: `client_for` an authorization server, in the spec's order."""

    handler: AuthorizationHandler
    storage: TokenStorage
    preregistered: ClientCredentials | None = None
    client_metadata_url: str | None = None
    client_name: str = "MCP client"
    client_uri: str | None = None
    application_type: str | None = None
    extra_client_metadata: Mapping[str, Any] | None = None
    # Pre-registered credentials are bound to their issuer, or to the first one they are used with.
    preregistered_issuer: str | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.preregistered_issuer = self.preregistered.issuer if self.preregistered is not None else None

    def metadata_document(self) -> dict[str, Any]:
        """The JSON document to host at `client_metadata_url` (CIMD)."""
        if self.client_metadata_url is None:
            raise ValueError("no client_metadata_url configured")
        return {"client_id": self.client_metadata_url, **self._metadata("none")}

    def _metadata(self, auth_method: str) -> dict[str, Any]:
        """What this client says of itself (CIMD, Dynamic Client Registration)."""
        document: dict[str, Any] = {
            "client_name": self.client_name,
            "redirect_uris": [self.handler.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": auth_method,
            "application_type": self._application_type(),
        }
        if self.client_uri:
            document["client_uri"] = self.client_uri
        return document

    def _application_type(self) -> str:
        if self.application_type:
            return self.application_type
        parts = urlsplit(self.handler.redirect_uri)
        native = parts.scheme not in ("http", "https") or is_loopback_host(parts.hostname)
        return "native" if native else "web"

    async def client_for(
        self, http: httpx.AsyncClient, found: Discovery, *, register: bool = True
    ) -> ClientCredentials | None:
        issuer = found.issuer
        pre = self.preregistered
        if pre is not None:
            if self.preregistered_issuer is None:
                self.preregistered_issuer = issuer  # bound to the first issuer it is used with
            if self.preregistered_issuer == issuer:
                return pre
        stored = await self.storage.get_client(issuer)
        redirect_uri = self.handler.redirect_uri
        usable = stored is not None and stored.issuer in (None, issuer) and not stored.expired()
        if usable and stored is not None and (not stored.redirect_uris or redirect_uri in stored.redirect_uris):
            return stored
        if self.client_metadata_url and found.metadata.client_id_metadata_document_supported:
            return ClientCredentials(
                client_id=self.client_metadata_url, token_endpoint_auth_method="none", issuer=issuer
            )
        if not register:
            return None
        if found.metadata.registration_endpoint:
            client = await self._register(http, found.metadata)
            await self.storage.set_client(issuer, client)
            return client
        if pre is not None:
            raise RegistrationError(
                f"the pre-registered client is for {self.preregistered_issuer}, but the server's authorization "
                f"server is {issuer}, which offers no registration"
            )
        raise RegistrationError(
            f"no way to register with {issuer}: no pre-registered client, no Client ID Metadata Document support "
            "and no registration_endpoint"
        )

    async def forget(self, issuer: str, client: ClientCredentials) -> None:
        """Drop a registration the authorization server no longer knows (`invalid_client`)."""
        if client is not self.preregistered and client.client_id != self.client_metadata_url:
            await self.storage.delete_client(issuer)  # stale registration: register again next time

    async def _register(self, http: httpx.AsyncClient, metadata: AuthorizationServerMetadata) -> ClientCredentials:
        assert metadata.registration_endpoint is not None
        method = _registration_auth_method(metadata)
        body = {**self._metadata(method), **(self.extra_client_metadata or {})}
        try:
            response = await http.post(
                metadata.registration_endpoint, json=body, headers={"Accept": "application/json"}
            )
        except httpx.TransportError as exc:
            raise RegistrationError(
                f"dynamic client registration at {metadata.registration_endpoint} failed: {exc}"
            ) from exc
        data = json_object_of(response)
        if response.status_code not in (200, 201):
            raise RegistrationError(str(refused("dynamic client registration refused", response, data)))
        client_id = data.get("client_id") if data else None
        if not isinstance(client_id, str) or not client_id:
            raise RegistrationError("the registration response has no client_id")
        assert data is not None
        secret = data.get("client_secret")
        expires = data.get("client_secret_expires_at")
        redirect_uris = data.get("redirect_uris")
        granted_method = data.get("token_endpoint_auth_method")
        return ClientCredentials(
            client_id=client_id,
            client_secret=secret if isinstance(secret, str) and secret else None,
            token_endpoint_auth_method=granted_method if isinstance(granted_method, str) else method,
            issuer=metadata.issuer,
            redirect_uris=tuple(u for u in redirect_uris if isinstance(u, str))
            if isinstance(redirect_uris, list)
            else (self.handler.redirect_uri,),
            client_secret_expires_at=float(expires) if isinstance(expires, (int, float)) else None,
            registration=data,
        )


def _registration_auth_method(metadata: AuthorizationServerMetadata) -> str:
    supported = metadata.token_endpoint_auth_methods_supported
    if supported is None:
        return "client_secret_basic"  # RFC 8414's default for an omitted list
    for method in ("none", "client_secret_basic", "client_secret_post"):
        if method in supported:
            return method
    return "client_secret_basic"
