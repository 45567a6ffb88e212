"""Upstream providers in a few words, each with its quirks. Every preset takes the provider's client
id and secret as `client_id=` / `client_secret=`, else from `MCP_OAUTH_CLIENT_ID` and
`MCP_OAUTH_CLIENT_SECRET`, so that no secret is written in the code.

* `oidc(issuer)`: any OpenID Connect provider, its endpoints from its discovery document.
* `github()`: GitHub's OAuth apps: no OpenID Connect, so the user is GitHub's numeric `id` from its
  user endpoint (`login` and `name` carried as claims); its token endpoint answers its errors with
  HTTP 200 (the proxy reads the `error` all the same); secrets in the form (`client_secret_post`).
* `google(hosted_domain=...)`: Google; `hd` both asked for and checked in the verified `id_token`
  (the parameter alone only preselects an account: any Google user could still sign in).
* `entra(tenant, tenants=...)`: Microsoft Entra ID, one tenant; or a multi-tenant authority
  (`common`, `organizations`, `consumers`), whose discovery document names no single issuer but the
  template `https://login.microsoftonline.com/{tenantid}/v2.0`: each `id_token`'s `iss` is checked
  against the template with the token's own `tid`, and `tenants` (tenant ids) limits who may sign in.
* `auth0(domain)`: its issuer ends with a slash (`https://tenant.auth0.com/`), compared as such.
* `okta(domain, authorization_server="default")`: a custom authorization server's issuer (`None`:
  the org authorization server).
* `workos(domain)`: WorkOS AuthKit (`https://<subdomain>.authkit.app`).
* `keycloak(base_url, realm)`: a Keycloak realm (`<base>/realms/<realm>`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from mcp_bindings.runtime.auth.proxy.upstream import Upstream
from mcp_bindings.runtime.auth.verifiers import TENANT_ID

CLIENT_ID_ENV = "MCP_OAUTH_CLIENT_ID"
CLIENT_SECRET_ENV = "MCP_OAUTH_CLIENT_SECRET"
OPENID = ("openid", "email", "profile")
_MULTI_TENANT = ("common", "organizations", "consumers")
ENTRA = "https://login.microsoftonline.com"


def _credentials(client_id: str | None, client_secret: str | None) -> tuple[str, str]:
    found = (client_id or os.environ.get(CLIENT_ID_ENV, ""), client_secret or os.environ.get(CLIENT_SECRET_ENV, ""))
    if not found[0] or not found[1]:
        raise ValueError(
            f"the upstream provider's client: pass client_id= and client_secret=, or set {CLIENT_ID_ENV} "
            f"and {CLIENT_SECRET_ENV}"
        )
    return found


def oidc(
    issuer: str,
    *,
    client_id: str | None = None,
    client_secret: str | None = None,
    scopes: Sequence[str] = OPENID,
    params: Mapping[str, str] | None = None,
    required_claims: Mapping[str, str] | None = None,
    name: str | None = None,
) -> Upstream:
    """Any OpenID Connect provider by its issuer (discovery at `<issuer>/.well-known/openid-configuration`)."""
    client_id, client_secret = _credentials(client_id, client_secret)
    return Upstream(
        client_id,
        client_secret,
        issuer=issuer,
        scopes=tuple(scopes),
        params=dict(params or {}),
        required_claims=dict(required_claims or {}),
        name=name,
    )


def github(
    *, client_id: str | None = None, client_secret: str | None = None, scopes: Sequence[str] = ("read:user",)
) -> Upstream:
    """GitHub (an OAuth app or a GitHub App's user authorization; see the module docstring)."""
    client_id, client_secret = _credentials(client_id, client_secret)
    return Upstream(
        client_id,
        client_secret,
        authorization_endpoint="https://github.com/login/oauth/authorize",
        token_endpoint="https://github.com/login/oauth/access_token",
        userinfo_endpoint="https://api.github.com/user",
        subject_field="id",
        scopes=tuple(scopes),
        auth_method="client_secret_post",
        name="GitHub",
    )


def google(
    *, hosted_domain: str | None = None, client_id: str | None = None, client_secret: str | None = None
) -> Upstream:
    """Google accounts; `hosted_domain`: only users of that Google Workspace domain."""
    only = {"hd": hosted_domain} if hosted_domain else {}
    return oidc(
        "https://accounts.google.com",
        client_id=client_id,
        client_secret=client_secret,
        params=only,
        required_claims=only,
        name="Google",
    )


def entra(
    tenant: str,
    *,
    tenants: Sequence[str] = (),
    authority: str = ENTRA,
    client_id: str | None = None,
    client_secret: str | None = None,
) -> Upstream:
    """Microsoft Entra ID: one tenant (its id or primary domain), or a multi-tenant authority
    (`common`: work, school and personal accounts; `organizations`; `consumers`) whose users come
    from their own tenants, only those of `tenants` (tenant ids) where given. `authority`: another
    cloud's (`https://login.microsoftonline.us`, ...)."""
    base = authority.rstrip("/")
    if tenant.lower() not in _MULTI_TENANT:
        if tenants:
            raise ValueError(
                f"entra({tenant!r}, tenants=...): one tenant signs its own users in; tenants= is for "
                f"the multi-tenant authorities ({', '.join(_MULTI_TENANT)})"
            )
        return oidc(f"{base}/{tenant}/v2.0", client_id=client_id, client_secret=client_secret, name="Microsoft")
    client_id, client_secret = _credentials(client_id, client_secret)
    at = f"{base}/{tenant.lower()}"
    return Upstream(  # the authority's endpoints, as its discovery document names them (no issuer to discover)
        client_id,
        client_secret,
        issuer=f"{base}/{TENANT_ID}/v2.0",
        authorization_endpoint=f"{at}/oauth2/v2.0/authorize",
        token_endpoint=f"{at}/oauth2/v2.0/token",
        jwks_uri=f"{at}/discovery/v2.0/keys",
        scopes=OPENID,
        tenants=tuple(tenants),
        name="Microsoft",
    )


def auth0(domain: str, *, client_id: str | None = None, client_secret: str | None = None) -> Upstream:
    """Auth0 (`domain`: `tenant.us.auth0.com` or a custom domain)."""
    return oidc(f"https://{_host(domain)}/", client_id=client_id, client_secret=client_secret, name="Auth0")


def okta(
    domain: str,
    authorization_server: str | None = "default",
    *,
    client_id: str | None = None,
    client_secret: str | None = None,
) -> Upstream:
    """Okta (`domain`: `dev-123.okta.com`); `authorization_server=None`: the org authorization server."""
    path = f"/oauth2/{authorization_server}" if authorization_server else ""
    return oidc(f"https://{_host(domain)}{path}", client_id=client_id, client_secret=client_secret, name="Okta")


def workos(domain: str, *, client_id: str | None = None, client_secret: str | None = None) -> Upstream:
    """WorkOS AuthKit (`domain`: `<subdomain>.authkit.app` or a custom domain)."""
    return oidc(f"https://{_host(domain)}", client_id=client_id, client_secret=client_secret, name="WorkOS")


def keycloak(base_url: str, realm: str, *, client_id: str | None = None, client_secret: str | None = None) -> Upstream:
    """A Keycloak realm (`base_url`: where Keycloak answers, e.g. `https://sso.example.com`)."""
    issuer = f"{base_url.rstrip('/')}/realms/{realm}"
    return oidc(issuer, client_id=client_id, client_secret=client_secret, name="Keycloak")


def _host(domain: str) -> str:
    return domain.removeprefix("https://").rstrip("/")
