import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Authenticator, authOptionsFromConfig, useBackendOnlyPermissions, type AuthOptions } from '../../src/server/auth/authenticator.js';
import { defaultConfig } from '../../src/config/config.js';
import { rejectsWith } from './helpers.js';

const base: AuthOptions = { authHookMode: 'GET' };
const HS_KEY = 'a-very-long-hmac-secret-of-at-least-32-bytes!!';

describe('no admin secret', () => {
  const auth = new Authenticator(base);

  test('defaults to admin with header variables', async () => {
    const s = await auth.resolve({ 'x-svc-user-id': '42', 'content-type': 'application/json', 'X-Svc-Org': 'Acme' });
    assert.deepEqual(s, { role: 'admin', vars: { 'x-svc-user-id': '42', 'x-svc-org': 'Acme', 'x-svc-role': 'admin' }, hasAdminCredentials: true });
  });

  test('role header picks the role; admin credentials remain', async () => {
    const s = await auth.resolve({ 'x-svc-role': 'user', 'x-svc-user-id': ['1', '2'] });
    assert.deepEqual(s, { role: 'user', vars: { 'x-svc-role': 'user', 'x-svc-user-id': '1' }, hasAdminCredentials: true });
  });

  test('empty role header falls back to admin', async () => {
    assert.equal((await auth.resolve({ 'x-svc-role': '' })).role, 'admin');
  });

  test('a sent admin secret is ignored and never becomes a session variable', async () => {
    const s = await auth.resolve({ 'x-svc-admin-secret': 'whatever', 'x-svc-access-key': 'k' });
    assert.deepEqual(s.vars, { 'x-svc-role': 'admin' });
  });

  test('junk header names and non-string values from a websocket payload are tolerated', async () => {
    const s = await auth.resolve({
      ':authority': 'x',
      'bad name': 'x',
      'x-svc-n': 5 as unknown as string,
      'x-svc-o': {} as unknown as string,
      'x-svc-u': undefined,
    });
    assert.deepEqual(s.vars, { 'x-svc-n': '5', 'x-svc-role': 'admin' });
    assert.deepEqual((await auth.resolve(undefined as never)).vars, { 'x-svc-role': 'admin' });
  });

  test('backend-only flag: kept as a variable, validated as a boolean', async () => {
    const s = await auth.resolve({ 'x-svc-role': 'backend', 'x-svc-use-backend-only-permissions': 'True' });
    assert.equal(s.vars['x-svc-use-backend-only-permissions'], 'True');
    assert.equal(useBackendOnlyPermissions(s), true);
    assert.equal(useBackendOnlyPermissions(await auth.resolve({ 'x-svc-use-backend-only-permissions': 'no' })), false);
    await rejectsWith(
      auth.resolve({ 'x-svc-use-backend-only-permissions': 'maybe' }),
      400,
      'bad-request',
      'x-svc-use-backend-only-permissions:  Not a valid boolean text. True values are ["true","t","yes","y"] and  False values are ["false","f","no","n"]. All values are case insensitive',
    );
  });
});

describe('admin secret', () => {
  const auth = new Authenticator({ ...base, adminSecret: 's3cret' });

  test('correct secret: admin, or the requested role, with admin credentials', async () => {
    assert.deepEqual(await auth.resolve({ 'x-svc-admin-secret': 's3cret', 'x-svc-user-id': '7' }), {
      role: 'admin',
      vars: { 'x-svc-user-id': '7', 'x-svc-role': 'admin' },
      hasAdminCredentials: true,
    });
    const s = await auth.resolve({ 'x-svc-admin-secret': 's3cret', 'x-svc-role': 'user' });
    assert.deepEqual(s, { role: 'user', vars: { 'x-svc-role': 'user' }, hasAdminCredentials: true });
  });

  test('legacy x-svc-access-key is accepted', async () => {
    assert.equal((await auth.resolve({ 'x-svc-access-key': 's3cret' })).hasAdminCredentials, true);
  });

  test('wrong, empty, longer, prefix secrets are rejected', async () => {
    for (const wrong of ['nope', '', 's3cret ', 's3cret-and-more', 's3cre', 'S3CRET']) {
      await rejectsWith(auth.resolve({ 'x-svc-admin-secret': wrong }), 401, 'access-denied', 'invalid x-svc-admin-secret/x-svc-access-key');
    }
    await rejectsWith(auth.resolve({ 'x-svc-access-key': 'nope' }), 401, 'access-denied', 'invalid x-svc-admin-secret/x-svc-access-key');
  });

  test('x-svc-admin-secret wins over x-svc-access-key', async () => {
    await rejectsWith(
      auth.resolve({ 'x-svc-admin-secret': 'bad', 'x-svc-access-key': 's3cret' }),
      401,
      'access-denied',
      'invalid x-svc-admin-secret/x-svc-access-key',
    );
  });

  test('missing secret without other modes is rejected', async () => {
    await rejectsWith(auth.resolve({ 'x-svc-role': 'admin' }), 401, 'access-denied', 'x-svc-admin-secret/x-svc-access-key required, but not found');
  });
});

describe('unauthorized role', () => {
  const auth = new Authenticator({ ...base, adminSecret: 's3cret', unauthorizedRole: 'anonymous' });

  test('requests without the secret run as the unauthorized role, whatever role they ask for', async () => {
    const s = await auth.resolve({ 'x-svc-role': 'admin', 'x-svc-user-id': '3' });
    assert.deepEqual(s, { role: 'anonymous', vars: { 'x-svc-role': 'anonymous', 'x-svc-user-id': '3' }, hasAdminCredentials: false });
    assert.equal(useBackendOnlyPermissions({ ...s, vars: { ...s.vars, 'x-svc-use-backend-only-permissions': 'true' } }), false);
  });

  test('the secret still grants admin; a wrong one is still rejected', async () => {
    assert.equal((await auth.resolve({ 'x-svc-admin-secret': 's3cret' })).role, 'admin');
    await rejectsWith(auth.resolve({ 'x-svc-admin-secret': 'x' }), 401, 'access-denied', 'invalid x-svc-admin-secret/x-svc-access-key');
  });
});

describe('configuration errors', () => {
  const cases: [string, AuthOptions, string][] = [
    [
      'webhook without secret',
      { ...base, authHook: 'http://127.0.0.1:1/' },
      'Fatal Error : --auth-hook (SVC_GRAPHQL_AUTH_HOOK) requires --admin-secret (SVC_GRAPHQL_ADMIN_SECRET) to be set',
    ],
    [
      'jwt without secret',
      { ...base, jwtSecret: { type: 'HS256', key: HS_KEY } },
      'Fatal Error : --jwt-secret (SVC_GRAPHQL_JWT_SECRET) requires --admin-secret (SVC_GRAPHQL_ADMIN_SECRET) to be set',
    ],
    [
      'webhook and jwt',
      { ...base, adminSecret: 's', authHook: 'http://127.0.0.1:1/', jwtSecret: { type: 'HS256', key: HS_KEY } },
      'Fatal Error: Both webhook and JWT mode cannot be enabled at the same time',
    ],
    [
      'unauthorized role without secret',
      { ...base, unauthorizedRole: 'anon' },
      'Fatal Error: --unauthorized-role (SVC_GRAPHQL_UNAUTHORIZED_ROLE) requires --admin-secret (SVC_GRAPHQL_ADMIN_SECRET) to be set and is not allowed when --auth-hook (SVC_GRAPHQL_AUTH_HOOK) is set',
    ],
    [
      'unauthorized role with webhook',
      { ...base, adminSecret: 's', authHook: 'http://127.0.0.1:1/', unauthorizedRole: 'anon' },
      'Fatal Error: --unauthorized-role (SVC_GRAPHQL_UNAUTHORIZED_ROLE) requires --admin-secret (SVC_GRAPHQL_ADMIN_SECRET) to be set and is not allowed when --auth-hook (SVC_GRAPHQL_AUTH_HOOK) is set',
    ],
    ['hook not a URL', { ...base, adminSecret: 's', authHook: 'not a url' }, 'Fatal Error: --auth-hook (SVC_GRAPHQL_AUTH_HOOK): not a URL: not a url'],
    [
      'hook not http',
      { ...base, adminSecret: 's', authHook: 'file:///etc/passwd' },
      'Fatal Error: --auth-hook (SVC_GRAPHQL_AUTH_HOOK): expected an http(s) URL',
    ],
  ];
  for (const [name, opts, message] of cases) {
    test(name, () => {
      assert.throws(() => new Authenticator(opts), { message });
    });
  }
});

describe('describe()', () => {
  test('no auth', () => {
    assert.deepEqual(new Authenticator(base).describe(), { is_admin_secret_set: false, is_auth_hook_set: false, is_jwt_set: false, jwt: null });
  });
  test('webhook', () => {
    const a = new Authenticator({ ...base, adminSecret: 's', authHook: 'http://127.0.0.1:1/' });
    assert.deepEqual(a.describe(), { is_admin_secret_set: true, is_auth_hook_set: true, is_jwt_set: false, jwt: null });
    a.close();
  });
  test('jwt, default namespace', () => {
    const a = new Authenticator({ ...base, adminSecret: 's', jwtSecret: { type: 'HS256', key: HS_KEY } });
    assert.deepEqual(a.describe(), {
      is_admin_secret_set: true,
      is_auth_hook_set: false,
      is_jwt_set: true,
      jwt: { claims_namespace: 'https://svc.io/jwt/claims', claims_format: 'json' },
    });
  });
  test('jwt, namespace path and stringified claims', () => {
    const a = new Authenticator({
      ...base,
      adminSecret: 's',
      jwtSecret: { type: 'HS256', key: HS_KEY, claims_namespace_path: '$.svc.claims', claims_format: 'stringified_json' },
    });
    assert.deepEqual(a.describe().jwt, { claims_namespace_path: '$.svc.claims', claims_format: 'stringified_json' });
  });
});

test('authOptionsFromConfig', () => {
  const cfg = { ...defaultConfig(), adminSecret: 'x', unauthorizedRole: 'anon' };
  assert.deepEqual(authOptionsFromConfig(cfg), { adminSecret: 'x', authHook: undefined, authHookMode: 'GET', jwtSecret: undefined, unauthorizedRole: 'anon' });
});
