"""The authorization server's endpoints, client side: PKCE, the authorization code grant through the
user-facing handler (with the RFC 9207 and `state` checks), and token requests with the client's
authentication method. Stateless: `OAuthClientAuth` keeps the tokens."""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import httpx

from mcp_bindings.runtime.auth.client_auth import (
    ClientAuthentication,
    ClientSecretBasic,
    ClientSecretPost,
    PublicClient,
)
from mcp_bindings.runtime.auth.client_auth import (
    basic_credentials as basic_credentials,  # re-exported (resource_server, tests)
)
from mcp_bindings.runtime.auth.discovery import AuthorizationServerMetadata, Discovery
from mcp_bindings.runtime.auth.dpop import DPoPSigner, b64url_sha256
from mcp_bindings.runtime.auth.errors import (
    AuthorizationDeniedError,
    AuthorizationError,
    IssuerParameterError,
    OAuthError,
    StateMismatchError,
    TokenRequestError,
)
from mcp_bindings.runtime.auth.handlers import AuthorizationHandler, AuthorizationResponse
from mcp_bindings.runtime.auth.storage import ClientCredentials, OAuthTokens
from mcp_bindings.runtime.rpc import logs

log = logs.logger("auth")

TOKEN_AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")


def pkce_pair() -> tuple[str, str]:
    """(code_verifier, S256 code_challenge), RFC 7636 §4.1-4.2: 64 unreserved characters from a CSPRNG,
    and BASE64URL(SHA256(verifier)) without padding."""
    verifier = secrets.token_urlsafe(48)
    return verifier, b64url_sha256(verifier)


async def authorization_code_grant(
    http: httpx.AsyncClient,
    found: Discovery,
    client: ClientCredentials,
    handler: AuthorizationHandler,
    scope: str | None,
    dpop: DPoPSigner | None = None,
) -> OAuthTokens:
    """Authorization code + PKCE S256 through `handler`, then the code exchanged for tokens."""
    metadata = found.metadata
    if not metadata.authorization_endpoint:
        raise AuthorizationError(
            f"{metadata.issuer} has no authorization_endpoint (it serves machine grants only): "
            "pass OAuthClientAuth(grant=...) instead of an authorization handler"
        )
    verifier, code_challenge = pkce_pair()
    state = secrets.token_urlsafe(32)
    redirect_uri = handler.redirect_uri
    params = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": code_challenge,
        "code_challenge_method": "S256",
        "state": state,
        "resource": found.resource,
    }
    if scope:
        params["scope"] = scope
    url = with_query(metadata.authorization_endpoint, params)
    log.debug("authorizing with %s (scope %r)", metadata.issuer, scope)
    response = await handler.authorize(url)
    check_authorization_response(response, expected_state=state, metadata=metadata)
    assert response.code is not None
    data = {
        "grant_type": "authorization_code",
        "code": response.code,
        "redirect_uri": redirect_uri,
        "code_verifier": verifier,
        "resource": found.resource,
    }
    return await token_request(http, found, client, data, requested_scope=scope, dpop=dpop)


def token_auth_method(client: ClientCredentials, metadata: AuthorizationServerMetadata) -> str:
    method = client.token_endpoint_auth_method
    if method in ("client_secret_basic", "client_secret_post") and not client.client_secret:
        return "none"
    if method is not None:
        if method not in TOKEN_AUTH_METHODS:
            raise OAuthError(f"token endpoint auth method {method!r} is not supported by this client")
        return method
    if not client.client_secret:
        return "none"
    supported = metadata.token_endpoint_auth_methods_supported or ("client_secret_basic",)
    for candidate in ("client_secret_basic", "client_secret_post", "none"):
        if candidate in supported:
            return candidate
    return "client_secret_basic"


def client_authentication(client: ClientCredentials, metadata: AuthorizationServerMetadata) -> ClientAuthentication:
    """The `ClientAuthentication` of a registered client (by `token_auth_method`)."""
    method = token_auth_method(client, metadata)
    if method == "client_secret_basic":
        assert client.client_secret is not None
        return ClientSecretBasic(client.client_id, client.client_secret)
    if method == "client_secret_post":
        assert client.client_secret is not None
        return ClientSecretPost(client.client_id, client.client_secret)
    return PublicClient(client.client_id)


async def post_form(
    http: httpx.AsyncClient,
    url: str,
    data: Mapping[str, str],
    client: ClientAuthentication | None,
    *,
    issuer: str,
    dpop: DPoPSigner | None = None,
    what: str = "token request",
) -> httpx.Response:
    """POST a form to an authorization server endpoint with the client's authentication and, with
    `dpop`, a DPoP proof; a `use_dpop_nonce` answer is retried once with the server's nonce (RFC 9449 §8)."""
    response: httpx.Response | None = None
    for _ in range(2):
        form = dict(data)
        headers = {"Accept": "application/json"}
        if client is not None:
            client.apply(form, headers, issuer=issuer, endpoint=url)  # fresh per attempt (assertion jti)
        if dpop is not None:
            headers["DPoP"] = dpop.proof("POST", url)
        try:
            response = await http.post(url, data=form, headers=headers)
        except httpx.TransportError as exc:
            raise TokenRequestError(f"{what} to {url} failed: {exc}") from exc
        if dpop is None:
            break
        fresh_nonce = dpop.remember(url, response.headers.get("dpop-nonce"))
        body = json_object_of(response) if response.status_code == 400 else None
        if not (fresh_nonce and body is not None and body.get("error") == "use_dpop_nonce"):
            break
        log.debug("%s: the authorization server asked for a DPoP nonce; retrying with it", what)
    assert response is not None
    return response


def refused(what: str, response: httpx.Response, body: Mapping[str, Any] | None) -> TokenRequestError:
    """An authorization server's refusal (RFC 6749 §5.2): `what: HTTP <status> <error>: <description>`."""
    error = body.get("error") if body else None
    description = body.get("error_description") if body else None
    return TokenRequestError(
        f"{what}: HTTP {response.status_code}"
        + (f" {error}" if error else "")
        + (f": {description}" if description else ""),
        error=error if isinstance(error, str) else None,
        description=description if isinstance(description, str) else None,
        status_code=response.status_code,
    )


async def token_request(
    http: httpx.AsyncClient,
    found: Discovery,
    client: ClientCredentials | ClientAuthentication | None,
    data: dict[str, str],
    *,
    requested_scope: str | None,
    dpop: DPoPSigner | None = None,
) -> OAuthTokens:
    metadata = found.metadata
    auth = client_authentication(client, metadata) if isinstance(client, ClientCredentials) else client
    response = await post_form(http, metadata.token_endpoint, data, auth, issuer=metadata.issuer, dpop=dpop)
    body = json_object_of(response)
    if response.status_code != 200:
        raise refused(f"token endpoint refused the {data['grant_type']} grant", response, body)
    return parse_token_response(
        body, issuer=metadata.issuer, resource=found.resource, requested_scope=requested_scope, dpop=dpop is not None
    )


async def revoke_token(
    http: httpx.AsyncClient,
    endpoint: str,
    token: str,
    hint: str,
    client: ClientAuthentication | None,
    *,
    issuer: str,
) -> None:
    """RFC 7009 §2.1: POST the token (with `token_type_hint`) and the client's authentication; 200 is
    success, an unknown token included (§2.2)."""
    form = {"token": token, "token_type_hint": hint}
    response = await post_form(http, endpoint, form, client, issuer=issuer, what="token revocation")
    if response.status_code != 200:
        body = json_object_of(response)
        error = body.get("error") if body else None
        raise TokenRequestError(
            f"the revocation endpoint answered HTTP {response.status_code}" + (f" {error}" if error else ""),
            error=error if isinstance(error, str) else None,
            status_code=response.status_code,
        )


def with_query(url: str, params: Mapping[str, Any]) -> str:
    """`url` with `params` (those not None) added to its query, and no fragment (an authorization
    endpoint or a redirect URI has none: RFC 6749 §3.1, §3.1.2)."""
    parts = urlsplit(url)
    extra = urlencode({k: v for k, v in params.items() if v is not None})
    return urlunsplit(parts._replace(query=f"{parts.query}&{extra}" if parts.query else extra, fragment=""))


def json_object_of(response: httpx.Response) -> dict[str, Any] | None:
    try:
        data = response.json()
    except ValueError:
        return None
    return data if isinstance(data, dict) else None  # pyright: ignore[reportUnknownVariableType]


def check_authorization_response(
    response: AuthorizationResponse, *, expected_state: str, metadata: AuthorizationServerMetadata
) -> None:
    """RFC 9207 first (MCP 2026-07-28 table; a mismatched response is discarded unread, `error`
    included), then `state`, then `error`, then `code`."""
    iss = response.iss
    if iss is not None:
        if iss != metadata.issuer:  # simple string comparison: no normalization of any kind
            raise IssuerParameterError(
                f"the authorization response's iss {iss!r} is not the recorded issuer {metadata.issuer!r}; discarded"
            )
    elif metadata.authorization_response_iss_parameter_supported:
        raise IssuerParameterError(
            f"{metadata.issuer} advertises authorization_response_iss_parameter_supported, "
            "but the authorization response has no iss; discarded"
        )
    state = response.state
    if state is None or not hmac.compare_digest(state.encode("utf-8"), expected_state.encode("utf-8")):
        raise StateMismatchError("the authorization response's state does not match the request's; discarded")
    if response.error:
        raise AuthorizationDeniedError(response.error, response.error_description)
    if not response.code:
        raise AuthorizationError("the authorization response has neither a code nor an error")


def parse_token_response(
    body: Mapping[str, Any] | None, *, issuer: str, resource: str, requested_scope: str | None, dpop: bool = False
) -> OAuthTokens:
    if body is None:
        raise TokenRequestError("the token endpoint did not answer a JSON object")
    access_token = body.get("access_token")
    if not isinstance(access_token, str) or not access_token:
        raise TokenRequestError("the token response has no access_token")
    token_type = body.get("token_type") or "Bearer"
    kinds = {"bearer": "Bearer", "dpop": "DPoP"} if dpop else {"bearer": "Bearer"}
    if not isinstance(token_type, str) or token_type.lower() not in kinds:
        accepted = " or ".join(kinds.values())
        raise TokenRequestError(f"unsupported token_type {token_type!r} (this client uses {accepted})")
    expires_in = body.get("expires_in")
    expires_at = None
    if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool) and expires_in > 0:
        expires_at = time.time() + float(expires_in)
    refresh_token = body.get("refresh_token")
    scope = body.get("scope")
    return OAuthTokens(
        access_token=access_token,
        issuer=issuer,
        resource=resource,
        token_type=kinds[token_type.lower()],
        expires_at=expires_at,
        refresh_token=refresh_token if isinstance(refresh_token, str) and refresh_token else None,
        scope=scope if isinstance(scope, str) else requested_scope,
        requested_scope=requested_scope,
    )
