/**
 * Observability (issue 35) against real parts: an OTLP/HTTP receiver started here decodes the
 * exporter's payloads (protobuf, the default: test/helpers/otlp.ts); a real action handler (which writes through Svc, passing the
 * traceparent on) and a real event webhook; PostgreSQL's pg_stat_activity; /v1/metrics; /readyz.
 *
 * - one GraphQL request calling an action whose handler inserts a row that fires an event trigger
 *   gives one trace: the request, auth, plan (cache hit/miss), SQL (no parameter values), the
 *   action handler call (the handler saw the trace in traceparent), and the event delivery try
 *   (child of and linked to the insert's request, through the event row);
 * - the SQL comment of a sampled request is visible in pg_stat_activity during a slow statement;
 * - the histograms are in /v1/metrics with their buckets;
 * - /readyz and /healthz?strict=true: 200 when ready, 503 while the database is unreachable.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer as createTcpServer, connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import WebSocket from 'ws';
import { postGraphql, postQuery, query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';
import { tracing } from '../../src/core/tracing.js';
import { decodeTraces, type OtlpKeyValue, type OtlpSpan } from '../helpers/otlp.js';
import { commentTrace, createStatementProbe } from '../helpers/sqlComment.js';

const attr = (s: OtlpSpan, key: string): string | number | boolean | undefined => {
  const v = s.attributes?.find((a) => a.key === key)?.value;
  if (!v) return undefined;
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue;
};

const readBytes = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
  });
const readBody = (req: IncomingMessage) => readBytes(req).then((b) => b.toString('utf8'));

const listen = async (srv: Server) => {
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
};

/** the OTLP/HTTP receiver: every span of every export */
const spans: OtlpSpan[] = [];
let resourceAttrs: OtlpKeyValue[] = [];
const contentTypes = new Set<string>();
const otlp = createServer((req, res) => {
  void readBytes(req).then((bytes) => {
    assert.equal(req.url, '/v1/traces');
    contentTypes.add(String(req.headers['content-type']));
    const body = decodeTraces(req.headers['content-type'], bytes);
    for (const rs of body.resourceSpans ?? []) {
      resourceAttrs = rs.resource?.attributes ?? resourceAttrs;
      for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
});

/** the action handler and the event webhook */
const handlerSaw: Array<{ traceparent?: string }> = [];
const authSaw: Array<{ traceparent?: string }> = [];
const events: Array<{ traceparent?: string; body: any }> = [];
let svcUrl = '';
const hooks = createServer((req, res) => {
  void readBody(req).then(async (text) => {
    const body = text ? JSON.parse(text) : {};
    const tp = req.headers.traceparent as string | undefined;
    if (req.url === '/auth') {
      authSaw.push({ traceparent: tp });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ 'X-Svc-Role': 'user', 'X-Svc-User-Id': '1' }));
      return;
    }
    if (req.url === '/action') {
      handlerSaw.push({ traceparent: tp });
      // the handler writes through Svc, passing the trace on (as an instrumented handler would)
      const r = await postGraphql(
        svcUrl,
        { query: 'mutation ($n: String!) { insert_item_one(object: {name: $n}) { id } }', variables: { n: body.input.name } },
        tp ? { traceparent: tp } : {},
      );
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: r.body.data.insert_item_one.id }));
      return;
    }
    events.push({ traceparent: tp, body });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
});

let s: TestServer;
let hooksUrl = '';

async function get(url: string, path: string): Promise<{ status: number; text: string }> {
  const r = await fetch(url + path, { signal: AbortSignal.timeout(10_000) });
  return { status: r.status, text: await r.text() };
}

before(async () => {
  process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
  const otlpUrl = await listen(otlp);
  hooksUrl = await listen(hooks);
  // comments: `auto` (the default) with a threshold no statement of a loaded test machine reaches by
  // accident; pipelining with one that a loaded machine's reads stay under (in CI on a slow VM a
  // one-row read's floor stayed over the default 1 ms: nothing was pipelined in 5 s)
  s = await startTestServer({ otlpEndpoint: otlpUrl, eventsFetchInterval: 100, tracingSqlCommentMinMs: 25, pgPipelineFastMs: 50 });
  svcUrl = s.url;
  assert.ok(tracing, 'tracing is on');
  await query(s.url, {
    type: 'bulk',
    args: [
      { type: 'run_sql', args: { sql: 'create table item (id serial primary key, name text not null)' } },
      { type: 'track_table', args: { table: 'item' } },
      { type: 'set_custom_types', args: { objects: [{ name: 'AddItemOutput', fields: [{ name: 'id', type: 'Int!' }] }] } },
      {
        type: 'create_action',
        args: {
          name: 'addItem',
          definition: { kind: 'synchronous', arguments: [{ name: 'name', type: 'String!' }], output_type: 'AddItemOutput', handler: `${hooksUrl}/action` },
        },
      },
      { type: 'create_event_trigger', args: { name: 'item_created', table: 'item', insert: { columns: '*' }, webhook: `${hooksUrl}/event` } },
    ],
  });
});

after(async () => {
  await s?.close();
  otlp.close();
  hooks.closeAllConnections();
  hooks.close();
});

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';

describe('traces', () => {
  test('an action whose handler inserts a row that fires an event trigger: one trace over every hop', async () => {
    const r = await postGraphql(s.url, { query: 'mutation { addItem(name: "secret-value") { id } }' }, { traceparent: `00-${TRACE}-${CLIENT_SPAN}-01` });
    assert.equal(r.status, 200, r.text);
    assert.ok(r.body.data?.addItem?.id, r.text);
    assert.equal(r.headers.get('x-svc-trace-id'), TRACE);
    // the handler saw the same trace
    assert.equal(handlerSaw.length, 1);
    assert.match(handlerSaw[0]!.traceparent ?? '', new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    // the event is delivered, its webhook call carrying the trace
    await waitFor('the event delivery', async () => events.length >= 1, 15_000);
    assert.match(events[0]!.traceparent ?? '', new RegExp(`^00-${TRACE}-`));
    await waitFor(
      'the delivery span',
      async () => {
        await tracing!.flush();
        return spans.some((x) => x.traceId === TRACE && x.name === 'svc.delivery');
      },
      10_000,
    );

    // OTLP/protobuf, the default encoding (OTEL_EXPORTER_OTLP_PROTOCOL unset)
    assert.deepEqual([...contentTypes], ['application/x-protobuf']);
    const trace = spans.filter((x) => x.traceId === TRACE);
    const names = trace.map((x) => x.name);
    for (const n of ['POST /v1/graphql', 'svc.auth', 'svc.graphql.plan', 'svc.graphql.parse', 'svc.sql', 'action POST', 'svc.delivery', 'event POST']) {
      assert.ok(names.includes(n), `span ${n} in ${JSON.stringify(names)}`);
    }
    const byId = new Map(trace.map((x) => [x.spanId, x]));
    // the outer request is the client's span's child
    const outer = trace.filter((x) => x.name === 'POST /v1/graphql' && x.parentSpanId === CLIENT_SPAN);
    assert.equal(outer.length, 1);
    assert.equal(attr(outer[0]!, 'graphql.operation.type'), 'mutation');
    assert.equal(attr(outer[0]!, 'http.response.status_code'), 200);
    // the action call is under the outer request; the handler's traceparent names that call's span
    const call = trace.find((x) => x.name === 'action POST')!;
    assert.equal(call.kind, 3 /* CLIENT */);
    assert.equal(handlerSaw[0]!.traceparent!.split('-')[2], call.spanId);
    // the handler's insert is a request of its own, child of the action call
    const inner = trace.find((x) => x.name === 'POST /v1/graphql' && x.parentSpanId === call.spanId);
    assert.ok(inner, 'the insert request is a child of the action call');
    // SQL spans: PostgreSQL, the statement without its parameter values
    const sql = trace.filter((x) => x.name === 'svc.sql');
    assert.ok(sql.length >= 1);
    for (const x of sql) {
      assert.equal(attr(x, 'db.system'), 'postgresql');
      assert.ok(!String(attr(x, 'db.statement')).includes('secret-value'), 'no parameter values in db.statement');
    }
    const insertSql = sql.find((x) => /insert\s+into/i.test(String(attr(x, 'db.statement'))));
    assert.ok(insertSql, `the insert statement has a span: ${JSON.stringify(sql.map((x) => String(attr(x, 'db.statement')).slice(0, 120)))}`);
    // the delivery try: a child of the insert request (through the event row), linked to it
    const delivery = trace.find((x) => x.name === 'svc.delivery')!;
    assert.equal(delivery.parentSpanId, inner!.spanId);
    assert.deepEqual(
      delivery.links?.map((l) => [l.traceId, l.spanId]),
      [[TRACE, inner!.spanId]],
    );
    assert.equal(attr(delivery, 'svc.trigger.name'), 'item_created');
    assert.equal(attr(delivery, 'http.response.status_code'), 200);
    const eventCall = trace.find((x) => x.name === 'event POST')!;
    assert.equal(eventCall.parentSpanId, delivery.spanId);
    // every span's parent is in the trace (or is the client's)
    for (const x of trace) assert.ok(!x.parentSpanId || x.parentSpanId === CLIENT_SPAN || byId.has(x.parentSpanId), `parent of ${x.name}`);
    // the resource names the service
    assert.ok(resourceAttrs.some((a) => a.key === 'service.name'));
  });

  test('plan spans say whether the plan cache answered; errors carry their code', async () => {
    const tp = (n: number) => `00-${n.toString(16).padStart(32, '0')}-${CLIENT_SPAN}-01`;
    const q = { query: 'query Items { item(order_by: {id: asc}) { id name } }', operationName: 'Items' };
    await postGraphql(s.url, q, { traceparent: tp(1) });
    await postGraphql(s.url, q, { traceparent: tp(2) });
    const bad = await postGraphql(s.url, { query: '{ nope }' }, { traceparent: tp(3) });
    assert.equal(bad.body.errors[0].extensions.code, 'validation-failed');
    await waitFor('three traces', async () => {
      await tracing!.flush();
      return [1, 2, 3].every((n) => spans.some((x) => x.traceId === tp(n).split('-')[1] && x.name === 'POST /v1/graphql'));
    });
    const planOf = (n: number) => spans.find((x) => x.traceId === tp(n).split('-')[1] && x.name === 'svc.graphql.plan')!;
    assert.equal(attr(planOf(1), 'svc.plan_cache.hit'), false);
    assert.equal(attr(planOf(2), 'svc.plan_cache.hit'), true);
    assert.equal(attr(planOf(2), 'graphql.operation.name'), 'Items');
    // the attributes kept as constants (a route's, a statement's, a cached plan's) in every span that
    // carries them, beside each request's own
    const ofTrace = (n: number, name: string) => spans.find((x) => x.traceId === tp(n).split('-')[1] && x.name === name)!;
    for (const n of [1, 2]) {
      const req = ofTrace(n, 'POST /v1/graphql');
      assert.equal(attr(req, 'http.request.method'), 'POST');
      assert.equal(attr(req, 'http.route'), '/v1/graphql');
      assert.equal(attr(req, 'url.path'), '/v1/graphql');
      assert.equal(attr(req, 'http.response.status_code'), 200);
      const sql = ofTrace(n, 'svc.sql');
      assert.equal(attr(sql, 'db.system'), 'postgresql');
      assert.equal(attr(sql, 'db.operation'), 'SELECT');
      assert.match(String(attr(sql, 'db.statement')), /"item"/);
      assert.equal(attr(sql, 'db.response.returned_rows'), 1);
      assert.equal(attr(planOf(n), 'graphql.operation.type'), 'query');
    }
    assert.equal(attr(ofTrace(1, 'svc.sql'), 'db.statement'), attr(ofTrace(2, 'svc.sql'), 'db.statement'));
    const ids = [1, 2].map((n) => attr(ofTrace(n, 'POST /v1/graphql'), 'svc.request_id'));
    assert.ok(typeof ids[0] === 'string' && ids[0] && ids[0] !== ids[1], `request ids ${ids.join(', ')}`);
    const failed = spans.find((x) => x.traceId === tp(3).split('-')[1] && x.name === 'POST /v1/graphql')!;
    assert.equal(failed.status?.code, 2 /* ERROR */);
    assert.equal(attr(failed, 'svc.error.code'), 'validation-failed');
  });

  test('the sqlcommenter comment of a sampled request is in pg_stat_activity during a slow statement', async () => {
    const trace = 'aaaabbbbccccddddeeeeffff00001111';
    const slow = postQuery(s.url, { type: 'run_sql', args: { sql: 'select pg_sleep(1.5)' } }, { traceparent: `00-${trace}-${CLIENT_SPAN}-01` });
    const c = new pg.Client({ connectionString: s.databaseUrl });
    await c.connect();
    try {
      const seen = await waitFor(
        'the statement in pg_stat_activity',
        async () => {
          const r = await c.query("select query from pg_stat_activity where query like '%pg_sleep(1.5)%' and pid <> pg_backend_pid()");
          return r.rows[0]?.query as string | undefined;
        },
        5_000,
        25,
      );
      assert.match(seen!, new RegExp(`/\\*traceparent='00-${trace}-[0-9a-f]{16}-01'\\*/`));
    } finally {
      await c.end();
    }
    const r = await slow;
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-svc-trace-id'), trace);
    await waitFor('the /v1/query span', async () => {
      await tracing!.flush();
      return spans.some((x) => x.traceId === trace && x.name === 'POST /v1/query' && attr(x, 'svc.query.type') === 'run_sql');
    });
  });
});

describe('sqlcommenter comments, auto (the default)', () => {
  before(async () => {
    await createStatementProbe(s.url, {
      sql: 'create function probe_slow() returns setof probe language sql stable as $$ select * from probe where pg_sleep(0.06) is not null $$',
      args: [{ type: 'track_function', args: { name: 'probe_slow', schema: 'public' } }],
    });
  });

  test('a statement not yet run carries the comment; once it is known to be fast it keeps its plan and goes without', async () => {
    const first = await postGraphql(s.url, { query: '{ probe { id statement } }' });
    assert.equal(first.status, 200, first.text);
    const text = String(first.body.data.probe[0].statement);
    assert.equal(commentTrace(text), first.headers.get('x-svc-trace-id'), `the first run: ${text}`);
    // a run faster than the threshold (25 ms) lowers its time at once: then prepared, uncommented
    let plain = '';
    for (let i = 0; i < 40 && !plain; i++) {
      const r = await postGraphql(s.url, { query: '{ probe { id statement } }' });
      assert.equal(r.body.data?.probe?.[0]?.id, 1, r.text);
      const t = String(r.body.data.probe[0].statement);
      if (commentTrace(t) === undefined) plain = t;
    }
    assert.ok(plain, 'a fast statement goes without the comment');
    assert.match(plain, /"probe"/);
  });

  test('a statement that takes longer than the threshold keeps the comment on every run', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await postGraphql(s.url, { query: '{ probe_slow { id statement } }' });
      assert.equal(r.body.data?.probe_slow?.[0]?.id, 1, r.text);
      const text = String(r.body.data.probe_slow[0].statement);
      assert.equal(commentTrace(text), r.headers.get('x-svc-trace-id'), `run ${i + 1}: ${text}`);
    }
  });
});

describe('span parents are passed, not looked up', () => {
  test('concurrent requests: each statement and plan span is under its own request', async () => {
    const tp = (n: number) => `00-${(0xe000 + n).toString(16).padStart(32, '0')}-${CLIENT_SPAN}-01`;
    const N = 24;
    // interleaved on the event loop: the first hits plan, the rest hit the plan cache
    const rs = await Promise.all(
      Array.from({ length: N }, (_, n) =>
        n % 2 === 0
          ? postGraphql(s.url, { query: 'query { item(limit: 1) { id } }' }, { traceparent: tp(n) })
          : postQuery(s.url, { type: 'run_sql', args: { sql: `select pg_sleep(0.0${n % 10}), ${n}` } }, { traceparent: tp(n) }),
      ),
    );
    for (const r of rs) assert.equal(r.status, 200, r.text);
    const traceOf = (n: number) => tp(n).split('-')[1]!;
    await waitFor('every trace with its statement', async () => {
      await tracing!.flush();
      return Array.from({ length: N }, (_, n) => n).every((n) => spans.some((x) => x.traceId === traceOf(n) && x.name === 'svc.sql'));
    });
    for (let n = 0; n < N; n++) {
      const trace = spans.filter((x) => x.traceId === traceOf(n));
      const req = trace.filter((x) => x.name === (n % 2 === 0 ? 'POST /v1/graphql' : 'POST /v1/query'));
      assert.equal(req.length, 1, `one request span in trace ${n}`);
      assert.equal(req[0]!.parentSpanId, CLIENT_SPAN);
      const sql = trace.filter((x) => x.name === 'svc.sql');
      assert.ok(sql.length >= 1, `statements in trace ${n}`);
      for (const x of sql) assert.equal(x.parentSpanId, req[0]!.spanId, `trace ${n}: ${String(attr(x, 'db.statement')).slice(0, 60)} under its request`);
      if (n % 2 === 0) {
        const plan = trace.filter((x) => x.name === 'svc.graphql.plan');
        assert.equal(plan.length, 1);
        assert.equal(plan[0]!.parentSpanId, req[0]!.spanId);
      } else {
        assert.ok(
          sql.some((x) => String(attr(x, 'db.statement')).includes(`pg_sleep(0.0${n % 10}), ${n}`)),
          `trace ${n} holds its own statement`,
        );
      }
    }
  });

  test("the auth webhook's call is under the request's auth span and carries its traceparent", async () => {
    const hooked = await startTestServer({ otlpEndpoint: 'http://127.0.0.1:9', adminSecret: 'obs-secret', authHook: `${hooksUrl}/auth` });
    try {
      const trace = 'bbbb0000bbbb0000bbbb0000bbbb0000';
      const r = await postGraphql(hooked.url, { query: 'query { __typename }' }, { traceparent: `00-${trace}-${CLIENT_SPAN}-01` });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.data?.__typename, 'query_root', r.text);
      assert.match(authSaw.at(-1)?.traceparent ?? '', new RegExp(`^00-${trace}-[0-9a-f]{16}-01$`));
      await waitFor('the auth webhook span', async () => {
        await tracing!.flush();
        return spans.some((x) => x.traceId === trace && x.name === 'auth_webhook GET');
      });
      const reqSpan = spans.find((x) => x.traceId === trace && x.name === 'POST /v1/graphql')!;
      const authSpan = spans.find((x) => x.traceId === trace && x.name === 'svc.auth')!;
      const call = spans.find((x) => x.traceId === trace && x.name === 'auth_webhook GET')!;
      assert.equal(authSpan.parentSpanId, reqSpan.spanId);
      assert.equal(call.parentSpanId, authSpan.spanId);
      assert.equal(authSaw.at(-1)!.traceparent!.split('-')[2], call.spanId);
      assert.equal(attr(authSpan, 'svc.role'), 'user');
    } finally {
      await hooked.close();
    }
  });

  test("an unsampled request (the client's flag 00) records nothing and propagates its trace, unsampled, to the handler", async () => {
    const trace = 'ffff0000ffff0000ffff0000ffff0001';
    const before = handlerSaw.length;
    const r = await postGraphql(s.url, { query: 'mutation { addItem(name: "unsampled") { id } }' }, { traceparent: `00-${trace}-${CLIENT_SPAN}-00` });
    assert.equal(r.status, 200, r.text);
    assert.ok(r.body.data?.addItem?.id, r.text);
    assert.equal(r.headers.get('x-svc-trace-id'), trace);
    assert.equal(handlerSaw.length, before + 1);
    assert.match(handlerSaw[before]!.traceparent ?? '', new RegExp(`^00-${trace}-[0-9a-f]{16}-00$`));
    // a sampled request after it is recorded (the exporter is working), the unsampled one is not
    const marker = 'ffff0000ffff0000ffff0000ffff0002';
    await postGraphql(s.url, { query: 'query { item(limit: 1) { id } }' }, { traceparent: `00-${marker}-${CLIENT_SPAN}-01` });
    await waitFor('the sampled request after it', async () => {
      await tracing!.flush();
      return spans.some((x) => x.traceId === marker && x.name === 'svc.sql');
    });
    assert.deepEqual(
      spans.filter((x) => x.traceId === trace).map((x) => x.name),
      [],
    );
  });

  test('no AsyncLocalStorage or async hooks in the server (their promise hooks cost every request once enabled)', () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith('.ts')) files.push(p);
      }
    };
    walk(fileURLToPath(new URL('../../src', import.meta.url)));
    assert.ok(files.length > 50);
    const users = files.filter((f) =>
      /from '(node:)?async_hooks'|import\('(node:)?async_hooks'\)|\bAsyncLocalStorage\s*[(<]|new AsyncLocalStorage/.test(readFileSync(f, 'utf8')),
    );
    assert.deepEqual(users, []);
  });
});

describe('REST endpoints', () => {
  test('a REST call is a request span with its plan and SQL under it, and a latency observation', async () => {
    await query(s.url, {
      type: 'bulk',
      args: [
        {
          type: 'create_query_collection',
          args: {
            name: 'obs',
            definition: { queries: [{ name: 'items', query: 'query items($limit: Int) { item(order_by: {id: asc}, limit: $limit) { id } }' }] },
          },
        },
        {
          type: 'create_rest_endpoint',
          args: { name: 'obs_items', url: 'obs/items', methods: ['GET'], definition: { query: { collection_name: 'obs', query_name: 'items' } } },
        },
      ],
    });
    const trace = 'dddd0000dddd0000dddd0000dddd0000';
    const r = await fetch(`${s.url}/api/rest/obs/items?limit=5`, {
      headers: { traceparent: `00-${trace}-${CLIENT_SPAN}-01` },
      signal: AbortSignal.timeout(10_000),
    });
    assert.equal(r.status, 200, await r.text());
    assert.equal(r.headers.get('x-svc-trace-id'), trace);
    const missing = await fetch(`${s.url}/api/rest/obs/nope`, {
      headers: { traceparent: `00-${trace}-${CLIENT_SPAN}-01` },
      signal: AbortSignal.timeout(10_000),
    });
    assert.equal(missing.status, 404);
    await waitFor('the REST spans', async () => {
      await tracing!.flush();
      return (
        spans.filter((x) => x.traceId === trace && x.name === 'GET /api/rest').length === 2 && spans.some((x) => x.traceId === trace && x.name === 'svc.sql')
      );
    });
    const reqs = spans.filter((x) => x.traceId === trace && x.name === 'GET /api/rest');
    const ok = reqs.find((x) => attr(x, 'http.response.status_code') === 200)!;
    assert.equal(ok.parentSpanId, CLIENT_SPAN);
    assert.equal(ok.kind, 2 /* SERVER */);
    assert.equal(attr(ok, 'http.route'), '/api/rest');
    assert.equal(attr(ok, 'url.path'), '/api/rest/obs/items');
    assert.equal(attr(ok, 'graphql.operation.type'), 'query');
    const notFound = reqs.find((x) => attr(x, 'http.response.status_code') === 404)!;
    assert.equal(notFound.status?.code, 2 /* ERROR */);
    assert.equal(attr(notFound, 'svc.error.code'), 'not-found');
    for (const n of ['svc.auth', 'svc.graphql.plan', 'svc.sql']) {
      const child = spans.find((x) => x.traceId === trace && x.name === n);
      assert.ok(child, `span ${n}`);
      assert.ok(
        reqs.some((x) => x.spanId === child.parentSpanId),
        `${n} under the REST request`,
      );
    }
    const metrics = (await get(s.url, '/v1/metrics')).text;
    assert.match(metrics, /svc_http_request_duration_seconds_count\{endpoint="\/api\/rest",operation_type="query",outcome="success"\} [1-9]/);
    assert.match(metrics, /svc_http_request_duration_seconds_count\{endpoint="\/api\/rest",operation_type="unknown",outcome="error"\} [1-9]/);
  });
});

describe('websocket', () => {
  test("a websocket operation is a span, child of the handshake's traceparent, with its SQL under it", async () => {
    const trace = 'cccc0000cccc0000cccc0000cccc0000';
    const ws = new WebSocket(s.url.replace('http', 'ws') + '/v1/graphql', 'graphql-transport-ws', {
      headers: { traceparent: `00-${trace}-${CLIENT_SPAN}-01` },
    });
    const messages: any[] = [];
    const got = (pred: (m: any) => boolean) => waitFor('a websocket message', async () => messages.find(pred), 10_000, 20);
    ws.on('message', (d) => messages.push(JSON.parse(String(d))));
    await new Promise<void>((r, j) => ws.once('open', () => r()).once('error', j));
    ws.send(JSON.stringify({ type: 'connection_init', payload: {} }));
    await got((m) => m.type === 'connection_ack');
    ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'query { item_aggregate { aggregate { count } } }' } }));
    await got((m) => m.type === 'complete' && m.id === '1');
    ws.close();
    await waitFor('the websocket operation span', async () => {
      await tracing!.flush();
      return spans.some((x) => x.traceId === trace && x.name === 'svc.sql');
    });
    const op = spans.find((x) => x.traceId === trace && x.name === 'svc.websocket.operation')!;
    assert.equal(op.parentSpanId, CLIENT_SPAN);
    assert.equal(attr(op, 'graphql.operation.type'), 'query');
    const sql = spans.find((x) => x.traceId === trace && x.name === 'svc.sql')!;
    const plan = spans.find((x) => x.traceId === trace && x.name === 'svc.graphql.plan')!;
    assert.equal(sql.parentSpanId, op.spanId);
    assert.equal(plan.parentSpanId, op.spanId);
  });
});

describe('metrics', () => {
  test('pipelined reads: lanes and the statements answered on them', async () => {
    const q = { query: 'query Pipelined { item(limit: 1) { id } }', operationName: 'Pipelined' };
    const text = await waitFor('pipelined statements', async () => {
      await Promise.all(Array.from({ length: 8 }, () => postGraphql(s.url, q)));
      const t = (await get(s.url, '/v1/metrics')).text;
      return /^svc_db_pipelined_statements_total [1-9]/m.test(t) ? t : '';
    });
    assert.match(text, /^svc_db_pipeline_lanes [12]$/m);
    assert.match(text, /^svc_db_pipeline_reruns_total 0$/m);
  });

  test('the histograms are in /v1/metrics with their buckets', async () => {
    const r = await get(s.url, '/v1/metrics');
    assert.equal(r.status, 200);
    const text = r.text;
    const has = (re: RegExp) => assert.match(text, re);
    has(/# TYPE svc_http_request_duration_seconds histogram/);
    has(/svc_http_request_duration_seconds_bucket\{endpoint="\/v1\/graphql",operation_type="mutation",outcome="success",le="0.005"\} \d+/);
    has(/svc_http_request_duration_seconds_bucket\{endpoint="\/v1\/graphql",operation_type="query",outcome="success",le="\+Inf"\} [1-9]/);
    has(/svc_http_request_duration_seconds_count\{endpoint="\/v1\/graphql",operation_type="unknown",outcome="error"\} [1-9]/);
    has(/svc_http_request_duration_seconds_count\{endpoint="\/v1\/query",operation_type="run_sql",outcome="success"\} [1-9]/);
    has(/svc_request_sql_duration_seconds_bucket\{operation_type="query",le="0.001"\} \d+/);
    has(/svc_request_sql_duration_seconds_count\{operation_type="mutation"\} [1-9]/);
    has(/svc_outbound_request_duration_seconds_count\{target="action",host="127.0.0.1",outcome="2xx"\} [1-9]\d*/);
    has(/svc_outbound_request_duration_seconds_count\{target="event",host="127.0.0.1",outcome="2xx"\} [1-9]/);
    has(/svc_delivery_lag_seconds_bucket\{queue="event-trigger",trigger="item_created",le="3600"\} [1-9]/);
    has(/# TYPE svc_db_pool_wait_seconds histogram/);
    has(/svc_db_pool_connections\{state="max"\} 10/);
    has(/svc_db_pool_connections\{state="total"\} [1-9]/);
    has(/svc_http_request_duration_seconds_count\{endpoint="websocket",operation_type="query",outcome="success"\} 1/);
    // the buckets are cumulative and end with +Inf = count
    const buckets = [...text.matchAll(/svc_request_sql_duration_seconds_bucket\{operation_type="query",le="([^"]+)"\} (\d+)/g)].map((m) => Number(m[2]));
    for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i]! >= buckets[i - 1]!);
    const count = Number(/svc_request_sql_duration_seconds_count\{operation_type="query"\} (\d+)/.exec(text)![1]);
    assert.equal(buckets.at(-1), count);
  });
});

describe('readiness', () => {
  test('/readyz and /healthz?strict=true: 200 when ready, 503 while the database is unreachable; /healthz stays 200', async () => {
    assert.equal((await get(s.url, '/readyz')).status, 200);
    assert.equal((await get(s.url, '/healthz?strict=true')).text, 'OK');
    // a server whose database connections go through a TCP relay this test can cut
    const target = new URL(s.databaseUrl);
    const sockets = new Set<Socket>();
    let open = true;
    const relay = createTcpServer((client) => {
      if (!open) return client.destroy();
      const upstream = connect(Number(target.port || 5432), target.hostname);
      sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      const drop = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', drop);
      upstream.on('error', drop);
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    const relayed = new URL(s.databaseUrl);
    relayed.host = `127.0.0.1:${(relay.address() as AddressInfo).port}`;
    const other = await startTestServer({ databaseUrl: relayed.toString(), dbConnectRetryTimeout: 0, poolAcquireTimeout: 1 });
    try {
      assert.equal((await get(other.url, '/readyz')).status, 200);
      open = false;
      for (const x of sockets) x.destroy();
      const down = await get(other.url, '/readyz');
      assert.equal(down.status, 503);
      assert.equal(down.text, 'NOT READY: database unreachable');
      assert.equal((await get(other.url, '/healthz?strict=true')).status, 503);
      open = true;
      await waitFor('ready again', async () => (await get(other.url, '/readyz')).status === 200, 10_000, 100);
    } finally {
      await other.close();
      relay.close();
    }
  });
});
