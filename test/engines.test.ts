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
