"""The OAuth client's pieces on their own: WWW-Authenticate parsing, PKCE, the authorization-response
checks (RFC 9207 table, state), scope selection, token endpoint auth choice, token responses, storage."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from mcp_bindings.runtime.auth import (
    AuthorizationDeniedError,
    AuthorizationResponse,
    AuthorizationServerMetadata,
    ClientCredentials,
    Discovery,
    InMemoryTokenStorage,
    IssuerParameterError,
    JsonFileTokenStorage,
    OAuthClientAuth,
    OAuthTokens,
    ProtectedResourceMetadata,
    StateMismatchError,
    TokenRequestError,
    bearer_challenge,
    check_authorization_response,
    format_challenge,
    parse_challenges,
    pkce_pair,
)
from mcp_bindings.runtime.auth.errors import AuthorizationError, OAuthError
from mcp_bindings.runtime.auth.grants import basic_credentials, parse_token_response, token_auth_method
from mcp_bindings.runtime.auth.registration import _registration_auth_method  # pyright: ignore[reportPrivateUsage]
from mcp_bindings.runtime.auth.scopes import select_scope

ISSUER = "https://as.example.com"


# -- WWW-Authenticate --------------------------------------------------------------------------


def test_parse_bearer_challenge() -> None:
    c = bearer_challenge(
        'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read"'
    )
    assert c is not None
    assert c.resource_metadata == "https://mcp.example.com/.well-known/oauth-protected-resource"
    assert c.scopes == ["files:read"] and c.error is None


def test_parse_several_challenges_and_quirks() -> None:
    found = parse_challenges(
        [
            'Basic realm="x", Bearer error="insufficient_scope",scope="a b" , error_description="need \\"b\\""',
            "Negotiate abc==",
            "bearer Scope=token68like, REALM=r",
        ]
    )
    assert [c.scheme for c in found] == ["basic", "bearer", "negotiate", "bearer"]
    assert found[1].error == "insufficient_scope" and found[1].scopes == ["a", "b"]
    assert found[1].error_description == 'need "b"'
    assert found[2].token68 == "abc=="
    assert found[3].params == {"scope": "token68like", "realm": "r"}
    assert bearer_challenge("Basic realm=x") is None
    assert parse_challenges("") == [] and parse_challenges(', ,"junk') == []


def test_format_challenge_round_trips() -> None:
    text = format_challenge("Bearer", {"error": "insufficient_scope", "scope": 'a "b"\\', "x": None})
    assert text == 'Bearer error="insufficient_scope", scope="a \\"b\\"\\\\"'
    c = bearer_challenge(text)
    assert c is not None and c.scope == 'a "b"\\' and "x" not in c.params


# -- PKCE and client authentication ----------------------------------------------------------


def test_pkce_pair() -> None:
    verifiers = set()
    for _ in range(20):
        verifier, challenge = pkce_pair()
        assert 43 <= len(verifier) <= 128 and re.fullmatch(r"[A-Za-z0-9\-._~]+", verifier)
        expected = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        assert challenge == expected
        verifiers.add(verifier)
    assert len(verifiers) == 20


def test_basic_credentials_are_form_encoded() -> None:
    header = basic_credentials("id:1", "p@ss word")
    assert base64.b64decode(header.removeprefix("Basic ")).decode() == "id%3A1:p%40ss+word"


# -- authorization response (RFC 9207 table, state) ------------------------------------------


def metadata(iss_supported: bool = False, **extra: Any) -> AuthorizationServerMetadata:
    return AuthorizationServerMetadata(
        issuer=ISSUER,
        authorization_endpoint=ISSUER + "/authorize",
        token_endpoint=ISSUER + "/token",
        authorization_response_iss_parameter_supported=iss_supported,
        url=ISSUER + "/.well-known/x",
        **extra,
    )


def response(**params: str) -> AuthorizationResponse:
    return AuthorizationResponse(params)


@pytest.mark.parametrize(
    ("supported", "iss", "ok"),
    [
        (True, ISSUER, True),  # present and equal
        (True, None, False),  # advertised but absent
        (False, ISSUER, True),
        (False, None, True),  # neither: proceed
        (False, "https://evil.example.com", False),  # unadvertised but wrong
        (True, ISSUER + "/", False),  # normalization-equivalent is still different
        (True, "HTTPS://AS.EXAMPLE.COM", False),
        (True, "https://as.example.com:443", False),
    ],
)
def test_iss_validation(supported: bool, iss: str | None, ok: bool) -> None:
    params = {"code": "c", "state": "s"} | ({"iss": iss} if iss is not None else {})
    if ok:
        check_authorization_response(response(**params), expected_state="s", metadata=metadata(supported))
    else:
        with pytest.raises(IssuerParameterError):
            check_authorization_response(response(**params), expected_state="s", metadata=metadata(supported))


def test_iss_is_checked_before_an_error_is_believed() -> None:
    bad = response(error="access_denied", state="s", iss="https://evil.example.com")
    with pytest.raises(IssuerParameterError):
        check_authorization_response(bad, expected_state="s", metadata=metadata(True))
    with pytest.raises(AuthorizationDeniedError, match="access_denied"):
        check_authorization_response(
            response(error="access_denied", state="s", iss=ISSUER), expected_state="s", metadata=metadata(True)
        )


@pytest.mark.parametrize("state", [None, "other", "", "s\u00e9"])
def test_state_must_match(state: str | None) -> None:
    params = {"code": "c"} | ({"state": state} if state is not None else {})
    with pytest.raises(StateMismatchError):
        check_authorization_response(response(**params), expected_state="s", metadata=metadata())


def test_no_code_no_error() -> None:
    with pytest.raises(AuthorizationError, match="neither a code"):
        check_authorization_response(response(state="s"), expected_state="s", metadata=metadata())


def test_authorization_response_from_url() -> None:
    r = AuthorizationResponse.from_url("http://127.0.0.1/cb?code=a%2Bb&state=x&iss=https%3A%2F%2Fas&code=second")
    assert (r.code, r.state, r.iss) == ("a+b", "x", "https://as")


# -- scope selection --------------------------------------------------------------------------


def found(
    prm_scopes: tuple[str, ...] | None = None,
    as_scopes: tuple[str, ...] | None = None,
    grants: tuple[str, ...] | None = ("authorization_code", "refresh_token"),
) -> Discovery:
    prm = ProtectedResourceMetadata("https://mcp.example.com/mcp", (ISSUER,), prm_scopes)
    return Discovery(
        "https://mcp.example.com/mcp",
        prm.resource,
        metadata(scopes_supported=as_scopes, grant_types_supported=grants),
        prm,
    )


def select(d: Discovery, challenge_scope: str | None = None, previous: str | None = None, **kw: Any) -> str | None:
    header = "Bearer" + (f' scope="{challenge_scope}"' if challenge_scope else "")
    auth = OAuthClientAuth(**kw)  # its options, as the flow passes them
    return select_scope(
        d, bearer_challenge(header), previous, configured=auth.scope, offline_access=auth.request_offline_access
    )


def test_scope_selection_order() -> None:
    assert select(found(("a", "b")), "x") == "x"  # the challenge wins, exactly
    assert select(found(("a", "b"))) == "a b"  # else every scopes_supported
    assert select(found(None)) is None  # else omitted
    assert select(found(("a",)), "x", scope="forced") == "forced"


def test_step_up_unions_previous_scopes() -> None:
    assert select(found(("mcp:profile",)), "mcp:write", previous="mcp:basic") == "mcp:basic mcp:write"
    assert select(found(), "b a", previous="a c") == "a c b"


def test_offline_access_rules() -> None:
    offered = ("a", "offline_access")
    assert select(found(("a",), offered)) == "a offline_access"
    assert select(found(("a",), offered), request_offline_access=False) == "a"
    assert select(found(("a",), ("a",))) == "a"  # not offered by the AS
    assert select(found(("a",), offered, grants=("authorization_code",))) == "a"  # no refresh_token grant
    assert select(found(None, offered)) is None  # never offline_access alone
    assert select(found(("a",), offered), previous="a offline_access") == "a offline_access"


# -- token endpoint auth method ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("client", "supported", "expected"),
    [
        (ClientCredentials("c", "s"), None, "client_secret_basic"),
        (ClientCredentials("c", "s"), ("client_secret_post",), "client_secret_post"),
        (ClientCredentials("c", "s"), ("client_secret_basic", "client_secret_post"), "client_secret_basic"),
        (ClientCredentials("c"), ("client_secret_basic",), "none"),
        (ClientCredentials("c", "s", "client_secret_post"), ("client_secret_basic",), "client_secret_post"),
        (ClientCredentials("c", None, "client_secret_basic"), None, "none"),
    ],
)
def test_token_auth_method(client: ClientCredentials, supported: tuple[str, ...] | None, expected: str) -> None:
    meta = metadata(token_endpoint_auth_methods_supported=supported)
    assert token_auth_method(client, meta) == expected


def test_unsupported_token_auth_method() -> None:
    with pytest.raises(OAuthError, match="private_key_jwt"):
        token_auth_method(ClientCredentials("c", "s", "private_key_jwt"), metadata())


def test_registration_auth_method_prefers_a_public_client() -> None:
    pick = _registration_auth_method  # pyright: ignore[reportPrivateUsage]
    assert pick(metadata(token_endpoint_auth_methods_supported=("client_secret_basic", "none"))) == "none"
    assert pick(metadata(token_endpoint_auth_methods_supported=("client_secret_post",))) == "client_secret_post"
    assert pick(metadata()) == "client_secret_basic"


def test_application_type() -> None:
    from mcp_bindings.runtime.auth import CallbackAuthorizationHandler

    async def cb(url: str) -> str:
        return url

    def app_type(redirect: str) -> str:
        registrar = OAuthClientAuth(CallbackAuthorizationHandler(redirect, cb)).registrar
        return registrar._application_type()  # pyright: ignore[reportPrivateUsage]

    assert app_type("http://127.0.0.1:3000/cb") == "native"
    assert app_type("http://localhost/cb") == "native"
    assert app_type("com.example.app:/cb") == "native"
    assert app_type("https://app.example.com/cb") == "web"


def test_cimd_url_must_be_https_with_a_path() -> None:
    for bad in ("http://example.com/c.json", "https://example.com", "https://example.com/"):
        with pytest.raises(ValueError):
            OAuthClientAuth(client_metadata_url=bad)
    doc = OAuthClientAuth(client_metadata_url="https://example.com/c.json", client_name="n").client_metadata_document()
    assert doc["client_id"] == "https://example.com/c.json" and doc["client_name"] == "n"
    assert "refresh_token" in doc["grant_types"] and doc["redirect_uris"]


# -- token responses ------------------------------------------------------------------------------


def test_token_response_parsing() -> None:
    tokens = parse_token_response(
        {"access_token": "t", "token_type": "bearer", "expires_in": 60, "refresh_token": "r"},
        issuer=ISSUER,
        resource="https://r",
        requested_scope="a b",
    )
    assert tokens.access_token == "t" and tokens.refresh_token == "r" and tokens.scope == "a b"
    assert tokens.expires_at is not None and not tokens.expired(skew=0)
    for bad in (
        None,
        {},
        {"access_token": ""},
        {"access_token": "t", "token_type": "DPoP"},
        {"access_token": "t", "token_type": "mac"},
    ):
        with pytest.raises(TokenRequestError):
            parse_token_response(bad, issuer=ISSUER, resource="r", requested_scope=None)


def test_expiry() -> None:
    tokens = OAuthTokens("t", ISSUER, "r", expires_at=1000.0)
    assert tokens.expired(skew=0, now=1000.0) and not tokens.expired(skew=0, now=999.0)
    assert tokens.expired(skew=30, now=975.0)
    assert not OAuthTokens("t", ISSUER, "r").expired()


# -- storage ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_in_memory_storage() -> None:
    storage = InMemoryTokenStorage()
    client = ClientCredentials("c", "s", issuer=ISSUER)
    await storage.set_client(ISSUER, client)
    assert await storage.get_client(ISSUER) == client and await storage.get_client("other") is None
    await storage.delete_client(ISSUER)
    assert await storage.get_client(ISSUER) is None


@pytest.mark.anyio
async def test_json_file_storage(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "oauth.json"
    storage = JsonFileTokenStorage(path)
    client = ClientCredentials("c", "s", "client_secret_post", ISSUER, ("http://127.0.0.1/cb",), 0, {"x": 1})
    tokens = OAuthTokens("t", ISSUER, "https://r", expires_at=5.0, refresh_token="rt", scope="a", requested_scope="a")
    await storage.set_client(ISSUER, client)
    await storage.set_tokens("https://r", tokens)
    again = JsonFileTokenStorage(path)
    assert await again.get_client(ISSUER) == client
    assert await again.get_tokens("https://r") == tokens
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    await again.delete_tokens("https://r")
    assert await storage.get_tokens("https://r") is None and await storage.get_client(ISSUER) == client
    assert list(tmp_path.joinpath("sub").iterdir()) == [path]  # no temporary files left behind


@pytest.mark.anyio
async def test_json_file_storage_survives_garbage(tmp_path: Path) -> None:
    path = tmp_path / "oauth.json"
    path.write_text("{not json")
    storage = JsonFileTokenStorage(path)
    assert await storage.get_tokens("x") is None
    await storage.set_tokens("x", OAuthTokens("t", ISSUER, "x"))
    assert json.loads(path.read_text())["tokens"]["x"]["access_token"] == "t"
    path.write_text(json.dumps({"version": 1, "clients": {ISSUER: {"unexpected": True}}, "tokens": {}}))
    assert await storage.get_client(ISSUER) is None


def test_client_secret_expiry() -> None:
    assert ClientCredentials("c", "s", client_secret_expires_at=10).expired(now=11)
    assert not ClientCredentials("c", "s", client_secret_expires_at=0).expired(now=11)
    assert not ClientCredentials("c", "s").expired()
