/**
 * HTTP statuses of errors per endpoint × failure kind (upstream v1.3 Server/App.hs): /v1/graphql and
 * /v1beta1/relay answer HTTP 200 for every error, authentication included (the `allMod200`
 * modifier); /v1alpha1/graphql, /v1/query, explain, pg_dump and config keep the error's own status.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Receiver } from '../helpers/receiver.js';
import { post, startTestServer, type HttpResult, type TestServer } from '../helpers/server.js';

const SECRET = 's3cret';
const JWT_KEY = 'a-very-long-hmac-secret-of-at-least-32-bytes!!';

const GQL = { query: '{ __typename }' };
/** endpoint → [method, body] */
const ENDPOINTS: Array<[string, 'POST' | 'GET', unknown]> = [
  ['/v1/graphql', 'POST', GQL],
  ['/v1beta1/relay', 'POST', GQL],
  ['/v1alpha1/graphql', 'POST', GQL],
  ['/v1/query', 'POST', { type: 'export_metadata', args: {} }],
  ['/v1/graphql/explain', 'POST', { query: GQL }],
  ['/v1alpha1/pg_dump', 'POST', { opts: ['--schema-only'] }],
  ['/v1alpha1/config', 'GET', undefined],
];
const ALL_200 = new Set(['/v1/graphql', '/v1beta1/relay']);

async function get(url: string, path: string, headers: Record<string, string>): Promise<HttpResult> {
  const res = await fetch(url + path, { headers, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* keep the text */
  }
  return { status: res.status, body, text, headers: res.headers };
}

async function send(url: string, path: string, method: 'POST' | 'GET', body: unknown, headers: Record<string, string>) {
  return method === 'GET' ? get(url, path, headers) : post(url, path, body, headers);
}

/** the error's code and message from either envelope */
function errorOf(body: any): { code: string; message: string } {
  if (body && Array.isArray(body.errors)) return { code: body.errors[0].extensions.code, message: body.errors[0].message };
  return { code: body.code, message: body.error };
}

/** every endpoint answers `kind` with `own` (its status) except /v1/graphql and /v1beta1/relay (200) */
async function checkAll(s: TestServer, headers: Record<string, string>, own: number, code: string, message: string) {
  for (const [path, method, body] of ENDPOINTS) {
    const r = await send(s.url, path, method, body, headers);
    assert.equal(r.status, ALL_200.has(path) ? 200 : own, `${path}: ${r.text}`);
    assert.deepEqual(errorOf(r.body), { code, message }, path);
    if (path.includes('graphql') || path.includes('relay')) {
      if (path !== '/v1/graphql/explain') assert.ok(Array.isArray(r.body.errors), `${path} answers a GraphQL error envelope`);
    }
  }
}

describe('admin secret failures', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ adminSecret: SECRET });
  });
  after(() => s?.close());

  test('missing admin secret: 200 on /v1/graphql and /v1beta1/relay, 401 elsewhere', async () => {
    await checkAll(s, {}, 401, 'access-denied', 'x-svc-admin-secret/x-svc-access-key required, but not found');
  });

  test('wrong admin secret: 200 on /v1/graphql and /v1beta1/relay, 401 elsewhere', async () => {
    await checkAll(s, { 'x-svc-admin-secret': 'wrong' }, 401, 'access-denied', 'invalid x-svc-admin-secret/x-svc-access-key');
  });

  test('with the secret the same requests succeed', async () => {
    for (const path of ['/v1/graphql', '/v1beta1/relay', '/v1alpha1/graphql']) {
      const r = await post(s.url, path, GQL, { 'x-svc-admin-secret': SECRET });
      assert.equal(r.status, 200, path);
      assert.ok(r.body.data, path);
    }
  });
});

describe('auth webhook failures', () => {
  let s: TestServer;
  const hook = new Receiver();
  before(async () => {
    await hook.start();
    s = await startTestServer({ adminSecret: SECRET, authHook: `${hook.url}/auth` });
  });
  after(async () => {
    await s?.close();
    await hook.close();
  });

  test('webhook 401: 200 on /v1/graphql and /v1beta1/relay, 401 elsewhere', async () => {
    hook.respond = () => ({ status: 401, body: '{}' });
    await checkAll(s, {}, 401, 'access-denied', 'Authentication hook unauthorized this request');
  });

  test('webhook 500: 200 on /v1/graphql and /v1beta1/relay, 500 elsewhere', async () => {
    hook.respond = () => ({ status: 500, body: '{}' });
    await checkAll(s, {}, 500, 'unexpected', 'Invalid response from authorization hook');
  });
});

describe('JWT failures', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ adminSecret: SECRET, jwtSecret: { type: 'HS256', key: JWT_KEY } });
  });
  after(() => s?.close());

  test('a malformed JWT: 200 on /v1/graphql and /v1beta1/relay, 400 elsewhere', async () => {
    for (const [path, method, body] of ENDPOINTS) {
      const r = await send(s.url, path, method, body, { authorization: 'Bearer not.a.jwt' });
      assert.equal(r.status, ALL_200.has(path) ? 200 : 400, `${path}: ${r.text}`);
      assert.equal(errorOf(r.body).code, 'invalid-jwt', path);
    }
  });
});

describe('invalid JSON', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s?.close());

  test('an empty body: invalid-json "Error in $: not enough input" (200 on /v1/graphql and relay, 400 elsewhere)', async () => {
    for (const [path, method] of ENDPOINTS) {
      if (method === 'GET') continue;
      const r = await post(s.url, path, '', { 'x-svc-role': 'admin' });
      assert.equal(r.status, ALL_200.has(path) ? 200 : 400, `${path}: ${r.text}`);
      assert.deepEqual(errorOf(r.body), { code: 'invalid-json', message: 'Error in $: not enough input' }, path);
    }
  });

  test("malformed JSON: invalid-json with the parser's detail, never echoing the body", async () => {
    for (const [path, method] of ENDPOINTS) {
      if (method === 'GET') continue;
      for (const [text, expected] of [
        ['{"query": "x" "y"}', /^Error in \$: Failed reading: Expected ',' or '}' after property value in JSON at position 14$/],
        ['{"a":}', /^Error in \$: Failed reading: Unexpected token '}'$/],
        ['{"query": ', /^Error in \$: not enough input$/],
      ] as const) {
        const r = await post(s.url, path, text, { 'x-svc-role': 'admin' });
        assert.equal(r.status, ALL_200.has(path) ? 200 : 400, `${path}: ${r.text}`);
        const e = errorOf(r.body);
        assert.equal(e.code, 'invalid-json', path);
        assert.match(e.message, expected, `${path} ${text}`);
      }
    }
  });
});

describe('bodies that are JSON but not a request', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s?.close());

  test('null, a batch holding null, a string: never "expected Object, but encountered Object"', async () => {
    for (const path of ['/v1/graphql', '/v1/query']) {
      for (const body of ['null', '[null]', '"x"']) {
        const r = await post(s.url, path, body, { 'x-svc-role': 'admin' });
        assert.doesNotMatch(r.text, /encountered Object/, `${path} ${body}: ${r.text}`);
        assert.match(r.text, /encountered (Null|String|Array)/, `${path} ${body}: ${r.text}`);
      }
    }
    const g = await post(s.url, '/v1/graphql', 'null', {});
    assert.deepEqual(g.body, {
      errors: [{ extensions: { path: '$.query', code: 'parse-failed' }, message: 'parsing Text failed, expected String, but encountered Null' }],
    });
  });
});
