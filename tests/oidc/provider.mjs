// A real OpenID provider (npm oidc-provider, OpenID Certified) for workmate's single sign-on
// tests: one confidential client using the authorization code flow with PKCE, the provider's dev
// login and consent pages, and test accounts whose claims carry `groups`.
//
// usage: node provider.mjs PORT REDIRECT_URL KEYS_DIR
//   Writes KEYS_DIR/signing.pem (the provider's RS256 key, kid "test-key-1", so a test can mint
//   tokens the provider would have signed) and KEYS_DIR/impostor.pem (a key the provider does not
//   publish), then prints "listening <issuer>" once it accepts connections.
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Provider from 'oidc-provider';

const [port, redirectUrl, keysDir] = process.argv.slice(2);
if (!port || !redirectUrl || !keysDir) {
  console.error('usage: node provider.mjs PORT REDIRECT_URL KEYS_DIR');
  process.exit(2);
}

const KID = 'test-key-1';
const rsa = () => generateKeyPairSync('rsa', { modulusLength: 2048 });
const signing = rsa();
const impostor = rsa();
const pem = (key) => key.privateKey.export({ type: 'pkcs1', format: 'pem' });
writeFileSync(join(keysDir, 'signing.pem'), pem(signing), { mode: 0o600 });
writeFileSync(join(keysDir, 'impostor.pem'), pem(impostor), { mode: 0o600 });
const jwk = { ...signing.privateKey.export({ format: 'jwk' }), kid: KID, alg: 'RS256', use: 'sig' };

// Directory groups by account; any other login is a member of no group.
const ACCOUNTS = {
  alice: { name: 'Alice Admin', groups: ['wm-admins', 'staff'] },
  bob: { name: 'Bob Approver', groups: ['wm-approvers', 'staff'] },
  carol: { name: 'Carol Member', groups: ['staff'] },
};

const issuer = `http://127.0.0.1:${port}`;
const provider = new Provider(issuer, {
  clients: [{
    client_id: 'workmate',
    client_secret: 'workmate-test-secret-0123456789',
    grant_types: ['authorization_code'],
    response_types: ['code'],
    redirect_uris: [redirectUrl],
    post_logout_redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  jwks: { keys: [jwk] },
  cookies: { keys: ['workmate-oidc-test-cookie-key'] },
  scopes: ['openid', 'profile', 'email', 'groups'],
  claims: {
    openid: ['sub'],
    profile: ['name', 'preferred_username'],
    email: ['email', 'email_verified'],
    groups: ['groups'],
  },
  // The ID token carries the claims of the granted scopes (groups among them).
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: true },
    rpInitiatedLogout: { enabled: true },
  },
  async findAccount(_ctx, id) {
    const account = ACCOUNTS[id] ?? { name: id, groups: [] };
    return {
      accountId: id,
      async claims() {
        return {
          sub: id,
          name: account.name,
          preferred_username: id,
          email: `${id}@example.com`,
          email_verified: true,
          groups: account.groups,
        };
      },
    };
  },
});

const server = provider.listen(Number(port), '127.0.0.1', () => {
  console.log(`listening ${issuer}`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
