/**
 * Log lines as the reference's deployment/logging.rst shows them: `http-log` with `user_vars`,
 * `response_size`, `error` and (only on errors) `query` / `raw_query`; `query-log` with the
 * request and the generated SQL; the request id (the client's `x-request-id` or a UUID) in both
 * and in the response header. On the GraphQL fast path and on the Fastify routes.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { post, query, startTestServer, type TestServer } from '../helpers/server.js';

let svc: TestServer;
const lines: Record<string, any>[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, cb) {
    for (const l of chunk.toString('utf8').split('\n')) if (l.trim()) lines.push(JSON.parse(l));
    cb();
  },
});

before(async () => {
  svc = await startTestServer({ logLevel: 'info', enabledLogTypes: ['http-log', 'query-log'], adminSecret: 'pw', unauthorizedRole: 'anon' }, sink);
  await query(
    svc.url,
    { type: 'run_sql', args: { sql: 'create table item (id int primary key, name text); insert into item values (1, $$a$$);' } },
    { 'x-svc-admin-secret': 'pw' },
  );
  await query(svc.url, { type: 'track_table', args: { table: 'item' } }, { 'x-svc-admin-secret': 'pw' });
  await query(
    svc.url,
    { type: 'create_select_permission', args: { table: 'item', role: 'anon', permission: { columns: ['id'], filter: {} } } },
    { 'x-svc-admin-secret': 'pw' },
  );
});

after(async () => {
  await svc?.close();
});

/** the log lines of one request id, awaited (the line is written after the response) */
async function linesOf(id: string, type: string): Promise<Record<string, any>[]> {
  for (let i = 0; i < 200; i++) {
    const found = lines.filter(
      (l) =>
        l.type === type &&
        l.detail?.[type === 'http-log' ? 'operation' : 'request_id'] !== undefined &&
        (type === 'http-log' ? l.detail.operation.request_id : l.detail.request_id) === id,
    );
    if (found.length) return found;
    await new Promise((r) => setImmediate(r));
  }
  return [];
}

test('without an x-request-id: a version-4 UUID, the same in the response header and the log line', async () => {
  const r = await post(svc.url, '/v1/graphql', { query: '{ item { id } }' }, { 'x-svc-user-id': '8' });
  const id = r.headers.get('x-request-id') ?? '';
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  const [line] = await linesOf(id, 'http-log');
  assert.equal(line?.detail.operation.request_id, id);
  const again = await post(svc.url, '/v1/graphql', { query: '{ item { id } }' }, { 'x-svc-user-id': '8' });
  assert.notEqual(again.headers.get('x-request-id'), id);
});

test('success: user_vars, response_size, error null, no query; query-log with the SQL; x-request-id echoed', async () => {
  const r = await post(svc.url, '/v1/graphql', { query: '{ item { id } }' }, { 'x-request-id': 'req-ok-1', 'x-svc-user-id': '7' });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-request-id'), 'req-ok-1');
  const [h] = await linesOf('req-ok-1', 'http-log');
  assert.ok(h, 'an http-log line');
  assert.deepEqual(h.detail.operation.user_vars, { 'x-svc-role': 'anon', 'x-svc-user-id': '7' });
  assert.equal(h.detail.operation.response_size, Buffer.byteLength(r.text));
  assert.equal(h.detail.operation.error, null);
  assert.equal(h.detail.operation.query, null);
  assert.equal(h.detail.http_info.http_version, 'HTTP/1.1');
  const [q] = await linesOf('req-ok-1', 'query-log');
  assert.ok(q, 'a query-log line');
  assert.equal(q.detail.query.query, '{ item { id } }');
  assert.match(q.detail.generated_sql.item.query, /"public"\."item"/);
  assert.ok(Array.isArray(q.detail.generated_sql.item.prepared_arguments));
});

test('consecutive requests with different session variables each log their own user_vars', async () => {
  for (const [id, user] of [
    ['req-vars-1', '1'],
    ['req-vars-2', '2'],
    ['req-vars-3', '2'],
  ] as const) {
    const r = await post(svc.url, '/v1/graphql', { query: '{ item { id } }' }, { 'x-request-id': id, 'x-svc-user-id': user });
    assert.equal(r.status, 200);
  }
  for (const [id, user] of [
    ['req-vars-1', '1'],
    ['req-vars-2', '2'],
    ['req-vars-3', '2'],
  ] as const) {
    const [h] = await linesOf(id, 'http-log');
    assert.deepEqual(h.detail.operation.user_vars, { 'x-svc-role': 'anon', 'x-svc-user-id': user }, id);
  }
});

test('a request id or URL that JSON must escape is logged exactly (the line stays valid JSON)', async () => {
  // header values are Latin-1 on the wire: a quote, a backslash, a byte above 0x7f; a query string with quotes
  for (const id of ['req "quoted" \\ back', 'req-caf\u00e9']) {
    await new Promise<void>((resolve, reject) => {
      const body = JSON.stringify({ query: '{ item { id } }' });
      const u = new URL(svc.url);
      const rq = httpRequest(
        { host: u.hostname, port: u.port, method: 'POST', path: '/v1/graphql?x="1"', headers: { 'content-type': 'application/json', 'x-request-id': id } },
        (res) => {
          res.resume();
          res.on('end', () => resolve());
        },
      );
      rq.on('error', reject);
      rq.end(body);
    });
    // Node's client sends the value's UTF-8 bytes; the server reads header bytes as Latin-1
    const seen = Buffer.from(id, 'utf8').toString('latin1');
    const [h] = await linesOf(seen, 'http-log');
    assert.ok(h, `an http-log line for ${JSON.stringify(seen)}`);
    assert.equal(h.detail.operation.request_id, seen);
    assert.equal(h.detail.http_info.url, '/v1/graphql?x="1"');
    assert.equal(h.detail.http_info.method, 'POST');
    assert.equal(h.detail.http_info.ip, '127.0.0.1');
  }
  const r = await post(svc.url, '/v1/graphql', { query: '{ item { id } }' }, { 'x-request-id': 'req-url-1' });
  assert.equal(r.status, 200);
  const [h] = await linesOf('req-url-1', 'http-log');
  assert.equal(h.detail.http_info.url, '/v1/graphql');
});

test('a GraphQL validation error: the error and the query are logged', async () => {
  const body = { query: '{ item { name } }' };
  await post(svc.url, '/v1/graphql', body, { 'x-request-id': 'req-bad-1' });
  const [h] = await linesOf('req-bad-1', 'http-log');
  assert.equal(h!.detail.operation.error.code, 'validation-failed');
  assert.deepEqual(h!.detail.operation.query, body);
});

test('a misspelt query key logs parse-failed', async () => {
  await post(svc.url, '/v1/graphql', { quer: '{ item { id } }' }, { 'x-request-id': 'req-bad-2' });
  const [h] = await linesOf('req-bad-2', 'http-log');
  assert.equal(h!.detail.operation.error.code, 'parse-failed');
});

test('a body that is not JSON: raw_query', async () => {
  for (const path of ['/v1/graphql', '/v1/query']) {
    const id = `req-raw-${path.length}`;
    const res = await fetch(new URL(path, svc.url), { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': id }, body: '{not json' });
    assert.equal(res.status, path === '/v1/graphql' ? 200 : 400);
    await res.text();
    const [h] = await linesOf(id, 'http-log');
    assert.equal(h!.detail.operation.error.code, 'invalid-json', path);
    assert.equal(h!.detail.operation.raw_query, '{not json', path);
  }
});

test('/v1/query: user_vars and, on an error, the query; a generated request id is a UUID', async () => {
  const body = { type: 'select', args: { table: 'item', columns: ['name'] } };
  const r = await post(svc.url, '/v1/query', body, { 'x-svc-role': 'anon' });
  assert.equal(r.status, 400);
  const id = r.headers.get('x-request-id')!;
  assert.match(id, /^[0-9a-f-]{36}$/);
  const [h] = await linesOf(id, 'http-log');
  assert.deepEqual(h!.detail.operation.user_vars, { 'x-svc-role': 'anon' });
  assert.deepEqual(h!.detail.operation.query, body);
  assert.ok(h!.detail.operation.error.code);
});
