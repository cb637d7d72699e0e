import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { SignJWT, type JWTPayload } from 'jose';
import { Authenticator, type AuthOptions } from '../../src/server/auth/authenticator.js';
import type { JwtConfigRaw } from '../../src/config/config.js';
import { closedPortUrl, fakeClock, json, rejectsWith, startServer, type TestServer } from './helpers.js';

const NS = 'https://svc.io/jwt/claims';
const clock = fakeClock();
const nowSec = () => Math.floor(clock.now() / 1000);

const k1 = generateKeyPairSync('rsa', { modulusLength: 2048 });
const k2 = generateKeyPairSync('rsa', { modulusLength: 2048 });
const kEc = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const kEd = generateKeyPairSync('ed25519');

const jwk = (k: KeyObject, kid: string, extra: Record<string, unknown> = {}) => ({ ...k.export({ format: 'jwk' }), kid, use: 'sig', ...extra });

let server: TestServer;
let keys: object[] = [];
let cacheHeaders: Record<string, string> = {};
let status = 200;
const opened: Authenticator[] = [];

before(async () => {
  server = await startServer((_req, res) => {
    if (status !== 200) {
      res.writeHead(status);
      res.end('nope');
      return;
    }
    json(res, 200, { keys }, cacheHeaders);
  });
});
afterEach(() => {
  for (const a of opened.splice(0)) a.close();
});
after(async () => {
  await server.close();
});
beforeEach(() => {
  keys = [jwk(k1.publicKey, 'k1', { alg: 'RS256' })];
  cacheHeaders = {};
  status = 200;
  server.requests.length = 0;
});

async function mk(jwt: Partial<JwtConfigRaw> = {}, extra: Partial<AuthOptions> = {}): Promise<Authenticator> {
  const a = new Authenticator({
    adminSecret: 's',
    authHookMode: 'GET',
    jwtSecret: { jwk_url: server.url, ...jwt },
    now: clock.now,
    jwksMinRefetchMs: 10_000,
    ...extra,
  });
  opened.push(a);
  await a.ready();
  return a;
}

function claims(): JWTPayload {
  return { sub: '1', iat: nowSec(), exp: nowSec() + 3600, [NS]: { 'x-svc-allowed-roles': ['user'], 'x-svc-default-role': 'user', 'x-svc-user-id': '1' } };
}
async function token(key: KeyObject, alg: string, kid?: string): Promise<{ authorization: string }> {
  const t = await new SignJWT(claims()).setProtectedHeader(kid === undefined ? { alg } : { alg, kid }).sign(key);
  return { authorization: `Bearer ${t}` };
}

describe('JWK set', () => {
  test('fetched at start; tokens verified against the key with their kid', async () => {
    const a = await mk();
    assert.equal(server.requests.length, 1);
    assert.equal(server.requests[0]!.method, 'GET');
    const s = await a.resolve(await token(k1.privateKey, 'RS256', 'k1'));
    assert.deepEqual(s.vars, { 'x-svc-user-id': '1', 'x-svc-role': 'user' });
    assert.equal(server.requests.length, 1);
    await rejectsWith(a.resolve(await token(k2.privateKey, 'RS256', 'k1')), 400, 'invalid-jwt', 'Could not verify JWT: JWSError JWSInvalidSignature');
  });

  test('a token without kid is tried against every matching key', async () => {
    keys = [jwk(k2.publicKey, 'k2'), jwk(k1.publicKey, 'k1')];
    const a = await mk();
    assert.equal((await a.resolve(await token(k1.privateKey, 'RS256'))).role, 'user');
  });

  test('rotation: an unknown kid triggers one refetch, then it is rate-limited', async () => {
    const a = await mk();
    // right after a fetch, an unknown kid does not cause another one
    await rejectsWith(a.resolve(await token(k2.privateKey, 'RS256', 'k2')), 400, 'invalid-jwt', 'Could not verify JWT: JWSError NoUsableKeys');
    assert.equal(server.requests.length, 1);
    clock.advance(10_000);
    keys = [jwk(k1.publicKey, 'k1'), jwk(k2.publicKey, 'k2')];
    assert.equal((await a.resolve(await token(k2.privateKey, 'RS256', 'k2'))).role, 'user');
    assert.equal(server.requests.length, 2);

    // still-unknown kid right after a fetch: no new fetch
    await rejectsWith(a.resolve(await token(k2.privateKey, 'RS256', 'k3')), 400, 'invalid-jwt', 'Could not verify JWT: JWSError NoUsableKeys');
    assert.equal(server.requests.length, 2);
    clock.advance(10_000);
    await rejectsWith(a.resolve(await token(k2.privateKey, 'RS256', 'k3')), 400, 'invalid-jwt', 'Could not verify JWT: JWSError NoUsableKeys');
    assert.equal(server.requests.length, 3);
    assert.deepEqual(a.stats(), { webhookCalls: 0, jwksFetches: 3 });
  });

  test('concurrent requests with a new kid share one fetch', async () => {
    const a = await mk();
    clock.advance(10_000);
    keys = [jwk(k2.publicKey, 'k2')];
    const tok = await token(k2.privateKey, 'RS256', 'k2');
    const sessions = await Promise.all(Array.from({ length: 8 }, () => a.resolve(tok)));
    assert.ok(sessions.every((s) => s.role === 'user'));
    assert.equal(server.requests.length, 2);
  });

  test('Cache-Control max-age: refetched once expired; removed keys stop working', async () => {
    cacheHeaders = { 'cache-control': 'public, max-age=600' };
    const a = await mk();
    const tok1 = await token(k1.privateKey, 'RS256', 'k1');
    assert.equal((await a.resolve(tok1)).role, 'user');
    clock.advance(599_000);
    await a.resolve(tok1);
    assert.equal(server.requests.length, 1);
    keys = [jwk(k2.publicKey, 'k2')];
    clock.advance(1_000);
    const tok1b = await token(k1.privateKey, 'RS256', 'k1');
    await rejectsWith(a.resolve(tok1b), 400, 'invalid-jwt', 'Could not verify JWT: JWSError NoUsableKeys');
    assert.equal(server.requests.length, 2);
    assert.equal((await a.resolve(await token(k2.privateKey, 'RS256', 'k2'))).role, 'user');
    assert.equal(server.requests.length, 2);
  });

  test('Expires header schedules the refresh', async () => {
    cacheHeaders = { expires: new Date(Math.ceil((clock.now() + 120_000) / 1000) * 1000).toUTCString() };
    const a = await mk();
    clock.advance(121_000);
    await a.resolve(await token(k1.privateKey, 'RS256', 'k1'));
    assert.equal(server.requests.length, 2);
  });

  test('Expires in the past / max-age=0 do not cause a fetch loop', async () => {
    for (const h of [{ expires: 'Mon, 30 Mar 2020 13:25:18 GMT' }, { 'cache-control': 'max-age=0' }] as Record<string, string>[]) {
      server.requests.length = 0;
      cacheHeaders = h;
      const a = await mk();
      await a.resolve(await token(k1.privateKey, 'RS256', 'k1'));
      clock.advance(9_999);
      await a.resolve(await token(k1.privateKey, 'RS256', 'k1'));
      assert.equal(server.requests.length, 1);
      clock.advance(1);
      await a.resolve(await token(k1.privateKey, 'RS256', 'k1'));
      assert.equal(server.requests.length, 2);
      a.close();
    }
  });

  test('no cache headers: never refreshed on time alone', async () => {
    const a = await mk();
    clock.advance(24 * 3600_000);
    await a.resolve(await token(k1.privateKey, 'RS256', 'k1'));
    assert.equal(server.requests.length, 1);
  });

  test('background refresh at max-age (real timer)', async () => {
    cacheHeaders = { 'cache-control': 'max-age=1' };
    const a = new Authenticator({ adminSecret: 's', authHookMode: 'GET', jwtSecret: { jwk_url: server.url }, jwksMinRefetchMs: 100 });
    opened.push(a);
    await a.ready();
    const next = server.nextRequest();
    const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('no background refresh within 5 s')), 5000).unref());
    await Promise.race([next, timeout]);
    assert.equal(server.requests.length, 2);
    a.close();
  });

  test('EC and Ed25519 keys; key alg and kty must match the token alg', async () => {
    keys = [jwk(kEc.publicKey, 'ec'), jwk(kEd.publicKey, 'ed'), jwk(k1.publicKey, 'k1', { alg: 'RS256' })];
    const a = await mk();
    assert.equal((await a.resolve(await token(kEc.privateKey, 'ES256', 'ec'))).role, 'user');
    assert.equal((await a.resolve(await token(kEd.privateKey, 'EdDSA', 'ed'))).role, 'user');
    // k1 is declared RS256 only
    await rejectsWith(a.resolve(await token(k1.privateKey, 'PS256', 'k1')), 400, 'invalid-jwt', 'Could not verify JWT: JWSError NoUsableKeys');
    // RSA token pointing at the EC key
    await rejectsWith(a.resolve(await token(k1.privateKey, 'RS256', 'ec')), 400, 'invalid-jwt', 'Could not verify JWT: JWSError NoUsableKeys');
  });

  test('symmetric (oct) keys and encryption keys from the URL are never used', async () => {
    const secret = Buffer.from('a-very-long-hmac-secret-of-at-least-32-bytes!!');
    keys = [{ kty: 'oct', k: secret.toString('base64url'), kid: 'hs', alg: 'HS256' }, jwk(k1.publicKey, 'enc', { use: 'enc' })];
    const a = await mk();
    const { createSecretKey } = await import('node:crypto');
    await rejectsWith(a.resolve(await token(createSecretKey(secret), 'HS256', 'hs')), 400, 'invalid-jwt', 'Could not verify JWT: JWSError JWSInvalidSignature');
    await rejectsWith(a.resolve(await token(k1.privateKey, 'RS256', 'enc')), 400, 'invalid-jwt', 'Could not verify JWT: JWSError NoUsableKeys');
  });

  test('alg none is rejected in JWK mode too', async () => {
    const a = await mk();
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    await rejectsWith(
      a.resolve({ authorization: `Bearer ${b64({ alg: 'none', kid: 'k1' })}.${b64(claims())}.` }),
      400,
      'invalid-jwt',
      'Could not verify JWT: JWSError JWSNoSignatures',
    );
  });
});

describe('JWK fetch failures', () => {
  test('non-2xx at start: ready() rejects; later requests retry and recover', async () => {
    status = 503;
    const a = new Authenticator({ adminSecret: 's', authHookMode: 'GET', jwtSecret: { jwk_url: server.url }, now: clock.now, jwksMinRefetchMs: 10_000 });
    opened.push(a);
    await assert.rejects(a.ready(), { message: `Non-2xx response on fetching JWK from: ${server.url}` });
    status = 200;
    const tok = await token(k1.privateKey, 'RS256', 'k1');
    await rejectsWith(a.resolve(tok), 400, 'invalid-jwt', 'Could not verify JWT: JWSError NoUsableKeys');
    assert.equal(server.requests.length, 1);
    clock.advance(10_000);
    assert.equal((await a.resolve(tok)).role, 'user');
    assert.equal(server.requests.length, 2);
  });

  test('body that is not a JWK set', async () => {
    const bad = await startServer((_q, res) => json(res, 200, { nope: true }));
    try {
      const a = new Authenticator({ adminSecret: 's', authHookMode: 'GET', jwtSecret: { jwk_url: bad.url } });
      opened.push(a);
      await assert.rejects(a.ready(), { message: `Error parsing JWK from url: ${bad.url}: expected an object with a "keys" array` });
    } finally {
      await bad.close();
    }
  });

  test('unreachable URL', async () => {
    const a = new Authenticator({ adminSecret: 's', authHookMode: 'GET', jwtSecret: { jwk_url: await closedPortUrl() } });
    opened.push(a);
    await assert.rejects(a.ready(), (e: Error) => /^Error fetching JWK: .*ECONNREFUSED/.test(e.message));
  });

  test('a hanging JWK endpoint is bounded by the timeout', async () => {
    const hang = await startServer(() => undefined);
    try {
      const a = new Authenticator({ adminSecret: 's', authHookMode: 'GET', jwtSecret: { jwk_url: hang.url }, jwksTimeoutMs: 150 });
      opened.push(a);
      await assert.rejects(a.ready(), { message: 'Error fetching JWK: timed out' });
    } finally {
      await hang.close();
    }
  });

  test('a failed refresh keeps the previous keys', async () => {
    cacheHeaders = { 'cache-control': 'max-age=60' };
    const a = await mk();
    status = 500;
    clock.advance(60_000);
    assert.equal((await a.resolve(await token(k1.privateKey, 'RS256', 'k1'))).role, 'user');
    assert.equal(server.requests.length, 2);
    // retried a minute later, not on every request
    await a.resolve(await token(k1.privateKey, 'RS256', 'k1'));
    assert.equal(server.requests.length, 2);
    clock.advance(60_000);
    await a.resolve(await token(k1.privateKey, 'RS256', 'k1'));
    assert.equal(server.requests.length, 3);
  });
});
