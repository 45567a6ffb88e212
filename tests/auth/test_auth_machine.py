"""Machine clients on 127.0.0.1: the client credentials grant (client_secret_basic, private_key_jwt),
workload identity federation (JWT bearer with a platform token), enterprise-managed authorization
(token exchange at the IdP, then JWT bearer) and RFC 7009 revocation on logout, each through our
`OAuthClientAuth` against the test authorization server and the echo MCP server behind `require_bearer`.

Happy paths go through `connect_http`; failure paths through a plain `httpx.AsyncClient(auth=...)`,
where the exact exception is visible."""

from __future__ import annotations

import time
from typing import Any

import anyio
import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from mcp_bindings.runtime.auth import (
    ClientCredentialsGrant,
    ClientSecretBasic,
    EnterpriseManagedGrant,
    HeadlessAuthorizationHandler,
    IntrospectionVerifier,
    JwtBearerGrant,
    OAuthClientAuth,
    PkceNotSupportedError,
    PrivateKeyJwt,
    PublicClient,
    TokenRequestError,
)
from tests.peers.auth_harness import READ, Stack, oauth_stack
from tests.peers.auth_server import AuthServerOptions
from tests.support.auth import STATELESS_BODY, STATELESS_HEADERS, call_echo, raw_list_tools

pytestmark = pytest.mark.anyio
LIMIT = 30
CC = "client_credentials"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
PLATFORM = "https://platform.example.test"


def pem_of(key: ec.EllipticCurvePrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode("ascii")


def cc_options(**extra: Any) -> AuthServerOptions:
    key = ec.generate_private_key(ec.SECP256R1())
    options = AuthServerOptions(
        grant_types=(CC,),
        token_auth_methods=("client_secret_basic", "private_key_jwt"),
        registration="disabled",
        preregistered={
            "svc": {"client_id": "svc", "client_secret": "s3cret", "token_endpoint_auth_method": "client_secret_basic"},
            "signer": {
                "client_id": "signer",
                "token_endpoint_auth_method": "private_key_jwt",
                "public_key": key.public_key(),
            },
        },
        **extra,
    )
    options.preregistered["signer"]["private_key"] = key  # kept for the test (the server only reads public_key)
    return options


def platform_token(key: ec.EllipticCurvePrivateKey, audience: str, *, lifetime: int = 300) -> str:
    now = int(time.time())
    claims = {"iss": PLATFORM, "sub": "workload-7", "aud": audience, "iat": now, "exp": now + lifetime}
    return jwt.encode(claims, key, algorithm="ES256")


async def expect_refusal(stack: Stack, auth: OAuthClientAuth) -> TokenRequestError:
    with pytest.raises(TokenRequestError) as caught:
        await raw_list_tools(stack, auth)
    return caught.value


# -- client credentials ---------------------------------------------------------------------------


async def test_client_credentials_basic_happy_path() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(cc_options()) as stack:
            auth = OAuthClientAuth(grant=ClientCredentialsGrant(ClientSecretBasic("svc", "s3cret")))
            assert await call_echo(stack, auth) == "hi"
            (token_request,) = stack.auth.of("/token")
            assert token_request.headers["authorization"].startswith("Basic ")
            assert token_request.params["grant_type"] == CC
            assert token_request.params["resource"] == stack.mcp_url
            assert token_request.params["scope"] == READ  # the challenge's scope, as in the core flow
            assert stack.seen[-1].subject == "svc" and READ in stack.seen[-1].scopes
            assert not stack.auth.of("/authorize") and not stack.auth.of("/register")


async def test_client_credentials_wrong_secret_is_refused_once() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(cc_options()) as stack:
            auth = OAuthClientAuth(grant=ClientCredentialsGrant(ClientSecretBasic("svc", "wrong")))
            error = await expect_refusal(stack, auth)
            assert error.error == "invalid_client" and error.status_code == 401
            assert len(stack.auth.of("/token")) == 1


async def test_private_key_jwt_happy_path() -> None:
    with anyio.fail_after(LIMIT):
        options = cc_options()
        async with oauth_stack(options) as stack:
            key = PrivateKeyJwt("signer", pem_of(options.preregistered["signer"]["private_key"]))
            auth = OAuthClientAuth(grant=ClientCredentialsGrant(key))
            assert await call_echo(stack, auth) == "hi"
            (token_request,) = stack.auth.of("/token")
            assertion = jwt.decode(token_request.params["client_assertion"], options={"verify_signature": False})
            assert assertion["iss"] == assertion["sub"] == "signer"
            assert assertion["aud"] == stack.auth.issuer
            assert "authorization" not in token_request.headers


async def test_private_key_jwt_with_another_key_or_audience_is_refused() -> None:
    with anyio.fail_after(LIMIT):
        options = cc_options()
        async with oauth_stack(options) as stack:
            stranger = PrivateKeyJwt("signer", ec.generate_private_key(ec.SECP256R1()))
            error = await expect_refusal(stack, OAuthClientAuth(grant=ClientCredentialsGrant(stranger)))
            assert error.error == "invalid_client"
            right_key = options.preregistered["signer"]["private_key"]
            elsewhere = PrivateKeyJwt("signer", right_key, audience="https://other-as.example.test")
            error = await expect_refusal(stack, OAuthClientAuth(grant=ClientCredentialsGrant(elsewhere)))
            assert error.error == "invalid_client"


async def test_machine_only_server_without_pkce_or_authorization_endpoint() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(cc_options(code_challenge_methods=None, authorization_endpoint=False)) as stack:
            auth = OAuthClientAuth(grant=ClientCredentialsGrant(ClientSecretBasic("svc", "s3cret")))
            assert (await raw_list_tools(stack, auth)).status_code == 200
            browser_flow = OAuthClientAuth(HeadlessAuthorizationHandler())
            with pytest.raises(PkceNotSupportedError):  # the authorization code flow still insists on PKCE
                await raw_list_tools(stack, browser_flow)


def test_private_key_jwt_rejects_unreadable_keys_and_symmetric_algorithms() -> None:
    with pytest.raises(ValueError, match="readable PEM"):
        PrivateKeyJwt("c", "not a key")
    with pytest.raises(ValueError, match="asymmetric"):
        PrivateKeyJwt("c", ec.generate_private_key(ec.SECP256R1()), algorithm="HS256")


async def test_expired_machine_token_is_obtained_again_without_refresh() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(cc_options(access_token_lifetime=1)) as stack:
            auth = OAuthClientAuth(grant=ClientCredentialsGrant(ClientSecretBasic("svc", "s3cret")), refresh_skew=0)
            assert (await raw_list_tools(stack, auth)).status_code == 200
            await anyio.sleep(2.1)
            assert (await raw_list_tools(stack, auth)).status_code == 200
            grants = [r.params["grant_type"] for r in stack.auth.of("/token")]
            assert grants == [CC, CC]


# -- workload identity federation (JWT bearer) ---------------------------------------------------


def wif_options(platform_key: ec.EllipticCurvePrivateKey) -> AuthServerOptions:
    return AuthServerOptions(
        grant_types=(JWT_BEARER,),
        token_auth_methods=("none",),
        registration="disabled",
        trusted_issuers={PLATFORM: platform_key.public_key()},
        preregistered={"workload": {"client_id": "workload", "token_endpoint_auth_method": "none"}},
    )


async def test_workload_identity_happy_path_with_a_fresh_token_per_grant() -> None:
    platform = ec.generate_private_key(ec.SECP256R1())
    with anyio.fail_after(LIMIT):
        async with oauth_stack(wif_options(platform)) as stack:
            minted: list[str] = []

            async def platform_token_source() -> str:  # e.g. read a projected service-account token
                minted.append(platform_token(platform, stack.auth.issuer))
                return minted[-1]

            auth = OAuthClientAuth(grant=JwtBearerGrant(platform_token_source, client_id="workload"))
            assert await call_echo(stack, auth) == "hi"
            (token_request,) = stack.auth.of("/token")
            assert token_request.params["grant_type"] == JWT_BEARER
            assert token_request.params["assertion"] == minted[0]
            assert token_request.params["client_id"] == "workload"
            assert stack.seen[-1].subject == "workload-7"


async def test_workload_identity_without_client_id_for_the_token_endpoint() -> None:
    """The WIF profile: no client_id, the assertion's audience the token endpoint."""
    platform = ec.generate_private_key(ec.SECP256R1())
    with anyio.fail_after(LIMIT):
        async with oauth_stack(wif_options(platform)) as stack:
            auth = OAuthClientAuth(grant=JwtBearerGrant(platform_token(platform, stack.auth.issuer + "/token")))
            assert (await raw_list_tools(stack, auth)).status_code == 200
            (token_request,) = stack.auth.of("/token")
            assert "client_id" not in token_request.params and "authorization" not in token_request.headers


@pytest.mark.parametrize(
    ("audience", "lifetime", "why"),
    [("https://wrong.example.test", 300, "not for this authorization server"), (None, -60, "expired")],
)
async def test_workload_assertion_with_wrong_audience_or_expired_is_refused_without_retry(
    audience: str | None, lifetime: int, why: str
) -> None:
    platform = ec.generate_private_key(ec.SECP256R1())
    with anyio.fail_after(LIMIT):
        async with oauth_stack(wif_options(platform)) as stack:
            token = platform_token(platform, audience or stack.auth.issuer, lifetime=lifetime)
            auth = OAuthClientAuth(grant=JwtBearerGrant(token, client_id="workload"))
            error = await expect_refusal(stack, auth)
            assert error.error == "invalid_grant" and why in str(error)
            assert len(stack.auth.of("/token")) == 1  # no retry, no other grant type


# -- enterprise-managed authorization ------------------------------------------------------------


async def enterprise_setup(stack: Stack) -> Any:
    idp = await stack.add_auth_server(
        AuthServerOptions(
            grant_types=("urn:ietf:params:oauth:grant-type:token-exchange",),
            token_auth_methods=("none",),
            registration="disabled",
            jag_client_id="mcp-client",
            preregistered={"idp-client": {"client_id": "idp-client", "token_endpoint_auth_method": "none"}},
        )
    )
    stack.auth.options.trusted_issuers[idp.issuer] = idp.key.public_key()
    stack.auth.clients["mcp-client"] = {
        "client_id": "mcp-client",
        "client_secret": "mcp-secret",
        "token_endpoint_auth_method": "client_secret_basic",
    }
    return idp


def id_token(idp: Any, audience: str = "idp-client") -> str:
    now = int(time.time())
    return idp.sign({"iss": idp.issuer, "sub": "alice@example.test", "aud": audience, "iat": now, "exp": now + 300})


def enterprise_grant(idp: Any, assertion: str) -> EnterpriseManagedGrant:
    return EnterpriseManagedGrant(
        identity_assertion=assertion,
        idp_token_endpoint=idp.issuer + "/token",
        idp_client=PublicClient("idp-client"),
        client=ClientSecretBasic("mcp-client", "mcp-secret"),
    )


async def test_enterprise_managed_authorization_happy_path() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(AuthServerOptions(grant_types=(JWT_BEARER,), registration="disabled")) as stack:
            idp = await enterprise_setup(stack)
            auth = OAuthClientAuth(grant=enterprise_grant(idp, id_token(idp)))
            assert await call_echo(stack, auth) == "hi"
            (exchange,) = idp.of("/token")
            assert exchange.params["audience"] == stack.auth.issuer
            assert exchange.params["resource"] == stack.mcp_url
            assert exchange.params["requested_token_type"] == "urn:ietf:params:oauth:token-type:id-jag"
            (bearer,) = stack.auth.of("/token")
            assert bearer.params["grant_type"] == JWT_BEARER
            assert jwt.get_unverified_header(bearer.params["assertion"])["typ"] == "oauth-id-jag+jwt"
            assert bearer.headers["authorization"].startswith("Basic ")
            assert stack.seen[-1].subject == "alice@example.test"


async def test_enterprise_identity_assertion_for_another_client_is_refused_by_the_idp() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(AuthServerOptions(grant_types=(JWT_BEARER,), registration="disabled")) as stack:
            idp = await enterprise_setup(stack)
            auth = OAuthClientAuth(grant=enterprise_grant(idp, id_token(idp, audience="someone-else")))
            error = await expect_refusal(stack, auth)
            assert error.error == "invalid_grant" and "IdP refused the token exchange" in str(error)
            assert not stack.auth.of("/token")


# -- revocation ----------------------------------------------------------------------------------


async def test_logout_revokes_and_the_revoked_token_is_refused() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(cc_options(revocation=True)) as stack:
            stack.verifier.current = IntrospectionVerifier(
                stack.auth.issuer + "/introspect", client_id="svc", client_secret="s3cret"
            )
            auth = OAuthClientAuth(grant=ClientCredentialsGrant(ClientSecretBasic("svc", "s3cret")))
            assert (await raw_list_tools(stack, auth)).status_code == 200
            assert auth.tokens is not None
            token = auth.tokens.access_token
            await auth.logout()
            (revocation,) = stack.auth.of("/revoke")
            assert revocation.params == {"token": token, "token_type_hint": "access_token"}
            assert revocation.headers["authorization"].startswith("Basic ")
            assert auth.tokens is None
            async with httpx.AsyncClient(timeout=10) as http:
                headers = {**STATELESS_HEADERS, "Authorization": f"Bearer {token}"}
                response = await http.post(stack.mcp_url, json=STATELESS_BODY, headers=headers)
            assert response.status_code == 401
            assert 'error="invalid_token"' in response.headers["www-authenticate"]


async def test_logout_without_a_revocation_endpoint_only_forgets() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(cc_options()) as stack:
            auth = OAuthClientAuth(grant=ClientCredentialsGrant(ClientSecretBasic("svc", "s3cret")))
            assert (await raw_list_tools(stack, auth)).status_code == 200
            await auth.logout()
            assert auth.tokens is None and not stack.auth.of("/revoke")


async def test_async_with_revokes_at_the_end_and_a_refused_revocation_is_not_raised() -> None:
    with anyio.fail_after(LIMIT):
        async with oauth_stack(cc_options(revocation=True)) as stack:
            async with OAuthClientAuth(grant=ClientCredentialsGrant(ClientSecretBasic("svc", "s3cret"))) as auth:
                assert (await raw_list_tools(stack, auth)).status_code == 200
            assert len(stack.auth.of("/revoke")) == 1 and auth.tokens is None
            stack.auth.clients["svc"]["client_secret"] = "rotated"  # the revocation request is now refused (401)
            auth = OAuthClientAuth(grant=ClientCredentialsGrant(ClientSecretBasic("svc", "rotated")))
            assert (await raw_list_tools(stack, auth)).status_code == 200
            stack.auth.clients["svc"]["client_secret"] = "rotated-again"
            await auth.logout()  # logged, not raised; the tokens are forgotten anyway
            assert len(stack.auth.of("/revoke")) == 2 and auth.tokens is None
