// A real OpenID provider for the OAuth proxy tests: the npm `oidc-provider` package (a certified
// implementation) on 127.0.0.1, with its development login and consent pages (any login, any
// password: the login becomes the subject). Started by tests/support/oidc.py:
//   node oidc_provider.mjs <port> <fd> <client_id> <client_secret> <redirect_uri>[,<redirect_uri>...]
// (<fd>: a socket bound to 127.0.0.1:<port> by the test, inherited: the port is never bound twice)
import Provider from 'oidc-provider';

const [port, fd, clientId, clientSecret, redirectUris] = process.argv.slice(2);
const provider = new Provider(`http://127.0.0.1:${port}`, {
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
  claims: { openid: ['sub', 'hd'], email: ['email', 'email_verified'], profile: ['name'] },
  conformIdTokenClaims: false, // the scope's claims in the id_token itself
  findAccount: async (ctx, id) => ({
    accountId: id,
    claims: async () => ({
      sub: id,
      ...(id.includes('@') ? { hd: id.split('@')[1] } : {}),
      email: id.includes('@') ? id : `${id}@example.com`,
      email_verified: true,
      name: `User ${id}`,
    }),
  }),
  pkce: { required: () => true },
  cookies: { keys: ['only-for-tests'] },
});
provider.listen({ fd: Number(fd) }, () => console.log(`listening ${port}`));
