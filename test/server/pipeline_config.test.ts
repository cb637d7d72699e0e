/**
 * The pipelining threshold reaches the database pool: two servers under the same reads, one started
 * with --pipeline-fast-ms 0 (nothing is ever fast enough: every read on a connection of its own),
 * one with a threshold no read of a loaded test machine reaches (its reads go onto lanes).
 * test/db/pipeline.test.ts tests the lanes themselves.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postGraphql, query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';

let never: TestServer;
let lenient: TestServer;

async function setUp(s: TestServer): Promise<void> {
  await query(s.url, {
    type: 'bulk',
    args: [
      { type: 'run_sql', args: { sql: "create table item (id serial primary key, name text not null); insert into item (name) values ('a')" } },
      { type: 'track_table', args: { table: 'item' } },
    ],
  });
}

before(async () => {
  never = await startTestServer({ pgPipelineFastMs: 0 });
  lenient = await startTestServer({ pgPipelineFastMs: 1000 });
  await setUp(never);
  await setUp(lenient);
});
after(async () => {
  await never?.close();
  await lenient?.close();
});

const q = { query: 'query One { item(limit: 1) { id } }', operationName: 'One' };

async function reads(s: TestServer): Promise<void> {
  const rs = await Promise.all(Array.from({ length: 8 }, () => postGraphql(s.url, q)));
  for (const r of rs) assert.deepEqual(r.body, { data: { item: [{ id: 1 }] } });
}

async function metrics(s: TestServer): Promise<string> {
  return (await fetch(`${s.url}/v1/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
}

test('--pipeline-fast-ms: 0 keeps every read on a connection of its own; a high one puts them on lanes', async () => {
  await waitFor(
    'reads on lanes with --pipeline-fast-ms 1000',
    async () => {
      await reads(lenient);
      return /^svc_db_pipelined_statements_total [1-9]/m.test(await metrics(lenient));
    },
    30_000,
  );
  for (let i = 0; i < 10; i++) await reads(never);
  const m = await metrics(never);
  assert.match(m, /^svc_db_pipelined_statements_total 0$/m);
  assert.match(m, /^svc_db_pipeline_lanes 0$/m);
});
