/**
 * Two engines in one process share no state (issue 31 item 5): each has its own plan cache,
 * bounded by its own --plan-cache-max-bytes, with its own hit/miss counters (and so its own
 * /v1/metrics figures). Before, the byte budget was that of whichever engine started last.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postGraphql, postQuery, startTestServer, type TestServer } from './helpers/server.js';

let small: TestServer;
let large: TestServer;
const admin = { 'x-svc-admin-secret': 's' };

before(async () => {
  // the small one first: a process-wide budget would then be the large one's
  small = await startTestServer({ adminSecret: 's', planCacheMaxBytes: 1 });
  large = await startTestServer({ adminSecret: 's', planCacheMaxBytes: 64 * 1024 * 1024 });
  for (const s of [small, large]) {
    const r = await postQuery(s.url, { type: 'run_sql', args: { sql: 'create table t (id int primary key); insert into t values (1)' } }, admin);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((await postQuery(s.url, { type: 'track_table', args: { table: 't' } }, admin)).status, 200);
  }
});

after(async () => {
  await small?.close();
  await large?.close();
});

test('each engine has its own plan cache, bounded by its own budget, with its own counters', async () => {
  assert.notEqual(small.engine.planCache, large.engine.planCache);
  const q = { query: '{ t { id } }' };
  for (let i = 0; i < 3; i++) {
    for (const s of [small, large]) assert.deepEqual((await postGraphql(s.url, q, admin)).body, { data: { t: [{ id: 1 }] } });
  }
  // a 1-byte budget keeps nothing: every request compiles; the large one compiled once
  assert.equal(small.engine.planCache.size, 0);
  assert.deepEqual({ ...small.engine.planCache.stats }, { hits: 0, misses: 3 });
  assert.equal(large.engine.planCache.size, 1);
  assert.deepEqual({ ...large.engine.planCache.stats }, { hits: 2, misses: 1 });
});

const metricsOf = async (s: TestServer): Promise<string> => {
  const r = await fetch(`${s.url}/v1/metrics`, { headers: admin });
  assert.equal(r.status, 200);
  return r.text();
};
/** the value of a series of /v1/metrics (0 when absent) */
const series = (text: string, name: string): number => {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : 0;
};

test("live-query and streaming counters, histograms and outbound clients are the engine's own", async () => {
  for (const k of ['liveQueryStats', 'streamStats', 'histograms', 'outbound', 'remotes'] as const) assert.notEqual(small.engine[k], large.engine[k], k);
  // requests to one engine are counted in its metrics only
  const before = series(await metricsOf(large), 'svc_http_request_duration_seconds_count{endpoint="/v1/graphql",operation_type="query",outcome="success"}');
  for (let i = 0; i < 5; i++) assert.equal((await postGraphql(small.url, { query: '{ t { id } }' }, admin)).status, 200);
  const name = 'svc_http_request_duration_seconds_count{endpoint="/v1/graphql",operation_type="query",outcome="success"}';
  assert.ok(series(await metricsOf(small), name) >= 5);
  assert.equal(series(await metricsOf(large), name), before, 'the other engine did not count them');
  // a live-query counter of one engine does not show in the other's metrics
  small.engine.liveQueryStats.messages += 7;
  small.engine.streamStats.rows += 11;
  const sm = await metricsOf(small);
  const lg = await metricsOf(large);
  assert.equal(series(sm, 'svc_live_query_messages_total') - series(lg, 'svc_live_query_messages_total'), 7);
  assert.equal(series(sm, 'svc_stream_rows_total') - series(lg, 'svc_stream_rows_total'), 11);
});

test("the outbound policy is the engine's own: one engine's --outbound-allow-hosts does not bind another", async () => {
  const strict = await startTestServer({ adminSecret: 's', outboundAllowHosts: ['only.example.com'] });
  try {
    assert.deepEqual(strict.engine.outbound.policy.allowHosts, ['only.example.com']);
    // the engine started earlier keeps its own (empty) policy
    assert.deepEqual(small.engine.outbound.policy.allowHosts, []);
    assert.deepEqual(large.engine.outbound.policy.allowHosts, []);
  } finally {
    await strict.close();
  }
});

test('each engine bounds its role schemas by its own --role-schema-cache-max-bytes', async () => {
  const tiny = await startTestServer({ adminSecret: 's', roleSchemaCacheMaxBytes: 1 });
  try {
    const budget = (s: TestServer) => (s.engine.cache.perRole as unknown as { maxBytes: number }).maxBytes;
    assert.equal(budget(tiny), 1);
    assert.notEqual(budget(small), 1, 'the engine started earlier keeps its budget');
  } finally {
    await tiny.close();
  }
});
