/**
 * Inputs that used to answer 500 or leak internals (issue 12.7): explain bodies of the wrong
 * type, 10,000-deep `_not` and `bulk`, deep GraphQL literals and variables, more root fields than a
 * statement can have, `variables` that is not an object, a failing auth webhook, and the database
 * going away (no internal address for non-admins).
 */
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { post, postGraphql, query, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;

before(async () => {
  s = await startTestServer({ maxQueryAliases: 5000, maxQueryNodes: 50_000, maxQueryTokens: 100_000 });
  await query(s.url, { type: 'run_sql', args: { sql: 'create table t (id int primary key); insert into t values (1)' } });
  await query(s.url, { type: 'track_table', args: { table: 't' } });
  await query(s.url, { type: 'create_select_permission', args: { table: 't', role: 'user', permission: { columns: ['id'], filter: {} } } });
});

after(async () => {
  await s?.close();
});

test('explain with a body that is not an explain request: 400 parse-failed', async () => {
  for (const [body, error] of [
    ['null', 'parsing GQLExplain failed, expected Object, but encountered Null'],
    ['[]', 'parsing GQLExplain failed, expected Object, but encountered Array'],
    ['42', 'parsing GQLExplain failed, expected Object, but encountered Number'],
    ['"x"', 'parsing GQLExplain failed, expected Object, but encountered String'],
    ['{}', 'key "query" not found'],
  ]) {
    const r = await post(s.url, '/v1/graphql/explain', body);
    assert.deepEqual({ status: r.status, code: r.body.code, error: r.body.error }, { status: 400, code: 'parse-failed', error }, body);
  }
});

test('10,000 nested _not and bulk: 400, not a stack overflow', async () => {
  const deep = '{"_not":'.repeat(10_000) + '{"id":{"_eq":1}}' + '}'.repeat(10_000);
  const r1 = await post(s.url, '/v1/query', `{"type":"select","args":{"table":"t","columns":["id"],"where":${deep}}}`);
  assert.deepEqual({ status: r1.status, code: r1.body.code }, { status: 400, code: 'parse-failed' });
  const bulk = '{"type":"bulk","args":['.repeat(10_000) + '{"type":"run_sql","args":{"sql":"select 1"}}' + ']}'.repeat(10_000);
  const r2 = await post(s.url, '/v1/query', bulk);
  assert.deepEqual({ status: r2.status, code: r2.body.code }, { status: 400, code: 'parse-failed' });
  const gql = await postGraphql(s.url, { query: `query { t(where: ${'{_not: '.repeat(3000)}{id: {_eq: 1}}${'}'.repeat(3000)}) { id } }` });
  assert.equal(gql.body.errors[0].extensions.code, 'validation-failed');
  assert.match(gql.body.errors[0].message, /nested deeper/);
  const v = await post(s.url, '/v1/graphql', `{"query":"query($w: t_bool_exp) { t(where: $w) { id } }","variables":{"w":${deep}}}`);
  assert.equal(v.body.errors[0].extensions.code, 'parse-failed');
  // a moderately nested expression still works
  const ok = await postGraphql(s.url, { query: `query { t(where: ${'{_not: '.repeat(20)}{id: {_eq: 1}}${'}'.repeat(20)}) { id } }` });
  assert.deepEqual(ok.body, { data: { t: [{ id: 1 }] } });
});

test('more root fields than one statement can have: a validation error, not 54011', async () => {
  const many = Array.from({ length: 2000 }, (_, i) => `a${i}: t { id }`).join(' ');
  const r = await postGraphql(s.url, { query: `{ ${many} }` });
  assert.equal(r.body.errors[0].extensions.code, 'validation-failed');
  assert.match(r.body.errors[0].message, /at most 1600 root fields/);
  const fine = Array.from({ length: 1500 }, (_, i) => `a${i}: t { id }`).join(' ');
  assert.deepEqual((await postGraphql(s.url, { query: `{ ${fine} }` })).body.data.a1499, [{ id: 1 }]);
});

test('variables or operationName of the wrong type: parse-failed', async () => {
  for (const [body, path] of [
    [{ query: '{ t { id } }', variables: [1] }, '$.variables'],
    [{ query: '{ t { id } }', variables: 'x' }, '$.variables'],
    [{ query: '{ t { id } }', operationName: 3 }, '$.operationName'],
  ] as const) {
    const r = await postGraphql(s.url, body);
    assert.deepEqual(r.body.errors[0].extensions, { path, code: 'parse-failed' });
  }
});

test('an auth webhook answering 500: code unexpected, HTTP 200 on /v1/graphql (as every error there) and 500 on /v1alpha1/graphql', async () => {
  const hook = createHttpServer((_q, res) => res.writeHead(500).end('{}'));
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
  const t = await startTestServer({ adminSecret: 'x', authHook: `http://127.0.0.1:${(hook.address() as { port: number }).port}/` });
  try {
    const r = await postGraphql(t.url, { query: '{ __typename }' });
    assert.equal(r.status, 200);
    assert.equal(r.body.errors[0].extensions.code, 'unexpected');
    const a = await post(t.url, '/v1alpha1/graphql', { query: '{ __typename }' });
    assert.equal(a.status, 500);
    assert.equal(a.body.errors[0].extensions.code, 'unexpected');
  } finally {
    await t.close();
    await new Promise<void>((r) => hook.close(() => r()));
  }
});

test('database down: non-admins see no internal address', async () => {
  const target = new URL(s.databaseUrl);
  const sockets = new Set<Socket>();
  const proxy: Server = createServer((c) => {
    const up = connect(Number(target.port || 5432), target.hostname);
    sockets.add(c).add(up);
    c.pipe(up).pipe(c);
    c.on('error', () => up.destroy());
    up.on('error', () => c.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  const port = (proxy.address() as { port: number }).port;
  const via = new URL(s.databaseUrl);
  via.hostname = '127.0.0.1';
  via.port = String(port);
  const t = await startTestServer({ databaseUrl: via.toString(), adminSecret: 'pw', unauthorizedRole: 'user' });
  try {
    const closed = new Promise<void>((r) => proxy.close(() => r()));
    for (const x of sockets) x.destroy();
    await closed;
    const r = await postGraphql(t.url, { query: '{ t { id } }' });
    const text = JSON.stringify(r.body);
    assert.ok(r.body.errors, text);
    assert.ok(!text.includes(String(port)) && !text.includes('ECONNREFUSED'), text);
    const q = await post(t.url, '/v1/query', { type: 'count', args: { table: 't' } });
    assert.equal(q.status, 503, q.text);
    assert.ok(!q.text.includes(String(port)), q.text);
  } finally {
    await t.close();
  }
});
