// A real OpenID provider for the OAuth proxy tests: the npm `oidc-provider` package (a certified
// implementation) on 127.0.0.1, with its development login and consent pages (any login, any
// password: the login becomes the subject). Started by tests/support/oidc.py:
//   node oidc_provider.mjs <port> <fd> <client_id> <client_secret> <redirect_uri>[,<redirect_uri>...]
// (<fd>: a socket bound to 127.0.0.1:<port> by the test, inherited: the port is never bound twice)
import Provider from 'oidc-provider';

//
// With OIDC_ENTRA_TENANT=<tenant id> set, it behaves as Microsoft Entra ID's multi-tenant `common`
// authority does (for the `entra('common')` preset's test): the issuer is the tenant's
// (`<base>/<tenant>/v2.0`), the endpoints are the authority's (`<base>/common/oauth2/v2.0/...`, and
// the same under `organizations` and `consumers`), its
// discovery document at `<base>/common/v2.0/.well-known/openid-configuration` names the issuer
// template `<base>/{tenantid}/v2.0`, id_tokens carry `tid` (the tenant; a login `name#other` claims
// the tenant `other`: a forged one, since the issuer stays the provider's own), and the
// authorization response carries no `iss` (Entra sends none).
const [port, fd, clientId, clientSecret, redirectUris] = process.argv.slice(2);
const base = `http://127.0.0.1:${port}`;
const entraTenant = process.env.OIDC_ENTRA_TENANT;
const entraRoutes = {
  authorization: '/common/oauth2/v2.0/authorize',
  token: '/common/oauth2/v2.0/token',
  jwks: '/common/discovery/v2.0/keys',
};
const tenantOf = (id) => (id.includes('#') ? id.split('#')[1] : entraTenant);
const provider = new Provider(entraTenant ? `${base}/${entraTenant}/v2.0` : base, {
  ...(entraTenant ? { routes: entraRoutes } : {}),
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: redirectUris.split(','),
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  // `hd` (Google's hosted domain) for logins like user@domain, to test the Google preset's check
  claims: { openid: ['sub', 'hd', 'tid'], email: ['email', 'email_verified'], profile: ['name'] },
  conformIdTokenClaims: false, // the scope's claims in the id_token itself
  findAccount: async (ctx, id) => ({
    accountId: id,
    claims: async () => ({
      sub: id,
      ...(id.includes('@') ? { hd: id.split('@')[1] } : {}),
      email: id.includes('@') ? id : `${id}@example.com`,
      email_verified: true,
      name: `User ${id}`,
      ...(entraTenant ? { tid: tenantOf(id) } : {}),
    }),
  }),
  pkce: { required: () => true },
  cookies: { keys: ['only-for-tests'] },
});
if (entraTenant) {
  provider.on('authorization.success', (ctx, out) => {
    delete out.iss;
  });
  provider.use(async (ctx, next) => {
    ctx.path = ctx.path.replace(/^\/(organizations|consumers)\//, '/common/'); // the other authorities
    if (ctx.path !== '/common/v2.0/.well-known/openid-configuration') return next();
    ctx.path = '/.well-known/openid-configuration';
    await next();
    ctx.body = { ...ctx.body, issuer: `${base}/{tenantid}/v2.0` };
    return undefined;
  });
}
provider.listen({ fd: Number(fd) }, () => console.log(`listening ${port}`));
