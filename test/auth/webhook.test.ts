import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { Authenticator, type AuthOptions } from '../../src/server/auth/authenticator.js';
import { WEBHOOK_IGNORED_HEADERS } from '../../src/server/auth/webhook.js';
import { closedPortUrl, fakeClock, json, memLog, rejectsWith, startServer, type Handler, type TestServer } from './helpers.js';

const SECRET = 'adm1n';
const userVars = { 'X-Svc-Role': 'user', 'X-Svc-User-Id': '25', 'X-Svc-Is-Owner': 'true', 'Other-Field': 'ignored' };
const ok: Handler = (_req, res) => json(res, 200, userVars);

let hook: TestServer;
const clock = fakeClock();
const authenticators: Authenticator[] = [];

function mk(extra: Partial<AuthOptions> = {}, log?: ReturnType<typeof memLog>): Authenticator {
  const a = new Authenticator({ adminSecret: SECRET, authHook: hook.url, authHookMode: 'GET', now: clock.now, ...extra }, log);
  authenticators.push(a);
  return a;
}

before(async () => {
  hook = await startServer(ok);
});
after(async () => {
  for (const a of authenticators) a.close();
  await hook.close();
});
beforeEach(() => {
  hook.handler = ok;
  hook.requests.length = 0;
});

describe('GET mode', () => {
  test('200: session variables from the hook, role from x-svc-role', async () => {
    const auth = mk();
    const s = await auth.resolve({ authorization: 'Bearer abc', 'x-svc-role': 'editor' });
    assert.deepEqual(s, {
      role: 'user',
      vars: { 'x-svc-role': 'user', 'x-svc-user-id': '25', 'x-svc-is-owner': 'true' },
      hasAdminCredentials: false,
    });
  });

  test('forwards client headers except the ignored list (and hop-by-hop headers)', async () => {
    const auth = mk();
    const client: Record<string, string> = {
      authorization: 'Bearer abc',
      'x-svc-role': 'editor',
      'x-custom': 'v',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
    };
    for (const h of WEBHOOK_IGNORED_HEADERS) client[h] = h === 'content-length' ? '10' : 'client-value';
    await auth.resolve(client);
    assert.equal(hook.requests.length, 1);
    const r = hook.requests[0]!;
    assert.equal(r.method, 'GET');
    assert.equal(r.headers.authorization, 'Bearer abc');
    assert.equal(r.headers['x-svc-role'], 'editor');
    assert.equal(r.headers['x-custom'], 'v');
    assert.equal(r.headers['keep-alive'], undefined);
    assert.equal(r.headers['transfer-encoding'], undefined);
    for (const h of WEBHOOK_IGNORED_HEADERS) {
      if (h === 'host' || h === 'connection' || h === 'user-agent' || h === 'accept' || h === 'accept-encoding' || h === 'accept-language') {
        assert.notEqual(r.headers[h], 'client-value', h);
      } else {
        assert.equal(r.headers[h], undefined, h);
      }
    }
    assert.equal(r.headers['user-agent'], 'svc-graphql-engine');
    assert.equal(r.body, '');
  });

  test('header injection: values with CR/LF are never forwarded', async () => {
    const auth = mk();
    await auth.resolve({ authorization: 'Bearer abc', 'x-evil': 'a\r\nx-svc-role: admin', 'x-nul': 'a\0b' });
    const r = hook.requests[0]!;
    assert.equal(r.headers['x-evil'], undefined);
    assert.equal(r.headers['x-nul'], undefined);
    assert.equal(r.headers['x-svc-role'], undefined);
    assert.equal(r.headers.authorization, 'Bearer abc');
  });

  test('401 → 401 access-denied', async () => {
    hook.handler = (_q, res) => json(res, 401, { error: 'no' });
    await rejectsWith(mk().resolve({}), 401, 'access-denied', 'Authentication hook unauthorized this request');
  });

  test('500, 403, 302 → 500 unexpected', async () => {
    for (const status of [500, 403, 302]) {
      hook.handler = (_q, res) => {
        res.writeHead(status, status === 302 ? { location: 'http://127.0.0.1:1/' } : {});
        res.end();
      };
      await rejectsWith(mk().resolve({}), 500, 'unexpected', 'Invalid response from authorization hook');
    }
  });

  test('200 with a body that is not JSON / not an object / not strings → 500', async () => {
    const bodies: [string, string][] = [
      ['<html>', 'Invalid response from authorization hook: Error in $: Failed reading: not a valid json value'],
      ['', 'Invalid response from authorization hook: Error in $: not enough input'],
      ['["x"]', 'Invalid response from authorization hook: Error in $: parsing HashMap ~Text failed, expected Object, but encountered Array'],
      [
        '{"X-Svc-Role":"user","X-Svc-User-Id":25}',
        "Invalid response from authorization hook: Error in $['X-Svc-User-Id']: parsing Text failed, expected String, but encountered Number",
      ],
    ];
    for (const [body, message] of bodies) {
      hook.handler = (_q, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      };
      await rejectsWith(mk().resolve({}), 500, 'unexpected', message);
    }
  });

  test('200 without a role → 400 invalid-params', async () => {
    hook.handler = (_q, res) => json(res, 200, { 'X-Svc-User-Id': '1', 'X-Svc-Role': '' });
    await rejectsWith(mk().resolve({}), 400, 'invalid-params', 'x-svc-role not found in session variables');
  });

  test('a hook that never answers is bounded by the timeout', async () => {
    hook.handler = () => undefined; // hang
    const log = memLog();
    const t0 = Date.now();
    await rejectsWith(mk({ hookTimeoutMs: 150 }, log).resolve({}), 500, 'unexpected', 'webhook authentication request failed');
    assert.ok(Date.now() - t0 < 5000);
    assert.deepEqual(log.lines, [{ type: 'webhook-log', detail: { url: hook.url, method: 'GET', status: null, message: 'timed out' } }]);
  });

  test('a hook that streams a huge body is cut off', async () => {
    hook.handler = (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"X-Svc-Role":"');
      res.end('x'.repeat(2 * 1024 * 1024) + '"}');
    };
    await rejectsWith(mk().resolve({}), 500, 'unexpected', 'Invalid response from authorization hook: response body larger than 1048576 bytes');
  });

  test('unreachable hook → 500', async () => {
    const auth = new Authenticator({ adminSecret: SECRET, authHook: await closedPortUrl(), authHookMode: 'GET' });
    await rejectsWith(auth.resolve({}), 500, 'unexpected', 'webhook authentication request failed');
  });

  test('https hook with a self-signed certificate is refused (500)', async () => {
    const tls = await startServer(ok, { https: true });
    try {
      const auth = new Authenticator({ adminSecret: SECRET, authHook: tls.url, authHookMode: 'GET' });
      await rejectsWith(auth.resolve({}), 500, 'unexpected', 'webhook authentication request failed');
      assert.equal(tls.requests.length, 0);
    } finally {
      await tls.close();
    }
  });

  test('admin secret bypasses the hook; a wrong secret does not fall through to it', async () => {
    const auth = mk();
    assert.equal((await auth.resolve({ 'x-svc-admin-secret': SECRET })).role, 'admin');
    await rejectsWith(auth.resolve({ 'x-svc-admin-secret': 'wrong' }), 401, 'access-denied', 'invalid x-svc-admin-secret/x-svc-access-key');
    assert.equal(hook.requests.length, 0);
  });
});

describe('POST mode', () => {
  test('sends {"headers": {...}} with all client headers', async () => {
    const auth = mk({ authHookMode: 'POST' });
    const s = await auth.resolve({ authorization: 'Bearer t', 'user-agent': 'curl', 'x-svc-role': 'r', 'x-bad': 'a\nb' });
    assert.equal(s.role, 'user');
    const r = hook.requests[0]!;
    assert.equal(r.method, 'POST');
    assert.equal(r.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(r.body), { headers: { authorization: 'Bearer t', 'user-agent': 'curl', 'x-svc-role': 'r' } });
  });

  test('header names are forwarded as the client spelled them (object keys or rawHeaders)', async () => {
    const auth = mk({ authHookMode: 'POST' });
    await auth.resolve({ Authorization: 'Bearer t', 'X-Custom-Header': 'v' });
    assert.deepEqual(JSON.parse(hook.requests[0]!.body), { headers: { Authorization: 'Bearer t', 'X-Custom-Header': 'v' } });
    // an HTTP request: Node lower-cases req.headers, req.rawHeaders keeps the spelling
    await auth.resolve({ authorization: 'Bearer u', 'x-custom-header': 'w' }, ['Authorization', 'Bearer u', 'X-CUSTOM-header', 'w']);
    assert.deepEqual(JSON.parse(hook.requests[1]!.body), { headers: { Authorization: 'Bearer u', 'X-CUSTOM-header': 'w' } });
  });

  test('401 and 500 are mapped as in GET mode', async () => {
    const auth = mk({ authHookMode: 'POST' });
    hook.handler = (_q, res) => json(res, 401, {});
    await rejectsWith(auth.resolve({}), 401, 'access-denied', 'Authentication hook unauthorized this request');
    hook.handler = (_q, res) => json(res, 500, {});
    await rejectsWith(auth.resolve({}), 500, 'unexpected', 'Invalid response from authorization hook');
  });
});

describe('expiry and caching', () => {
  test('no expiry: no cache, every request calls the hook', async () => {
    const auth = mk();
    const a = await auth.resolve({ authorization: 'Bearer 1' });
    const b = await auth.resolve({ authorization: 'Bearer 1' });
    assert.equal(a.expiresAt, undefined);
    assert.equal('expiresAt' in b, false);
    assert.equal(hook.requests.length, 2);
  });

  test('Cache-Control max-age in the body: cached until expiry, never past it', async () => {
    hook.handler = (_q, res) => json(res, 200, { ...userVars, 'Cache-Control': 'max-age=2' });
    const auth = mk();
    const t0 = clock.now();
    const s1 = await auth.resolve({ authorization: 'Bearer 1' });
    assert.equal(s1.expiresAt, t0 + 2000);
    assert.equal(s1.vars['cache-control'], undefined);
    clock.advance(1999);
    const s2 = await auth.resolve({ authorization: 'Bearer 1' });
    assert.deepEqual(s2, s1);
    assert.equal(hook.requests.length, 1);
    // a different credential is a different cache entry
    await auth.resolve({ authorization: 'Bearer 2' });
    assert.equal(hook.requests.length, 2);
    clock.advance(1);
    const s3 = await auth.resolve({ authorization: 'Bearer 1' });
    assert.equal(hook.requests.length, 3);
    assert.equal(s3.expiresAt, clock.now() + 2000);
    assert.deepEqual(auth.stats(), { webhookCalls: 3, jwksFetches: 0 });
  });

  test('a cached session cannot be mutated by a caller', async () => {
    hook.handler = (_q, res) => json(res, 200, { ...userVars, 'Cache-Control': 'max-age=60' });
    const auth = mk();
    const s1 = await auth.resolve({ authorization: 'Bearer m' });
    s1.vars['x-svc-role'] = 'admin';
    s1.role = 'admin';
    const s2 = await auth.resolve({ authorization: 'Bearer m' });
    assert.equal(s2.role, 'user');
    assert.equal(s2.vars['x-svc-role'], 'user');
  });

  test('Expires in the body (absolute)', async () => {
    const exp = Math.floor((clock.now() + 60_000) / 1000) * 1000;
    hook.handler = (_q, res) => json(res, 200, { ...userVars, Expires: new Date(exp).toUTCString() });
    const auth = mk();
    const s = await auth.resolve({ authorization: 'Bearer e' });
    assert.equal(s.expiresAt, exp);
    await auth.resolve({ authorization: 'Bearer e' });
    assert.equal(hook.requests.length, 1);
  });

  test('Cache-Control wins over Expires', async () => {
    hook.handler = (_q, res) => json(res, 200, { ...userVars, 'Cache-Control': 'max-age=5', Expires: new Date(clock.now() + 60_000).toUTCString() });
    assert.equal((await mk().resolve({})).expiresAt, clock.now() + 5000);
  });

  test('unparseable Expires / Cache-Control: no expiry, no cache', async () => {
    const bad = new Date(clock.now() + 60_000);
    const weird = `${bad.toUTCString().slice(0, 5)}${String(bad.getUTCDate()).padStart(2, '0')} ${String(bad.getUTCMonth() + 1).padStart(2, '0')} ${bad.getUTCFullYear()} 00:00:00 UTC`;
    for (const extra of [{ Expires: weird }, { 'Cache-Control': 'no-cache' }]) {
      hook.requests.length = 0;
      hook.handler = (_q, res) => json(res, 200, { ...userVars, ...extra });
      const log = memLog();
      const auth = mk({}, log);
      assert.equal((await auth.resolve({})).expiresAt, undefined);
      await auth.resolve({});
      assert.equal(hook.requests.length, 2);
      assert.equal(log.lines.length, 2);
    }
  });

  test('expiry from the HTTP response headers when the body has none', async () => {
    hook.handler = (_q, res) => json(res, 200, userVars, { 'cache-control': 'private, max-age=30' });
    const auth = mk();
    assert.equal((await auth.resolve({ authorization: 'Bearer h' })).expiresAt, clock.now() + 30_000);
    await auth.resolve({ authorization: 'Bearer h' });
    assert.equal(hook.requests.length, 1);
  });

  test('expiry already in the past: returned as is, not cached', async () => {
    const past = Math.floor((clock.now() - 10_000) / 1000) * 1000;
    hook.handler = (_q, res) => json(res, 200, { ...userVars, Expires: new Date(past).toUTCString() });
    const auth = mk();
    assert.equal((await auth.resolve({})).expiresAt, past);
    await auth.resolve({});
    assert.equal(hook.requests.length, 2);
  });

  test('errors are never cached', async () => {
    const auth = mk();
    hook.handler = (_q, res) => json(res, 401, {});
    await rejectsWith(auth.resolve({ authorization: 'Bearer x' }), 401, 'access-denied', 'Authentication hook unauthorized this request');
    hook.handler = (_q, res) => json(res, 200, { ...userVars, 'Cache-Control': 'max-age=60' });
    assert.equal((await auth.resolve({ authorization: 'Bearer x' })).role, 'user');
  });

  test('cache size is bounded', async () => {
    hook.handler = (_q, res) => json(res, 200, { ...userVars, 'Cache-Control': 'max-age=60' });
    const auth = mk({ webhookCacheSize: 2 });
    for (const t of ['a', 'b', 'c']) await auth.resolve({ authorization: t });
    assert.equal(hook.requests.length, 3);
    await auth.resolve({ authorization: 'c' });
    await auth.resolve({ authorization: 'b' });
    assert.equal(hook.requests.length, 3);
    await auth.resolve({ authorization: 'a' }); // evicted
    assert.equal(hook.requests.length, 4);
  });
});

test('close() aborts an in-flight hook call', async () => {
  hook.handler = () => undefined;
  const auth = mk({ hookTimeoutMs: 60_000 });
  const p = auth.resolve({});
  await hook.nextRequest();
  auth.close();
  await rejectsWith(p, 500, 'unexpected', 'webhook authentication request failed');
});
