/**
 * Issue 30 item 9: the per-role schema cache is bounded. With a small
 * `--role-schema-cache-max-bytes`, requests as twelve roles keep the cache within the budget (least
 * recently used roles dropped), and a dropped role's next request builds its schema again and
 * answers as before. Real PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postGraphql, query, startTestServer, type TestServer } from '../helpers/server.js';
import { BoundedRoleCache } from '../../src/schema/roleCache.js';

let s: TestServer;
const ROLES = Array.from({ length: 12 }, (_, i) => `r${i}`);
const BUDGET = 120_000;

before(async () => {
  s = await startTestServer({ roleSchemaCacheMaxBytes: BUDGET });
  await query(s.url, {
    type: 'bulk',
    args: [
      { type: 'run_sql', args: { sql: "create table item (id int primary key, label text); insert into item values (1, 'a');" } },
      { type: 'track_table', args: { schema: 'public', name: 'item' } },
      ...ROLES.map((role) => ({ type: 'create_select_permission', args: { table: 'item', role, permission: { columns: ['id', 'label'], filter: {} } } })),
    ],
  });
});

after(async () => s?.close());

test('twelve roles within the budget; an evicted role is rebuilt and answers', async () => {
  for (const role of ROLES) {
    const r = await postGraphql(s.url, { query: '{ item { id label } }' }, { 'x-svc-role': role });
    assert.deepEqual(r.body, { data: { item: [{ id: 1, label: 'a' }] } }, r.text);
  }
  const cache = s.engine.cache.perRole as BoundedRoleCache;
  assert.ok(cache instanceof BoundedRoleCache);
  assert.ok(cache.evictions > 0, 'least recently used roles were dropped');
  assert.ok(cache.bytes <= BUDGET, `${cache.bytes} estimated bytes kept, budget ${BUDGET}`);
  assert.ok(cache.size < ROLES.length, `${cache.size} role schemas kept`);
  assert.ok(!cache.has('graphql:r0'), 'the least recently used role is gone');
  const again = await postGraphql(s.url, { query: '{ item { id } }' }, { 'x-svc-role': 'r0' });
  assert.deepEqual(again.body, { data: { item: [{ id: 1 }] } });
  assert.ok(cache.has('graphql:r0'), 'rebuilt on its next request');
});
