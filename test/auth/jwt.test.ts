import assert from 'node:assert/strict';
import { createHmac, createSecretKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { CompactSign, SignJWT, type JWTPayload } from 'jose';
import type { JwtConfigRaw } from '../../src/config/config.js';
import { Authenticator } from '../../src/server/auth/authenticator.js';
import { fakeClock, fixture, rejectsWith } from './helpers.js';

const SECRET = 'adm1n';
const HS_KEY = 'a-very-long-hmac-secret-of-at-least-32-bytes!!';
const NS = 'https://svc.io/jwt/claims';
const clock = fakeClock();
const nowSec = () => Math.floor(clock.now() / 1000);

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const otherRsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ed = generateKeyPairSync('ed25519');
const hsKey = createSecretKey(Buffer.from(HS_KEY, 'utf8'));
const spki = (k: KeyObject) => k.export({ type: 'spki', format: 'pem' }) as string;
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64url');

function mk(jwt: JwtConfigRaw, extra: { unauthorizedRole?: string } = {}): Authenticator {
  return new Authenticator({ adminSecret: SECRET, authHookMode: 'GET', jwtSecret: jwt, now: clock.now, ...extra });
}

function claims(svc: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): JWTPayload {
  return {
    sub: '1234567890',
    name: 'John Doe',
    iat: nowSec(),
    exp: nowSec() + 3600,
    [NS]: { 'x-svc-allowed-roles': ['user', 'editor'], 'x-svc-default-role': 'user', 'x-svc-user-id': '1', ...svc },
    ...extra,
  };
}

async function sign(payload: JWTPayload, key: KeyObject, alg: string, header: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ ...header, alg }).sign(key);
}

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

describe('HS256', () => {
  const auth = mk({ type: 'HS256', key: HS_KEY });

  test('valid token: default role, x-svc-* claims, expiry from exp', async () => {
    const c = claims({ 'X-Svc-Org-Id': '123', other: 'dropped' });
    const s = await auth.resolve(bearer(await sign(c, hsKey, 'HS256')));
    assert.deepEqual(s, {
      role: 'user',
      vars: { 'x-svc-user-id': '1', 'x-svc-org-id': '123', 'x-svc-role': 'user' },
      expiresAt: (c.exp as number) * 1000,
      hasAdminCredentials: false,
    });
  });

  test('requested role inside the allowed roles', async () => {
    const s = await auth.resolve({ ...bearer(await sign(claims(), hsKey, 'HS256')), 'x-svc-role': 'editor' });
    assert.equal(s.role, 'editor');
    assert.equal(s.vars['x-svc-role'], 'editor');
  });

  test('forged role outside the allowed roles', async () => {
    const tok = await sign(claims(), hsKey, 'HS256');
    for (const role of ['admin', 'USER', 'user ']) {
      await rejectsWith(auth.resolve({ ...bearer(tok), 'x-svc-role': role }), 400, 'access-denied', 'Your requested role is not in allowed roles');
    }
  });

  test('request headers cannot add or override session variables', async () => {
    const s = await auth.resolve({ ...bearer(await sign(claims(), hsKey, 'HS256')), 'x-svc-user-id': '999', 'x-svc-extra': 'x' });
    assert.deepEqual(s.vars, { 'x-svc-user-id': '1', 'x-svc-role': 'user' });
  });

  test('no exp: no expiry', async () => {
    const c = claims();
    delete c.exp;
    const s = await auth.resolve(bearer(await sign(c, hsKey, 'HS256')));
    assert.equal('expiresAt' in s, false);
  });

  test('admin secret still grants admin', async () => {
    assert.deepEqual(await auth.resolve({ 'x-svc-admin-secret': SECRET, authorization: 'Bearer garbage' }), {
      role: 'admin',
      vars: { 'x-svc-role': 'admin' },
      hasAdminCredentials: true,
    });
    await rejectsWith(
      auth.resolve({ 'x-svc-admin-secret': 'bad', ...bearer(await sign(claims(), hsKey, 'HS256')) }),
      401,
      'access-denied',
      'invalid x-svc-admin-secret/x-svc-access-key',
    );
  });

  test('missing Authorization header', async () => {
    await rejectsWith(auth.resolve({ 'x-svc-role': 'user' }), 400, 'invalid-headers', 'Missing Authorization header in JWT authentication mode');
  });

  test('missing Authorization header with an unauthorized role', async () => {
    const a = mk({ type: 'HS256', key: HS_KEY }, { unauthorizedRole: 'anonymous' });
    assert.deepEqual(await a.resolve({ 'x-svc-role': 'admin', 'x-svc-user-id': '5' }), {
      role: 'anonymous',
      vars: { 'x-svc-role': 'anonymous', 'x-svc-user-id': '5' },
      hasAdminCredentials: false,
    });
    // a present but bad token is not downgraded to the unauthorized role
    await rejectsWith(
      a.resolve({ authorization: 'Bearer x.y.z' }),
      400,
      'invalid-jwt',
      'Could not verify JWT: JWSError (JSONDecodeError "Error in $: invalid JOSE header")',
    );
  });

  test('malformed Authorization header', async () => {
    const tok = await sign(claims(), hsKey, 'HS256');
    for (const h of ['Token abc', 'Bearer', 'Bearer a b', `bearer ${tok}`, '', `Basic ${tok}`]) {
      await rejectsWith(auth.resolve({ authorization: h }), 400, 'invalid-headers', 'Malformed Authorization header');
    }
    // extra whitespace is fine (split on whitespace)
    assert.equal((await auth.resolve({ authorization: `  Bearer \t ${tok} ` })).role, 'user');
  });
});

describe('malformed and hostile tokens', () => {
  const auth = mk({ type: 'HS256', key: HS_KEY });
  const e = (detail: string) => `Could not verify JWT: ${detail}`;

  test('wrong number of parts', async () => {
    await rejectsWith(auth.resolve(bearer('abc')), 400, 'invalid-jwt', e('JWSError (CompactDecodeError Invalid number of parts: Expected 3 parts; got 1)'));
    await rejectsWith(
      auth.resolve(bearer('a.b.c.d.e')),
      400,
      'invalid-jwt',
      e('JWSError (CompactDecodeError Invalid number of parts: Expected 3 parts; got 5)'),
    );
  });

  test('not base64url', async () => {
    for (const t of ['a$b.c.d', 'eyJ+.eyJ.sig', '.eyJ.sig', 'eyJ..sig', 'eyJ.eyJ.s/g']) {
      await rejectsWith(auth.resolve(bearer(t)), 400, 'invalid-jwt', e('JWSError (CompactDecodeError Invalid base64url encoding)'));
    }
  });

  test('header not JSON / not an object / no alg', async () => {
    await rejectsWith(
      auth.resolve(bearer(`${b64('nope')}.${b64('{}')}.c2ln`)),
      400,
      'invalid-jwt',
      e('JWSError (JSONDecodeError "Error in $: invalid JOSE header")'),
    );
    await rejectsWith(
      auth.resolve(bearer(`${b64('[1]')}.${b64('{}')}.c2ln`)),
      400,
      'invalid-jwt',
      e('JWSError (JSONDecodeError "Error in $: expected Object, but encountered Array")'),
    );
    await rejectsWith(
      auth.resolve(bearer(`${b64('{"typ":"JWT"}')}.${b64('{}')}.c2ln`)),
      400,
      'invalid-jwt',
      e('JWSError (JSONDecodeError "Error in $: key \\"alg\\" not found")'),
    );
  });

  test('3 MB token is refused before any decoding', async () => {
    const big = `${b64('{"alg":"HS256"}')}.${'A'.repeat(3 * 1024 * 1024)}.c2ln`;
    const t0 = Date.now();
    await rejectsWith(auth.resolve(bearer(big)), 400, 'invalid-jwt', e('JWSError (CompactDecodeError Invalid token: longer than 65536 characters)'));
    assert.ok(Date.now() - t0 < 2000);
  });

  test('alg none (any case, with or without signature)', async () => {
    const payload = b64(JSON.stringify(claims()));
    for (const alg of ['none', 'None', 'NONE']) {
      for (const sig of ['', 'c2ln']) {
        await rejectsWith(
          auth.resolve(bearer(`${b64(JSON.stringify({ alg, typ: 'JWT' }))}.${payload}.${sig}`)),
          400,
          'invalid-jwt',
          e('JWSError JWSNoSignatures'),
        );
      }
    }
  });

  test('HS/RS confusion: HS256 token signed with the RSA public key as HMAC secret', async () => {
    const a = mk({ type: 'RS256', key: spki(rsa.publicKey) });
    const forged = await sign(claims(), createSecretKey(Buffer.from(spki(rsa.publicKey))), 'HS256');
    await rejectsWith(a.resolve(bearer(forged)), 400, 'invalid-jwt', e('JWSError JWSInvalidSignature'));
  });

  test('RS token against an HS config, other algorithm of the same family', async () => {
    await rejectsWith(auth.resolve(bearer(await sign(claims(), rsa.privateKey, 'RS256'))), 400, 'invalid-jwt', e('JWSError JWSInvalidSignature'));
    await rejectsWith(auth.resolve(bearer(await sign(claims(), hsKey, 'HS512'))), 400, 'invalid-jwt', e('JWSError JWSInvalidSignature'));
  });

  test('bad signature and tampered payload', async () => {
    const other = await sign(claims(), createSecretKey(Buffer.from('another-secret-that-is-32-bytes-long!!')), 'HS256');
    await rejectsWith(auth.resolve(bearer(other)), 400, 'invalid-jwt', e('JWSError JWSInvalidSignature'));
    const [h, , s] = (await sign(claims(), hsKey, 'HS256')).split('.');
    const forged = `${h}.${b64(JSON.stringify(claims({ 'x-svc-allowed-roles': ['admin'], 'x-svc-default-role': 'admin' })))}.${s}`;
    await rejectsWith(auth.resolve(bearer(forged)), 400, 'invalid-jwt', e('JWSError JWSInvalidSignature'));
  });

  test('unknown critical header is rejected', async () => {
    const input = `${b64(JSON.stringify({ alg: 'HS256', crit: ['exp-x'], 'exp-x': 1 }))}.${b64(JSON.stringify(claims()))}`;
    const t = `${input}.${createHmac('sha256', HS_KEY).update(input).digest('base64url')}`;
    await rejectsWith(auth.resolve(bearer(t)), 400, 'invalid-jwt', e('JWSError (JSONDecodeError "Extension Header Parameter \\"exp-x\\" is not recognized")'));
  });

  test('payload that is not a JSON object', async () => {
    for (const [payload, type] of [
      ['[]', 'Array'],
      ['"x"', 'String'],
    ] as const) {
      const t = await new CompactSign(Buffer.from(payload)).setProtectedHeader({ alg: 'HS256' }).sign(hsKey);
      await rejectsWith(auth.resolve(bearer(t)), 400, 'invalid-jwt', e(`JWTClaimsSetDecodeError "Error in $: expected Object, but encountered ${type}"`));
    }
    const t = await new CompactSign(Buffer.from('{not json')).setProtectedHeader({ alg: 'HS256' }).sign(hsKey);
    await rejectsWith(auth.resolve(bearer(t)), 400, 'invalid-jwt', e('JWTClaimsSetDecodeError "Error in $: Failed reading: not a valid json value"'));
  });

  test('registered claims of the wrong type', async () => {
    await rejectsWith(
      auth.resolve(bearer(await sign(claims({}, { exp: 'tomorrow' }), hsKey, 'HS256'))),
      400,
      'invalid-jwt',
      e('JWTClaimsSetDecodeError "Error in $.exp: expected NumericDate, encountered String"'),
    );
    await rejectsWith(
      auth.resolve(bearer(await sign(claims({}, { aud: 5 }), hsKey, 'HS256'))),
      400,
      'invalid-jwt',
      e('JWTClaimsSetDecodeError "Error in $.aud: expected a string or a list of strings"'),
    );
  });
});

describe('time, audience and issuer checks', () => {
  const e = (d: string) => `Could not verify JWT: ${d}`;
  const auth = mk({ type: 'HS256', key: HS_KEY });

  test('expired (exp <= now)', async () => {
    await rejectsWith(auth.resolve(bearer(await sign(claims({}, { exp: nowSec() - 1 }), hsKey, 'HS256'))), 400, 'invalid-jwt', e('JWTExpired'));
    await rejectsWith(auth.resolve(bearer(await sign(claims({}, { exp: nowSec() }), hsKey, 'HS256'))), 400, 'invalid-jwt', e('JWTExpired'));
  });

  test('not yet valid (nbf) and issued in the future (iat)', async () => {
    await rejectsWith(auth.resolve(bearer(await sign(claims({}, { nbf: nowSec() + 60 }), hsKey, 'HS256'))), 400, 'invalid-jwt', e('JWTNotYetValid'));
    await rejectsWith(auth.resolve(bearer(await sign(claims({}, { iat: nowSec() + 60 }), hsKey, 'HS256'))), 400, 'invalid-jwt', e('JWTIssuedAtFuture'));
    assert.equal((await auth.resolve(bearer(await sign(claims({}, { nbf: nowSec() }), hsKey, 'HS256')))).role, 'user');
  });

  test('allowed_skew', async () => {
    const a = mk({ type: 'HS256', key: HS_KEY, allowed_skew: 30 });
    assert.equal((await a.resolve(bearer(await sign(claims({}, { exp: nowSec() - 29 }), hsKey, 'HS256')))).role, 'user');
    assert.equal((await a.resolve(bearer(await sign(claims({}, { nbf: nowSec() + 29, iat: nowSec() + 29 }), hsKey, 'HS256')))).role, 'user');
    await rejectsWith(a.resolve(bearer(await sign(claims({}, { exp: nowSec() - 30 }), hsKey, 'HS256'))), 400, 'invalid-jwt', e('JWTExpired'));
  });

  test('audience', async () => {
    const a = mk({ type: 'HS256', key: HS_KEY, audience: ['app-1', 'app-2'] });
    for (const aud of ['app-2', ['other', 'app-1']]) {
      assert.equal((await a.resolve(bearer(await sign(claims({}, { aud }), hsKey, 'HS256')))).role, 'user');
    }
    for (const aud of ['rubbish', []]) {
      await rejectsWith(a.resolve(bearer(await sign(claims({}, { aud }), hsKey, 'HS256'))), 400, 'invalid-jwt', e('JWTNotInAudience'));
    }
    // as upstream v1.3: a token without `aud` is not checked against the audience
    assert.equal((await a.resolve(bearer(await sign(claims({}, { aud: undefined }), hsKey, 'HS256')))).role, 'user');
    // no audience configured: any aud passes
    assert.equal((await auth.resolve(bearer(await sign(claims({}, { aud: 'whatever' }), hsKey, 'HS256')))).role, 'user');
  });

  test('issuer', async () => {
    const a = mk({ type: 'HS256', key: HS_KEY, issuer: 'https://issuer.example' });
    assert.equal((await a.resolve(bearer(await sign(claims({}, { iss: 'https://issuer.example' }), hsKey, 'HS256')))).role, 'user');
    await rejectsWith(a.resolve(bearer(await sign(claims({}, { iss: 'rubbish_issuer' }), hsKey, 'HS256'))), 400, 'invalid-jwt', e('JWTNotInIssuer'));
    // as upstream v1.3: a token without `iss` is not checked against the issuer
    assert.equal((await a.resolve(bearer(await sign(claims({}, { iss: undefined }), hsKey, 'HS256')))).role, 'user');
    assert.equal((await auth.resolve(bearer(await sign(claims({}, { iss: 'anyone' }), hsKey, 'HS256')))).role, 'user');
  });
});

describe('claims', () => {
  const auth = mk({ type: 'HS256', key: HS_KEY });
  const tok = async (svc: Record<string, unknown>, extra: Record<string, unknown> = {}) => bearer(await sign(claims(svc, extra), hsKey, 'HS256'));

  test('namespace missing / not an object', async () => {
    await rejectsWith(auth.resolve(await tok({}, { [NS]: undefined })), 400, 'jwt-invalid-claims', `claims key: '${NS}' not found`);
    await rejectsWith(auth.resolve(await tok({}, { [NS]: '{"x":1}' })), 400, 'jwt-invalid-claims', 'expecting a json object when claims_format is json');
  });

  test('role claims missing', async () => {
    await rejectsWith(
      auth.resolve(await tok({ 'x-svc-allowed-roles': undefined })),
      400,
      'jwt-missing-role-claims',
      'JWT claim does not contain x-svc-allowed-roles',
    );
    await rejectsWith(
      auth.resolve(await tok({ 'x-svc-default-role': undefined })),
      400,
      'jwt-missing-role-claims',
      'JWT claim does not contain x-svc-default-role',
    );
  });

  test('role claims of the wrong shape', async () => {
    await rejectsWith(
      auth.resolve(await tok({ 'x-svc-allowed-roles': 'user' })),
      400,
      'jwt-invalid-claims',
      'invalid x-svc-allowed-roles; should be a list of roles: parsing [] failed, expected Array, but encountered String',
    );
    await rejectsWith(
      auth.resolve(await tok({ 'x-svc-allowed-roles': ['user', 3] })),
      400,
      'jwt-invalid-claims',
      'invalid x-svc-allowed-roles; should be a list of roles: parsing String failed, expected String, but encountered Number',
    );
    await rejectsWith(
      auth.resolve(await tok({ 'x-svc-default-role': ['user'] })),
      400,
      'jwt-invalid-claims',
      'invalid x-svc-default-role; should be a single role name: parsing String failed, expected String, but encountered Array',
    );
    await rejectsWith(
      auth.resolve(await tok({ 'x-svc-default-role': '' })),
      400,
      'jwt-invalid-claims',
      'invalid x-svc-default-role; should be a single role name: empty string not allowed',
    );
  });

  test('default role outside the allowed roles', async () => {
    await rejectsWith(auth.resolve(await tok({ 'x-svc-default-role': 'admin' })), 400, 'access-denied', 'Your requested role is not in allowed roles');
  });

  test('x-svc-* claims must be strings', async () => {
    await rejectsWith(
      auth.resolve(await tok({ 'x-svc-user-id': 1 })),
      400,
      'jwt-invalid-claims',
      'x-svc-* claims: parsing Text failed, expected String, but encountered Number',
    );
    await rejectsWith(
      auth.resolve(await tok({ 'x-svc-ids': ['1'] })),
      400,
      'jwt-invalid-claims',
      'x-svc-* claims: parsing Text failed, expected String, but encountered Array',
    );
  });

  test('claim names are case-insensitive; other claims are ignored', async () => {
    const s = await auth.resolve(await tok({ 'X-SVC-ALLOWED-ROLES': ['user'], 'x-svc-allowed-roles': undefined, 'X-Svc-Custom': 'v', nested: { a: 1 } }));
    assert.deepEqual(s.vars, { 'x-svc-user-id': '1', 'x-svc-custom': 'v', 'x-svc-role': 'user' });
  });

  test('backend-only claim is a plain variable without admin credentials', async () => {
    const s = await auth.resolve(await tok({ 'x-svc-use-backend-only-permissions': 'true' }));
    assert.equal(s.vars['x-svc-use-backend-only-permissions'], 'true');
    assert.equal(s.hasAdminCredentials, false);
  });

  test('stringified_json', async () => {
    const a = mk({ type: 'HS256', key: HS_KEY, claims_format: 'stringified_json' });
    const inner = { 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': 'user', 'x-svc-user-id': '9' };
    const s = await a.resolve(bearer(await sign({ ...claims(), [NS]: JSON.stringify(inner) }, hsKey, 'HS256')));
    assert.deepEqual(s.vars, { 'x-svc-user-id': '9', 'x-svc-role': 'user' });
    await rejectsWith(
      a.resolve(bearer(await sign(claims(), hsKey, 'HS256'))),
      400,
      'jwt-invalid-claims',
      'expecting a string when claims_format is stringified_json',
    );
    await rejectsWith(
      a.resolve(bearer(await sign({ ...claims(), [NS]: '{bad' }, hsKey, 'HS256'))),
      400,
      'jwt-invalid-claims',
      `expecting stringified json at: 'claims_namespace ${NS}', but found: {bad`,
    );
  });

  test('claims_namespace', async () => {
    const a = mk({ type: 'HS256', key: HS_KEY, claims_namespace: 'https://example.com/claims' });
    const c = claims();
    const s = await a.resolve(bearer(await sign({ ...c, [NS]: undefined, 'https://example.com/claims': c[NS] }, hsKey, 'HS256')));
    assert.equal(s.role, 'user');
    await rejectsWith(a.resolve(bearer(await sign(c, hsKey, 'HS256'))), 400, 'jwt-invalid-claims', "claims key: 'https://example.com/claims' not found");
  });

  test('claims_namespace_path', async () => {
    const a = mk({ type: 'HS256', key: HS_KEY, claims_namespace_path: '$.svc.claims' });
    const c = claims();
    const s = await a.resolve(bearer(await sign({ ...c, [NS]: undefined, svc: { claims: c[NS] } }, hsKey, 'HS256')));
    assert.deepEqual(s.vars, { 'x-svc-user-id': '1', 'x-svc-role': 'user' });
    await rejectsWith(a.resolve(bearer(await sign(c, hsKey, 'HS256'))), 400, 'jwt-invalid-claims', "claims not found at claims_namespace_path: '$.svc.claims'");
    const root = mk({ type: 'HS256', key: HS_KEY, claims_namespace_path: '$' });
    const s2 = await root.resolve(bearer(await sign({ ...(c[NS] as object), exp: nowSec() + 10 }, hsKey, 'HS256')));
    assert.equal(s2.role, 'user');
    const quoted = mk({ type: 'HS256', key: HS_KEY, claims_namespace_path: "$['a.b'][1]" });
    assert.equal((await quoted.resolve(bearer(await sign({ 'a.b': [0, c[NS]] }, hsKey, 'HS256')))).role, 'user');
  });

  test('claims_map', async () => {
    const a = mk({
      type: 'HS256',
      key: HS_KEY,
      claims_map: {
        'x-svc-allowed-roles': { path: '$.user.roles' },
        'x-svc-default-role': { path: '$.user.role', default: 'user' },
        'x-svc-user-id': { path: '$.sub' },
        'X-Svc-Org': 'acme',
      },
    });
    const s = await a.resolve(bearer(await sign({ sub: 'u1', user: { roles: ['user', 'editor'] } }, hsKey, 'HS256')));
    assert.deepEqual(s, { role: 'user', vars: { 'x-svc-user-id': 'u1', 'x-svc-org': 'acme', 'x-svc-role': 'user' }, hasAdminCredentials: false });
    await rejectsWith(
      a.resolve(bearer(await sign({ sub: 'u1' }, hsKey, 'HS256'))),
      400,
      'jwt-missing-role-claims',
      'JWT claim does not contain x-svc-allowed-roles',
    );
    await rejectsWith(
      a.resolve(bearer(await sign({ user: { roles: ['user'] } }, hsKey, 'HS256'))),
      400,
      'jwt-invalid-claims',
      'JWT claim from claims_map, x-svc-user-id not found',
    );
    assert.deepEqual(a.describe().jwt, {
      claims_map: {
        'x-svc-allowed-roles': { path: '$.user.roles' },
        'x-svc-default-role': { path: '$.user.role', default: 'user' },
        'x-svc-user-id': { path: '$.sub' },
        'X-Svc-Org': 'acme',
      },
    });
  });
});

describe('token location', () => {
  test('Cookie', async () => {
    const a = mk({ type: 'HS256', key: HS_KEY, header: { type: 'Cookie', name: 'jwt' } });
    const t = await sign(claims(), hsKey, 'HS256');
    assert.equal((await a.resolve({ cookie: `a=b; jwt=${t}; c=d` })).role, 'user');
    await rejectsWith(a.resolve({ cookie: 'a=b' }), 400, 'invalid-headers', 'Could not find jwt in Cookie header');
    await rejectsWith(a.resolve(bearer(t)), 400, 'invalid-headers', 'Missing Cookie header in JWT authentication mode');
  });

  test('CustomHeader', async () => {
    const a = mk({ type: 'HS256', key: HS_KEY, header: { type: 'CustomHeader', name: 'X-Token' } });
    const t = await sign(claims(), hsKey, 'HS256');
    assert.equal((await a.resolve({ 'x-token': t })).role, 'user');
    await rejectsWith(a.resolve(bearer(t)), 400, 'invalid-headers', 'Missing X-Token header in JWT authentication mode');
  });
});

describe('asymmetric keys', () => {
  test('RS256 with an SPKI public key', async () => {
    const a = mk({ type: 'RS256', key: spki(rsa.publicKey) });
    assert.equal((await a.resolve(bearer(await sign(claims(), rsa.privateKey, 'RS256')))).role, 'user');
    await rejectsWith(
      a.resolve(bearer(await sign(claims(), otherRsa.privateKey, 'RS256'))),
      400,
      'invalid-jwt',
      'Could not verify JWT: JWSError JWSInvalidSignature',
    );
    await rejectsWith(
      a.resolve(bearer(await sign(claims(), rsa.privateKey, 'RS512'))),
      400,
      'invalid-jwt',
      'Could not verify JWT: JWSError JWSInvalidSignature',
    );
    await rejectsWith(
      a.resolve(bearer(await sign(claims(), rsa.privateKey, 'PS256'))),
      400,
      'invalid-jwt',
      'Could not verify JWT: JWSError JWSInvalidSignature',
    );
  });

  test('RS384 with a PKCS#1 public key', async () => {
    const a = mk({ type: 'RS384', key: rsa.publicKey.export({ type: 'pkcs1', format: 'pem' }) as string });
    assert.equal((await a.resolve(bearer(await sign(claims(), rsa.privateKey, 'RS384')))).role, 'user');
  });

  test('RS512 with an X.509 certificate', async () => {
    const a = mk({ type: 'RS512', key: readFileSync(fixture('cert.pem'), 'utf8') });
    const { createPrivateKey } = await import('node:crypto');
    const priv = createPrivateKey(readFileSync(fixture('key.pem'), 'utf8'));
    assert.equal((await a.resolve(bearer(await sign(claims(), priv, 'RS512')))).role, 'user');
  });

  test('PS256', async () => {
    const a = mk({ type: 'PS256', key: spki(rsa.publicKey) });
    assert.equal((await a.resolve(bearer(await sign(claims(), rsa.privateKey, 'PS256')))).role, 'user');
  });

  test('ES256', async () => {
    const a = mk({ type: 'ES256', key: spki(ec.publicKey) });
    assert.equal((await a.resolve(bearer(await sign(claims(), ec.privateKey, 'ES256')))).role, 'user');
  });

  test('Ed25519 (EdDSA)', async () => {
    const a = mk({ type: 'Ed25519', key: spki(ed.publicKey) });
    assert.equal((await a.resolve(bearer(await sign(claims(), ed.privateKey, 'EdDSA')))).role, 'user');
    await rejectsWith(
      a.resolve(bearer(await sign(claims(), ec.privateKey, 'ES256'))),
      400,
      'invalid-jwt',
      'Could not verify JWT: JWSError JWSInvalidSignature',
    );
  });
});

describe('configuration errors', () => {
  const P = 'Fatal Error: --jwt-secret (SVC_GRAPHQL_JWT_SECRET): ';
  const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 });
  const cases: [string, unknown, string][] = [
    ['neither key nor jwk_url', { type: 'HS256' }, 'key and jwk_url both cannot be empty'],
    ['both key and jwk_url', { type: 'HS256', key: HS_KEY, jwk_url: 'http://127.0.0.1:1/' }, 'key, jwk_url both cannot be present'],
    ['no type', { key: HS_KEY }, 'key "type" not found'],
    ['unsupported type', { type: 'XS256', key: HS_KEY }, 'Invalid JWK: Key type: XS256 is not supported'],
    ['none type', { type: 'none', key: HS_KEY }, 'Invalid JWK: Key type: none is not supported'],
    ['HMAC key too small', { type: 'HS256', key: 'short' }, 'Invalid JWK: Key size too small'],
    ['HS512 key too small', { type: 'HS512', key: HS_KEY }, 'Invalid JWK: Key size too small'],
    [
      'private key instead of public',
      { type: 'RS256', key: rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }) },
      'Invalid JWK: Could not decode PEM: expected a public key or an X509 certificate, not a private key',
    ],
    [
      'RSA key too short',
      { type: 'RS256', key: spki(rsa1024.publicKey) },
      'Invalid JWK: key type RS256 needs an RSA key of at least 2048 bits, got rsa 1024-bit',
    ],
    [
      'EC type with an RSA key',
      { type: 'ES256', key: spki(rsa.publicKey) },
      'Invalid JWK: key type ES256 needs an EC key on the curve of ES256, got rsa 2048-bit',
    ],
    [
      'both namespace options',
      { type: 'HS256', key: HS_KEY, claims_namespace: 'a', claims_namespace_path: '$.a' },
      'claims_namespace and claims_namespace_path both cannot be set',
    ],
    [
      'bad namespace path',
      { type: 'HS256', key: HS_KEY, claims_namespace_path: '$.a[x' },
      'invalid JSON path claims_namespace_path error: expected an index or a quoted key at position 4',
    ],
    ['bad claims_format', { type: 'HS256', key: HS_KEY, claims_format: 'yaml' }, 'claims_format: expected "json" or "stringified_json", got "yaml"'],
    ['bad audience', { type: 'HS256', key: HS_KEY, audience: 5 }, 'audience: expected a string or a list of strings'],
    ['bad skew', { type: 'HS256', key: HS_KEY, allowed_skew: -1 }, 'allowed_skew: expected a non-negative number of seconds'],
    ['bad header type', { type: 'HS256', key: HS_KEY, header: { type: 'Query' } }, "header: expected 'type' is 'Authorization', 'Cookie' or 'CustomHeader'"],
    ['cookie without name', { type: 'HS256', key: HS_KEY, header: { type: 'Cookie' } }, 'header: key "name" not found or not a valid header/cookie name'],
    [
      'claims_map without default role',
      { type: 'HS256', key: HS_KEY, claims_map: { 'x-svc-allowed-roles': ['a'] } },
      'claims_map: x-svc-default-role is expected but not found',
    ],
    ['jwk_url not http', { jwk_url: 'ftp://x/' }, 'jwk_url: expected an http(s) URL'],
  ];
  for (const [name, cfg, msg] of cases) {
    test(name, () => {
      assert.throws(() => mk(cfg as JwtConfigRaw), { message: P + msg });
    });
  }
  test('bad PEM', () => {
    assert.throws(
      () => mk({ type: 'RS256', key: 'not a pem' }),
      (e: Error) => e.message.startsWith(`${P}Invalid JWK: Could not decode PEM: `),
    );
  });
});
