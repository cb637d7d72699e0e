/**
 * POST /v1/graphql and /v1alpha1/graphql are answered on node:http in front
 * of Fastify (src/server/graphqlHttp.ts). These tests pin the behaviour the
 * Fastify routes had: errors and statuses, batching, CORS, the body limit,
 * query strings, the http-log line; and the plan cache's eviction.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { PlanCache } from '../../src/execute/planCache.js';
import { query, startTestServer, type TestServer } from '../helpers/server.js';

async function raw(url: string, path: string, body: string, headers: Record<string, string> = {}) {
  const r = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, signal: AbortSignal.timeout(10_000) });
  return { status: r.status, text: await r.text(), headers: r.headers };
}

describe('GraphQL over HTTP', () => {
  let s: TestServer;
  const lines: string[] = [];
  const capture = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  before(async () => {
    s = await startTestServer({ bodyLimit: 64 * 1024, enabledLogTypes: ['http-log'], logLevel: 'info' }, capture);
    await query(s.url, {
      type: 'bulk',
      args: [
        { type: 'run_sql', args: { sql: "create table item (id int primary key, name text); insert into item values (1, 'a'), (2, 'b');" } },
        { type: 'track_table', args: { name: 'item' } },
      ],
    });
  });
  after(() => s?.close());

  test('a query, also with a query string on the path', async () => {
    const body = JSON.stringify({ query: '{ item(order_by: {id: asc}) { id name } }' });
    const want = {
      data: {
        item: [
          { id: 1, name: 'a' },
          { id: 2, name: 'b' },
        ],
      },
    };
    for (const path of ['/v1/graphql', '/v1/graphql?x=1', '/v1alpha1/graphql']) {
      const r = await raw(s.url, path, body);
      assert.equal(r.status, 200, path);
      assert.deepEqual(JSON.parse(r.text), want, path);
      assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
      // fetch asks for gzip; the length is that of the compressed body
      assert.equal(r.headers.get('content-encoding'), 'gzip');
      assert.ok(Number(r.headers.get('content-length')) > 0);
    }
  });

  test('constant fields around database fields keep their order', async () => {
    const r = await raw(
      s.url,
      '/v1/graphql',
      JSON.stringify({ query: '{ a: __typename item_by_pk(id: 2) { name } z: __typename b: item(where: {id: {_eq: 1}}) { id } }' }),
    );
    assert.equal(r.text.replace(/\s/g, ''), '{"data":{"a":"query_root","item_by_pk":{"name":"b"},"z":"query_root","b":[{"id":1}]}}');
  });

  test('malformed JSON is invalid-json with 200 (every /v1/graphql error is); a missing query is a GraphQL error with 200', async () => {
    const bad = await raw(s.url, '/v1/graphql', '{"query": ');
    assert.equal(bad.status, 200);
    assert.deepEqual(JSON.parse(bad.text), { errors: [{ extensions: { path: '$', code: 'invalid-json' }, message: 'Error in $: not enough input' }] });
    const alpha = await raw(s.url, '/v1alpha1/graphql', '{"query": ');
    assert.equal(alpha.status, 400);
    const missing = await raw(s.url, '/v1/graphql', '{"variables": {}}');
    assert.equal(missing.status, 200);
    assert.equal(JSON.parse(missing.text).errors[0].extensions.code, 'parse-failed');
  });

  test('v1alpha1 answers errors with 400, v1 with 200', async () => {
    const body = JSON.stringify({ query: '{ nope { id } }' });
    assert.equal((await raw(s.url, '/v1/graphql', body)).status, 200);
    const a = await raw(s.url, '/v1alpha1/graphql', body);
    assert.equal(a.status, 400);
    assert.equal(JSON.parse(a.text).errors[0].extensions.code, 'validation-failed');
  });

  test('a batch answers an array, one response per request, errors in place', async () => {
    const r = await raw(
      s.url,
      '/v1/graphql',
      JSON.stringify([
        { query: '{ item_by_pk(id: 1) { name } }' },
        { query: '{ nope }' },
        { query: 'query($i: Int!) { item_by_pk(id: $i) { name } }', variables: { i: 2 } },
      ]),
    );
    assert.equal(r.status, 200);
    const out = JSON.parse(r.text);
    assert.equal(out.length, 3);
    assert.deepEqual(out[0], { data: { item_by_pk: { name: 'a' } } });
    assert.equal(out[1].errors[0].extensions.code, 'validation-failed');
    assert.deepEqual(out[2], { data: { item_by_pk: { name: 'b' } } });
  });

  test('CORS headers only for a cross-origin request', async () => {
    const body = JSON.stringify({ query: '{ item_by_pk(id: 1) { id } }' });
    const none = await raw(s.url, '/v1/graphql', body);
    assert.equal(none.headers.get('access-control-allow-origin'), null);
    const cors = await raw(s.url, '/v1/graphql', body, { origin: 'http://app.test' });
    assert.equal(cors.headers.get('access-control-allow-origin'), 'http://app.test');
    assert.equal(cors.headers.get('access-control-allow-credentials'), 'true');
  });

  test('a body over the limit is 413 and the server goes on serving', async () => {
    const big = JSON.stringify({ query: `{ item { id } } # ${'x'.repeat(200 * 1024)}` });
    const r = await raw(s.url, '/v1/graphql', big).catch((e) => ({ status: 0, text: String(e), headers: new Headers() }));
    // the server answers 413 and closes; a client still sending may see the reset instead
    if (r.status !== 0) {
      assert.equal(r.status, 413);
      assert.equal(JSON.parse(r.text).code, 'payload-too-large');
    }
    const ok = await raw(s.url, '/v1/graphql', JSON.stringify({ query: '{ item_by_pk(id: 1) { id } }' }));
    assert.equal(ok.text, '{"data":{"item_by_pk":{"id":1}}}');
  });

  test('GET is a GraphQL request on /v1/graphql (issue 37, test/server/graphql_get_apq.test.ts), not on /v1alpha1/graphql (404)', async () => {
    const r = await fetch(s.url + '/v1/graphql?query=' + encodeURIComponent('{ item_by_pk(id: 1) { id } }'));
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), { data: { item_by_pk: { id: 1 } } });
    assert.equal((await fetch(s.url + '/v1alpha1/graphql')).status, 404);
  });

  test('every request writes one http-log JSON line', async () => {
    lines.length = 0;
    await raw(s.url, '/v1/graphql', JSON.stringify({ query: '{ item_by_pk(id: 1) { id } }' }), { 'x-request-id': 'abc"1' });
    await raw(s.url, '/v1/graphql', '{');
    await fetch(s.url + '/v1/version');
    // pino's destination is asynchronous: wait for the three lines
    for (let i = 0; i < 100 && lines.filter((l) => l.includes('http-log')).length < 3; i++) await new Promise((r) => setImmediate(r));
    const logs = lines.map((l) => JSON.parse(l)).filter((l) => l.type === 'http-log');
    assert.equal(logs.length, 3, lines.join('\n'));
    const [ok, bad, version] = logs;
    assert.equal(ok.level, 'info');
    assert.equal(ok.msg, 'request');
    assert.ok(!Number.isNaN(Date.parse(ok.time)));
    assert.equal(ok.detail.operation.request_id, 'abc"1');
    assert.equal(typeof ok.detail.operation.query_execution_time, 'number');
    assert.deepEqual(
      { ...ok.detail.http_info, latency_ms: 0 },
      { url: '/v1/graphql', method: 'POST', status: 200, http_version: 'HTTP/1.1', ip: '127.0.0.1', latency_ms: 0 },
    );
    assert.equal(bad.detail.http_info.status, 200);
    assert.deepEqual(bad.detail.operation.error, { path: '$', error: 'Error in $: not enough input', code: 'invalid-json' });
    assert.equal(version.detail.http_info.url, '/v1/version');
  });

  test('an uncompressed answer is the UTF-8 bytes of the text, Content-Length counting bytes (small and large, multi-byte)', async () => {
    // the body goes out as bytes written after the head (not a string node:http would join to the head)
    const long = 'é€😀'.repeat(30_000); // 270,000 bytes in 90,000 UTF-16 units
    await query(s.url, { type: 'run_sql', args: { sql: "insert into item values (3, 'ü€😀'), (4, repeat('é€😀', 30000))" } });
    try {
      for (const [id, name] of [
        [3, 'ü€😀'],
        [4, long],
      ] as const) {
        lines.length = 0;
        const body = JSON.stringify({ query: `{ item_by_pk(id: ${id}) { id name } }` });
        // node:http sends no Accept-Encoding: the answer is not compressed
        const r = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: Buffer }>((resolve, reject) => {
          const req = http.request(`${s.url}/v1/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }));
            res.on('error', reject);
          });
          req.on('error', reject);
          req.end(body);
        });
        assert.equal(r.status, 200);
        assert.equal(r.headers['content-encoding'], undefined);
        const want = `{"data":{"item_by_pk":{"id":${id},"name":${JSON.stringify(name)}}}}`;
        assert.equal(Number(r.headers['content-length']), Buffer.byteLength(want));
        assert.equal(r.bytes.length, Buffer.byteLength(want));
        assert.equal(r.bytes.toString('utf8'), want);
        for (let i = 0; i < 100 && !lines.some((l) => l.includes('http-log')); i++) await new Promise((res) => setImmediate(res));
        const log = lines.map((l) => JSON.parse(l)).find((l) => l.type === 'http-log');
        assert.equal(log?.detail.operation.response_size, Buffer.byteLength(want));
      }
    } finally {
      await query(s.url, { type: 'run_sql', args: { sql: 'delete from item where id in (3, 4)' } });
    }
  });
});

describe('plan cache eviction', () => {
  const fakeCache = {} as never;
  const op = {} as never;
  const coerce = () => ({ values: {}, types: new Map() });

  test('over capacity, the least recently used go until three quarters are left', () => {
    const c = new PlanCache(8);
    for (let i = 0; i < 8; i++) c.add(`q${i}`, 'admin', fakeCache, op, coerce);
    // touch q0..q3: q4..q7 are now the least recently used
    for (let i = 0; i < 4; i++) assert.ok(c.get(`q${i}`, 'admin', fakeCache));
    c.add('q8', 'admin', fakeCache, op, coerce);
    assert.equal(c.size, 6);
    for (let i = 0; i < 4; i++) assert.ok(c.get(`q${i}`, 'admin', fakeCache), `q${i} kept`);
    for (const q of ['q4', 'q5', 'q6']) assert.equal(c.get(q, 'admin', fakeCache), undefined);
    assert.ok(c.get('q7', 'admin', fakeCache));
    assert.ok(c.get('q8', 'admin', fakeCache));
  });

  test('bounded by bytes: 150 distinct 42 KB queries stay within the budget', () => {
    const budget = 8 * 1024 * 1024;
    const c = new PlanCache(4096, budget);
    const big = 'x'.repeat(42 * 1024);
    let max = 0;
    for (let i = 0; i < 150; i++) {
      const e = c.add(`${i}${big}`, 'admin', fakeCache, op, coerce);
      const plan = {
        opType: 'query',
        structural: new Map(),
        fields: [],
        statement: { name: 's', compiled: { text: 'y'.repeat(60_000) } },
        sessionVars: [],
      } as never;
      PlanCache.addPlan(e, plan, `${i}${big}`);
      max = Math.max(max, c.bytes);
    }
    assert.ok(max <= budget + 4 * 1024 * 1024, `peak ${max} bytes`);
    assert.ok(c.bytes <= budget, `${c.bytes} bytes after`);
    assert.ok(c.size > 0 && c.size < 150, `${c.size} entries`);
    c.setMaxBytes(1);
    assert.equal(c.size, 0);
    assert.equal(c.bytes, 0);
  });

  test('an entry of another schema cache is a miss and is replaced', () => {
    const c = new PlanCache();
    const older = {} as never;
    c.add('q', 'admin', older, op, coerce);
    assert.equal(c.get('q', 'admin', fakeCache), undefined);
    c.add('q', 'admin', fakeCache, op, coerce);
    assert.equal(c.size, 1);
    assert.ok(c.get('q', 'admin', fakeCache));
  });
});
