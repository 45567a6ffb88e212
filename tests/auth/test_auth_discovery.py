"""Discovery in the MCP order (PRM, then authorization server metadata), against in-memory servers
(httpx.MockTransport): the well-known URLs and their priority, the checks on what comes back, and the
2025-03-26 fallbacks. Mirrors the conformance scenarios auth/metadata-default, -var1, -var2, -var3,
auth/resource-mismatch, auth/metadata-issuer-mismatch and auth/2025-03-26-*."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from mcp_bindings.runtime.auth import (
    DiscoveryError,
    IssuerMismatchError,
    ResourceMismatchError,
    authorization_server_metadata_urls,
    canonical_server_url,
    discover,
    protected_resource_metadata_urls,
    resource_matches,
)
from mcp_bindings.runtime.auth.discovery import is_loopback_host, require_secure
from mcp_bindings.runtime.auth.errors import InsecureEndpointError, PkceNotSupportedError

pytestmark = pytest.mark.anyio
RS = "http://127.0.0.1:9001"
AS = "http://127.0.0.1:9002"
LIMIT = 10


def as_metadata(issuer: str, **extra: Any) -> dict[str, Any]:
    return {
        "issuer": issuer,
        "authorization_endpoint": issuer + "/authorize",
        "token_endpoint": issuer + "/token",
        "registration_endpoint": issuer + "/register",
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
        **extra,
    }


class Web:
    """URL -> JSON document; everything else 404. Records the URLs requested, in order."""

    def __init__(self, documents: dict[str, Any]) -> None:
        self.documents = documents
        self.requested: list[str] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        self.requested.append(url)
        if url in self.documents:
            return httpx.Response(200, json=self.documents[url])
        return httpx.Response(404, json={"error": "not_found"})

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handler))


async def run(web: Web, server_url: str = RS + "/mcp", resource_metadata_url: str | None = None, **kw: Any) -> Any:
    with anyio.fail_after(LIMIT):
        async with web.client() as http:
            return await discover(http, server_url, resource_metadata_url=resource_metadata_url, **kw)


# -- URL construction --------------------------------------------------------------------------


def test_well_known_urls_follow_the_spec_examples() -> None:
    assert protected_resource_metadata_urls("https://example.com/public/mcp") == [
        "https://example.com/.well-known/oauth-protected-resource/public/mcp",
        "https://example.com/.well-known/oauth-protected-resource",
    ]
    assert protected_resource_metadata_urls("https://example.com/") == [
        "https://example.com/.well-known/oauth-protected-resource"
    ]
    assert authorization_server_metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert authorization_server_metadata_urls("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]
    assert authorization_server_metadata_urls("https://auth.example.com/") == authorization_server_metadata_urls(
        "https://auth.example.com"
    )


def test_canonical_server_url() -> None:
    assert canonical_server_url("HTTPS://MCP.Example.com:443/mcp#frag") == "https://mcp.example.com/mcp"
    assert canonical_server_url("https://mcp.example.com/") == "https://mcp.example.com"
    assert canonical_server_url("http://[::1]:8080/mcp?x=1") == "http://[::1]:8080/mcp"


@pytest.mark.parametrize(
    ("resource", "server", "ok"),
    [
        ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp", True),
        ("https://mcp.example.com", "https://mcp.example.com/mcp", True),  # root PRM: the origin
        ("https://mcp.example.com/", "https://mcp.example.com/mcp", True),
        ("HTTPS://MCP.EXAMPLE.COM/mcp", "https://mcp.example.com/mcp", True),
        ("https://mcp.example.com:443/mcp", "https://mcp.example.com/mcp", True),
        ("https://evil.example.com/mcp", "https://mcp.example.com/mcp", False),
        ("https://mcp.example.com:8443/mcp", "https://mcp.example.com/mcp", False),
        ("http://mcp.example.com/mcp", "https://mcp.example.com/mcp", False),
        ("https://mcp.example.com/mcp2", "https://mcp.example.com/mcp", False),
        ("https://mcp.example.com/other", "https://mcp.example.com/mcp", False),
        ("https://mcp.example.com/mcp/deeper", "https://mcp.example.com/mcp", False),
        ("https://mcp.example.com/mcp#x", "https://mcp.example.com/mcp", False),
        ("mcp.example.com/mcp", "https://mcp.example.com/mcp", False),
    ],
)
def test_resource_matches(resource: str, server: str, ok: bool) -> None:
    assert resource_matches(resource, server) is ok


def test_secure_endpoints() -> None:
    require_secure("https://as.example.com/token", "token_endpoint")
    for local in ("http://127.0.0.1:8/t", "http://localhost/t", "http://[::1]:9/t", "http://127.5.0.1/t"):
        require_secure(local, "x")
    with pytest.raises(InsecureEndpointError):
        require_secure("http://as.example.com/token", "token_endpoint")
    require_secure("http://as.example.com/token", "token_endpoint", allow_insecure_http=True)
    assert not is_loopback_host("localhost.example.com")


# -- PRM ---------------------------------------------------------------------------------------


async def test_metadata_default_uses_the_challenge_url_and_never_the_root() -> None:
    prm_url = RS + "/.well-known/oauth-protected-resource/mcp"
    web = Web(
        {
            prm_url: {"resource": RS + "/mcp", "authorization_servers": [AS]},
            AS + "/.well-known/oauth-authorization-server": as_metadata(AS),
        }
    )
    found = await run(web, resource_metadata_url=prm_url)
    assert found.resource == RS + "/mcp" and found.issuer == AS
    assert web.requested == [prm_url, AS + "/.well-known/oauth-authorization-server"]


async def test_metadata_var1_path_based_prm_and_openid_configuration() -> None:
    web = Web(
        {
            RS + "/.well-known/oauth-protected-resource/mcp": {"resource": RS + "/mcp", "authorization_servers": [AS]},
            AS + "/.well-known/openid-configuration": as_metadata(AS),
        }
    )
    found = await run(web)
    assert found.metadata.url == AS + "/.well-known/openid-configuration"
    assert web.requested == [
        RS + "/.well-known/oauth-protected-resource/mcp",
        AS + "/.well-known/oauth-authorization-server",
        AS + "/.well-known/openid-configuration",
    ]


async def test_metadata_var2_root_prm_and_path_inserted_as_metadata() -> None:
    issuer = AS + "/tenant1"
    web = Web(
        {
            RS + "/.well-known/oauth-protected-resource": {"resource": RS, "authorization_servers": [issuer]},
            AS + "/.well-known/oauth-authorization-server/tenant1": as_metadata(issuer),
        }
    )
    found = await run(web)
    assert found.resource == RS and found.issuer == issuer
    assert AS + "/.well-known/oauth-authorization-server" not in web.requested  # the root is a failure
    assert web.requested[:2] == [
        RS + "/.well-known/oauth-protected-resource/mcp",
        RS + "/.well-known/oauth-protected-resource",
    ]


async def test_metadata_var3_custom_prm_location_and_appended_openid() -> None:
    issuer = AS + "/tenant1"
    custom = RS + "/custom/metadata/location.json"
    web = Web(
        {
            custom: {"resource": RS + "/mcp", "authorization_servers": [issuer]},
            AS + "/tenant1/.well-known/openid-configuration": as_metadata(issuer),
        }
    )
    found = await run(web, resource_metadata_url=custom)
    assert found.metadata.url == AS + "/tenant1/.well-known/openid-configuration"
    assert web.requested == [
        custom,
        AS + "/.well-known/oauth-authorization-server/tenant1",
        AS + "/.well-known/openid-configuration/tenant1",
        AS + "/tenant1/.well-known/openid-configuration",
    ]


async def test_resource_mismatch() -> None:
    web = Web(
        {
            RS + "/.well-known/oauth-protected-resource/mcp": {
                "resource": "https://evil.example.com/mcp",
                "authorization_servers": [AS],
            }
        }
    )
    with pytest.raises(ResourceMismatchError):
        await run(web)
    assert not any(u.startswith(AS) for u in web.requested)


async def test_a_failing_challenge_url_is_not_silently_replaced() -> None:
    with pytest.raises(DiscoveryError, match="HTTP 404"):
        await run(Web({}), resource_metadata_url=RS + "/missing.json")


@pytest.mark.parametrize(
    "doc",
    [
        {"authorization_servers": [AS]},
        {"resource": RS + "/mcp"},
        {"resource": RS + "/mcp", "authorization_servers": []},
        ["not", "an", "object"],
    ],
)
async def test_unusable_prm(doc: Any) -> None:
    with pytest.raises(DiscoveryError):
        await run(Web({RS + "/.well-known/oauth-protected-resource/mcp": doc}))


async def test_preferred_issuer_is_kept_when_still_listed() -> None:
    other = "http://127.0.0.1:9003"
    web = Web(
        {
            RS + "/.well-known/oauth-protected-resource/mcp": {
                "resource": RS + "/mcp",
                "authorization_servers": [AS, other],
            },
            AS + "/.well-known/oauth-authorization-server": as_metadata(AS),
            other + "/.well-known/oauth-authorization-server": as_metadata(other),
        }
    )
    assert (await run(web)).issuer == AS
    assert (await run(web, preferred_issuers=[other])).issuer == other
    assert (await run(web, preferred_issuers=["http://127.0.0.1:1"])).issuer == AS


# -- authorization server metadata -----------------------------------------------------------


def prm_for(issuer: str) -> dict[str, Any]:
    return {
        RS + "/.well-known/oauth-protected-resource/mcp": {"resource": RS + "/mcp", "authorization_servers": [issuer]}
    }


async def test_metadata_issuer_mismatch() -> None:
    web = Web(
        {**prm_for(AS), AS + "/.well-known/oauth-authorization-server": as_metadata("https://attacker.example.com")}
    )
    with pytest.raises(IssuerMismatchError, match="attacker"):
        await run(web)


async def test_issuer_comparison_is_exact() -> None:
    web = Web({**prm_for(AS), AS + "/.well-known/oauth-authorization-server": as_metadata(AS + "/")})
    with pytest.raises(IssuerMismatchError):
        await run(web)


async def test_a_mismatched_document_does_not_hide_a_good_one() -> None:
    web = Web(
        {
            **prm_for(AS),
            AS + "/.well-known/oauth-authorization-server": as_metadata("https://attacker.example.com"),
            AS + "/.well-known/openid-configuration": as_metadata(AS),
        }
    )
    assert (await run(web)).metadata.url == AS + "/.well-known/openid-configuration"


async def test_no_metadata_after_a_prm_is_an_error() -> None:
    with pytest.raises(DiscoveryError, match="no authorization server metadata"):
        await run(Web(prm_for(AS)))


@pytest.mark.parametrize("methods", [None, ["plain"]])
async def test_pkce_s256_is_required(methods: list[str] | None) -> None:
    metadata = as_metadata(AS)
    metadata.pop("code_challenge_methods_supported")
    if methods is not None:
        metadata["code_challenge_methods_supported"] = methods
    with pytest.raises(PkceNotSupportedError):
        await run(Web({**prm_for(AS), AS + "/.well-known/oauth-authorization-server": metadata}))


async def test_insecure_authorization_server_is_refused() -> None:
    issuer = "http://as.example.com"
    web = Web({**prm_for(issuer), issuer + "/.well-known/oauth-authorization-server": as_metadata(issuer)})
    with pytest.raises(InsecureEndpointError):
        await run(web)


async def test_insecure_endpoint_in_metadata_is_refused() -> None:
    metadata = as_metadata(AS, token_endpoint="http://tokens.example.com/token")
    with pytest.raises(InsecureEndpointError):
        await run(Web({**prm_for(AS), AS + "/.well-known/oauth-authorization-server": metadata}))


# -- 2025-03-26 back-compat ------------------------------------------------------------------


async def test_2025_03_26_metadata_at_the_server_origin() -> None:
    metadata = as_metadata(RS, authorization_endpoint=RS + "/oauth/authorize", token_endpoint=RS + "/oauth/token")
    web = Web({RS + "/.well-known/oauth-authorization-server": metadata})
    found = await run(web)
    assert found.protected_resource is None and found.issuer == RS and found.resource == RS + "/mcp"
    assert found.metadata.token_endpoint == RS + "/oauth/token"


async def test_2025_03_26_default_endpoints() -> None:
    found = await run(Web({}))
    assert found.metadata.legacy_defaults
    assert (
        found.metadata.authorization_endpoint,
        found.metadata.token_endpoint,
        found.metadata.registration_endpoint,
    ) == (RS + "/authorize", RS + "/token", RS + "/register")


async def test_2025_03_26_mismatched_metadata_is_not_replaced_by_defaults() -> None:
    with pytest.raises(IssuerMismatchError):
        await run(Web({RS + "/.well-known/oauth-authorization-server": as_metadata("https://attacker.example.com")}))


async def test_unreachable_metadata_is_a_discovery_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with anyio.fail_after(LIMIT), pytest.raises(DiscoveryError, match="could not fetch"):
        async with httpx.AsyncClient(transport=httpx.MockTransport(refuse)) as http:
            await discover(http, RS + "/mcp")
