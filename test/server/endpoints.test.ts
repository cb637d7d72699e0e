/**
 * The HTTP surface around the engine, on real servers: config API, disabled
 * APIs, admin secret + unauthorized role over HTTP, the allow-list,
 * pg_dump, health, version, metrics, CORS and gzip. (Upstream scenarios of
 * test_config_api.py, test_apis_disabled.py, test_unauthorized_role.py.)
 */
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { VERSION } from '../../src/version.js';
import { post, postGraphql, postQuery, query, startTestServer, type TestServer } from '../helpers/server.js';

async function get(url: string, path: string, headers: Record<string, string> = {}) {
  const r = await fetch(url + path, { headers, signal: AbortSignal.timeout(10_000) });
  return { status: r.status, text: await r.text(), headers: r.headers };
}

const SETUP = {
  type: 'bulk',
  args: [
    { type: 'run_sql', args: { sql: "create table author (id serial primary key, name text); insert into author (name) values ('a'), ('b');" } },
    { type: 'track_table', args: { name: 'author' } },
    { type: 'create_select_permission', args: { table: 'author', role: 'user', permission: { columns: ['id', 'name'], filter: {} } } },
    { type: 'create_select_permission', args: { table: 'author', role: 'anonymous', permission: { columns: ['name'], filter: { id: { _eq: 1 } } } } },
  ],
};

describe('no admin secret, defaults', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    await query(s.url, SETUP);
  });
  after(() => s?.close());

  test('config API reports the configuration truthfully', async () => {
    const r = await get(s.url, '/v1alpha1/config', { 'x-svc-role': 'admin' });
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.text), {
      version: VERSION,
      is_admin_secret_set: false,
      is_auth_hook_set: false,
      is_jwt_set: false,
      jwt: null,
      is_allow_list_enabled: false,
      live_queries: { batch_size: 100, refetch_delay: 1000 },
    });
    const user = await get(s.url, '/v1alpha1/config', { 'x-svc-role': 'user' });
    assert.equal(user.status, 400);
    assert.equal(JSON.parse(user.text).code, 'access-denied');
  });

  test('health, version, metrics', async () => {
    assert.deepEqual(await get(s.url, '/healthz').then((r) => [r.status, r.text]), [200, 'OK']);
    assert.deepEqual(JSON.parse((await get(s.url, '/v1/version')).text), { version: VERSION });
    const m = await get(s.url, '/v1/metrics', { 'x-svc-role': 'admin' });
    assert.equal(m.status, 200);
    assert.match(m.text, /svc_plan_cache_hits_total \d+/);
    assert.match(m.text, /svc_db_round_trips_total \d+/);
  });

  test('unknown paths are 404 not-found', async () => {
    const r = await get(s.url, '/v2/nothing');
    assert.equal(r.status, 404);
    assert.equal(JSON.parse(r.text).code, 'not-found');
  });

  test('CORS: the origin is echoed with credentials; preflight answers 204', async () => {
    const r = await get(s.url, '/v1/version', { origin: 'http://example.com' });
    assert.equal(r.headers.get('access-control-allow-origin'), 'http://example.com');
    assert.equal(r.headers.get('access-control-allow-credentials'), 'true');
    const pre = await fetch(s.url + '/v1/graphql', { method: 'OPTIONS', headers: { origin: 'http://x.test', 'access-control-request-headers': 'x-svc-role' } });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-headers'), 'x-svc-role');
  });

  test('gzip when accepted', async () => {
    const r = await fetch(s.url + '/v1/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip' },
      body: JSON.stringify({ query: '{ author(order_by: {id: asc}) { id } }' }),
    });
    assert.equal(r.headers.get('content-encoding'), 'gzip');
    // fetch decodes it; the body must be the whole response
    assert.deepEqual(await r.json(), { data: { author: [{ id: 1 }, { id: 2 }] } });
    void gunzipSync;
  });

  test('pg_dump of the public schema (admin only); the embedded default says not-supported', async () => {
    const r = await post(
      s.url,
      '/v1alpha1/pg_dump',
      { opts: ['-O', '-x', '--schema-only', '--schema', 'public'], clean_output: true },
      { 'x-svc-role': 'admin' },
    );
    assert.equal(r.status, 200);
    assert.match(r.text, /CREATE TABLE public\.author \(/);
    assert.doesNotMatch(r.text, /^SET /m);
    const bad = await post(s.url, '/v1alpha1/pg_dump', { opts: ['-f', '/tmp/x'] }, { 'x-svc-role': 'admin' });
    assert.equal(bad.status, 400);
    const user = await post(s.url, '/v1alpha1/pg_dump', { opts: [] }, { 'x-svc-role': 'user' });
    assert.equal(user.status, 400);
    assert.equal(user.body.code, 'access-denied');
  });
});

describe('disabled APIs answer 404', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ enabledApis: new Set(['graphql']) });
  });
  after(() => s?.close());

  test('metadata, explain, config and pg_dump are off; graphql is on', async () => {
    for (const [path, body] of [
      ['/v1/query', { type: 'export_metadata', args: {} }],
      ['/v1/graphql/explain', { query: { query: '{ a }' } }],
      ['/v1alpha1/pg_dump', { opts: [] }],
    ] as const) {
      const r = await post(s.url, path, body, { 'x-svc-role': 'admin' });
      assert.equal(r.status, 404, path);
      assert.equal(r.body.code, 'not-found');
    }
    assert.equal((await get(s.url, '/v1alpha1/config')).status, 404);
    const g = await postGraphql(s.url, { query: '{ __typename }' });
    assert.deepEqual(g.body, { data: { __typename: 'query_root' } });
  });
});

describe('admin secret with an unauthorized role', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ adminSecret: 'S3cret', unauthorizedRole: 'anonymous' });
    await query(s.url, SETUP, { 'x-svc-admin-secret': 'S3cret' });
  });
  after(() => s?.close());

  test('without credentials requests run as the unauthorized role', async () => {
    const r = await postGraphql(s.url, { query: '{ author { name } }' });
    assert.deepEqual(r.body, { data: { author: [{ name: 'a' }] } });
    const md = await postQuery(s.url, { type: 'export_metadata', args: {} });
    assert.equal(md.status, 400);
    assert.equal(md.body.code, 'access-denied');
  });

  test('a wrong secret is 401 on /v1/query and an error on /v1/graphql', async () => {
    const q = await postQuery(s.url, { type: 'export_metadata', args: {} }, { 'x-svc-admin-secret': 'nope' });
    assert.equal(q.status, 401);
    assert.equal(q.body.code, 'access-denied');
    const g = await postGraphql(s.url, { query: '{ author { name } }' }, { 'x-svc-admin-secret': 'nope' });
    assert.equal(g.body.errors[0].extensions.code, 'access-denied');
  });

  test('the secret grants admin and lets X-Svc-Role pick a role', async () => {
    const admin = await postGraphql(s.url, { query: '{ author(order_by: {id: asc}) { id } }' }, { 'x-svc-admin-secret': 'S3cret' });
    assert.deepEqual(admin.body, { data: { author: [{ id: 1 }, { id: 2 }] } });
    const asUser = await postGraphql(s.url, { query: '{ author { id } }' }, { 'x-svc-admin-secret': 'S3cret', 'x-svc-role': 'anonymous' });
    assert.equal(asUser.body.errors[0].extensions.code, 'validation-failed');
    const cfg = JSON.parse((await get(s.url, '/v1alpha1/config', { 'x-svc-admin-secret': 'S3cret' })).text);
    assert.equal(cfg.is_admin_secret_set, true);
  });
});

describe('allow-list', () => {
  let s: TestServer;
  const listed = 'query { author { id name } }';
  before(async () => {
    s = await startTestServer({ enableAllowlist: true });
    await query(s.url, SETUP);
    await query(s.url, { type: 'create_query_collection', args: { name: 'c1', definition: { queries: [{ name: 'q1', query: listed }] } } });
    await query(s.url, { type: 'add_collection_to_allowlist', args: { collection: 'c1' } });
  });
  after(() => s?.close());

  test('a listed query runs for a user role, also with __typename added', async () => {
    const r = await postGraphql(s.url, { query: listed }, { 'x-svc-role': 'user' });
    assert.equal(r.body.errors, undefined);
    const t = await postGraphql(s.url, { query: 'query { author { id __typename name } }' }, { 'x-svc-role': 'user' });
    assert.equal(t.body.errors, undefined);
  });

  test('a query not in the list is rejected for a user role and accepted for admin', async () => {
    const q = 'query { author { name id } }';
    const r = await postGraphql(s.url, { query: q }, { 'x-svc-role': 'user' });
    assert.deepEqual(r.body, { errors: [{ extensions: { path: '$', code: 'validation-failed' }, message: 'query is not allowed' }] });
    const a = await postGraphql(s.url, { query: q }, { 'x-svc-role': 'admin' });
    assert.equal(a.body.errors, undefined);
  });

  test('dropping the collection from the allow-list rejects its queries', async () => {
    await query(s.url, { type: 'drop_collection_from_allowlist', args: { collection: 'c1' } });
    const r = await postGraphql(s.url, { query: listed }, { 'x-svc-role': 'user' });
    assert.equal(r.body.errors[0].message, 'query is not allowed');
    const cfg = JSON.parse((await get(s.url, '/v1alpha1/config', { 'x-svc-role': 'admin' })).text);
    assert.equal(cfg.is_allow_list_enabled, true);
  });
});
