"""The proxy's token side: authorization codes, the token endpoint's two grants, revocation, and the
verifier the resource server checks the proxy's access tokens with.

* An authorization code is single-use and short-lived; a second use is refused and revokes what the
  first one obtained (RFC 6749 §4.1.2). It is bound to its client, its redirect URI (the token
  request must name the same one) and its PKCE S256 challenge.
* Access tokens are ES256 JWTs signed by the proxy (`iss` the proxy, `aud` the MCP server's resource,
  `sub` the upstream user, `client_id`, `scope`, `sid` the grant): never the upstream token, which
  stays in the sealed store with the grant.
* Refresh tokens rotate: each use returns a new one; a used one presented again revokes the whole
  grant (OAuth 2.1 §4.3.1, refresh token replay).
* Revocation (RFC 7009) of either token ends the grant: its access tokens stop verifying at once
  (the verifier checks the grant is alive)."""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp_bindings.runtime.auth.dpop import b64url_sha256
from mcp_bindings.runtime.auth.proxy.clients import ProxyClient, Refused
from mcp_bindings.runtime.auth.proxy.store import ProxyKeys, SealedRecords
from mcp_bindings.runtime.auth.verifiers import AccessToken, InvalidTokenError, JWTVerifier


class TokenError(Refused):
    """A token request refused (RFC 6749 §5.2)."""


@dataclass(frozen=True)
class Lifetimes:
    code_s: float = 300.0
    access_s: float = 3600.0
    refresh_s: float = 30 * 86400.0


class Grants:
    """Codes, grants and tokens of one proxy (its issuer) for one MCP server (its resource)."""

    def __init__(self, records: SealedRecords, keys: ProxyKeys, *, issuer: str, resource: str, ttl: Lifetimes) -> None:
        self.records = records
        self.keys = keys
        self.issuer = issuer
        self.resource = resource
        self.ttl = ttl

    async def issue_code(
        self, request: Mapping[str, Any], subject: str, claims: Mapping[str, Any], upstream: Any
    ) -> str:
        """A fresh code for the authorization `request` (client, redirect URI, challenge, scope) of
        the user `subject`; `upstream`: the provider's token response, kept with the grant."""
        code = secrets.token_urlsafe(32)
        record = {
            **{k: request[k] for k in ("client_id", "redirect_uri", "code_challenge", "scope")},
            "subject": subject,
            "claims": dict(claims),
            "upstream": upstream,
        }
        await self.records.put(f"code:{b64url_sha256(code)}", record, self.ttl.code_s)
        return code

    async def redeem_code(self, form: Mapping[str, str], client: ProxyClient) -> dict[str, Any]:
        """The `authorization_code` grant: the token response, or `TokenError`."""
        code = form.get("code") or ""
        key = b64url_sha256(code)
        record = await self.records.take(f"code:{key}")
        if record is None:
            spent = await self.records.get(f"spent-code:{key}")
            if spent is not None:
                await self._end(str(spent["grant"]))
                raise TokenError("invalid_grant", "the authorization code was already used; its tokens are revoked")
            raise TokenError("invalid_grant", "unknown or expired authorization code")
        if record["client_id"] != client.client_id:
            raise TokenError("invalid_grant", "the authorization code was issued to another client")
        if form.get("redirect_uri") != record["redirect_uri"]:
            raise TokenError("invalid_grant", "redirect_uri is not the one of the authorization request")
        verifier = form.get("code_verifier") or ""
        if not verifier or not hmac.compare_digest(b64url_sha256(verifier), str(record["code_challenge"])):
            raise TokenError("invalid_grant", "code_verifier does not match the code_challenge (PKCE S256)")
        resource = form.get("resource")
        if resource is not None and resource != self.resource:
            raise TokenError("invalid_target", f"this authorization server issues tokens for {self.resource} only")
        grant = secrets.token_urlsafe(18)
        fields = ("client_id", "subject", "scope", "claims", "upstream")
        await self.records.put(f"grant:{grant}", {k: record[k] for k in fields}, self.ttl.refresh_s)
        await self.records.put(f"spent-code:{key}", {"grant": grant}, self.ttl.refresh_s)
        return await self._tokens(grant, record, str(record["scope"]))

    async def refresh(self, form: Mapping[str, str], client: ProxyClient) -> dict[str, Any]:
        """The `refresh_token` grant, rotating the refresh token; a replayed one ends the grant."""
        key = b64url_sha256(form.get("refresh_token") or "")
        record = await self.records.take(f"refresh:{key}")
        if record is None:
            spent = await self.records.get(f"spent-refresh:{key}")
            if spent is not None:
                await self._end(str(spent["grant"]))
                raise TokenError("invalid_grant", "the refresh token was already used; the grant is revoked")
            raise TokenError("invalid_grant", "unknown, expired or revoked refresh token")
        grant_id = str(record["grant"])
        await self.records.put(f"spent-refresh:{key}", {"grant": grant_id}, self.ttl.refresh_s)
        grant = await self.records.get(f"grant:{grant_id}")
        if grant is None:
            raise TokenError("invalid_grant", "the grant of this refresh token was revoked")
        if grant["client_id"] != client.client_id:
            await self._end(grant_id)
            raise TokenError("invalid_grant", "the refresh token was issued to another client")
        scope = str(grant["scope"])
        asked = form.get("scope")
        if asked is not None:
            if not set(asked.split()) <= set(scope.split()):
                raise TokenError("invalid_scope", f"a refresh can only narrow the granted scope ({scope!r})")
            scope = asked
        return await self._tokens(grant_id, grant, scope)

    async def revoke(self, token: str, client: ProxyClient) -> None:
        """RFC 7009: end the grant of a refresh or access token of `client` (unknown tokens: nothing)."""
        record = await self.records.get(f"refresh:{b64url_sha256(token)}")
        grant_id = str(record["grant"]) if record is not None else self._access_grant(token)
        if grant_id is None:
            return
        grant = await self.records.get(f"grant:{grant_id}")
        if grant is not None and grant["client_id"] == client.client_id:
            await self._end(grant_id)

    def _access_grant(self, token: str) -> str | None:
        import jwt

        try:
            claims = jwt.decode(token, self.keys.signing_key.public_key(), algorithms=["ES256"], audience=self.resource)
        except jwt.PyJWTError:
            return None
        sid = claims.get("sid")
        return sid if isinstance(sid, str) else None

    async def _end(self, grant_id: str) -> None:
        await self.records.delete(f"grant:{grant_id}")

    async def _tokens(self, grant_id: str, grant: Mapping[str, Any], scope: str) -> dict[str, Any]:
        import jwt

        now = int(time.time())
        claims = {
            **dict(grant.get("claims") or {}),
            "iss": self.issuer,
            "sub": grant["subject"],
            "aud": self.resource,
            "client_id": grant["client_id"],
            "scope": scope,
            "iat": now,
            "exp": now + int(self.ttl.access_s),
            "jti": secrets.token_urlsafe(12),
            "sid": grant_id,
        }
        headers = {"kid": self.keys.kid, "typ": "at+jwt"}
        access = jwt.encode(claims, self.keys.signing_key, algorithm="ES256", headers=headers)
        refresh = secrets.token_urlsafe(32)
        record = {"grant": grant_id, "client_id": grant["client_id"]}
        await self.records.put(f"refresh:{b64url_sha256(refresh)}", record, self.ttl.refresh_s)
        return {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": int(self.ttl.access_s),
            "refresh_token": refresh,
            "scope": scope,
        }


class ProxyVerifier:
    """The resource server's check of the proxy's access tokens: the signature (the proxy's ES256
    key), `iss`, `exp`, `aud` = this resource (`JWTVerifier`), then that the grant is still alive
    (not revoked, its refresh token not replayed)."""

    def __init__(self, keys: ProxyKeys, records: SealedRecords, issuer: str) -> None:
        self.records = records
        self.jwt = JWTVerifier(issuer=issuer, jwks=keys.jwks, algorithms=("ES256",), require_typ="at+jwt")

    async def verify(self, token: str, *, resource: str) -> AccessToken:
        info = await self.jwt.verify(token, resource=resource)
        sid = info.claims.get("sid")
        if not isinstance(sid, str) or await self.records.get(f"grant:{sid}") is None:
            raise InvalidTokenError("the token's grant was revoked")
        return info
