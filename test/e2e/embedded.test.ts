/**
 * `svc serve` without a database URL runs on the embedded PostgreSQL (PGlite) in --data-dir: a
 * table and its metadata survive a SIGTERM and a restart on the same data directory.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { postQuery, query } from '../helpers/server.js';
import { Receiver } from '../helpers/receiver.js';
import { cleanEnv, expectStartupLine, startSvcProcess, type SvcProcess } from '../helpers/process.js';

const dataDir = mkdtempSync(join(tmpdir(), 'svc-embedded-'));
const running: SvcProcess[] = [];

after(async () => {
  for (const p of running) await p.stop(5_000);
  rmSync(dataDir, { recursive: true, force: true });
});

async function start() {
  // no SVC_GRAPHQL_DATABASE_URL (cleanEnv drops every SVC_GRAPHQL_* of the test environment)
  const s = await startSvcProcess(['--data-dir', dataDir], cleanEnv({ SVC_GRAPHQL_ENABLED_LOG_TYPES: 'startup' }), 90_000);
  running.push(s.proc);
  return s;
}

test('embedded PGlite: data and metadata survive a restart', { timeout: 240_000 }, async (t) => {
  const first = await start();
  await t.test('the first start logs its startup line with the port', () => expectStartupLine(first.proc, first.port));

  await query(first.url, {
    type: 'run_sql',
    args: { sql: "create table e2e_items (id int primary key, name text not null); insert into e2e_items values (1, 'one'), (2, 'two');" },
  });
  await query(first.url, { type: 'track_table', args: { table: 'e2e_items' } });
  const exported = await query(first.url, { type: 'export_metadata', args: {} });
  assert.deepEqual(
    exported.tables.map((x: { table: unknown }) => x.table),
    [{ schema: 'public', name: 'e2e_items' }],
  );

  const exit = await first.proc.stop();
  assert.deepEqual(exit, { code: 0, signal: null }, `SIGTERM ends svc cleanly:\n${first.proc.output()}`);

  const second = await start();
  await t.test('the restart logs its startup line with the port', () => expectStartupLine(second.proc, second.port));
  const restored = await query(second.url, { type: 'export_metadata', args: {} });
  assert.deepEqual(restored, exported, 'metadata after the restart');
  const rows = await query(second.url, { type: 'run_sql', args: { sql: 'select id, name from e2e_items order by id' } });
  assert.deepEqual(rows, {
    result_type: 'TuplesOk',
    result: [
      ['id', 'name'],
      ['1', 'one'],
      ['2', 'two'],
    ],
  });
  // the restored metadata is live, not just stored: tracking again is refused
  const again = await postQuery(second.url, { type: 'track_table', args: { table: 'e2e_items' } });
  assert.equal(again.status, 400, again.text);
  assert.equal(again.body.code, 'already-tracked');

  await t.test('event triggers deliver on the embedded database too', async () => {
    const rx = await new Receiver().start();
    try {
      await query(second.url, {
        type: 'create_event_trigger',
        args: { name: 'e2e_items_insert', table: 'e2e_items', webhook: rx.url, insert: { columns: '*' }, enable_manual: true },
      });
      await query(second.url, { type: 'run_sql', args: { sql: "insert into e2e_items values (3, 'three')" } });
      await query(second.url, { type: 'invoke_event_trigger', args: { name: 'e2e_items_insert', payload: { id: 4 } } });
      const got = await rx.waitFor(2, () => true, 30_000);
      assert.deepEqual(got.map((r) => r.body.event.op).sort(), ['INSERT', 'MANUAL']);
      assert.deepEqual(got.find((r) => r.body.event.op === 'INSERT')!.body.event.data.new, { id: 3, name: 'three' });
    } finally {
      await rx.close();
    }
  });

  const exit2 = await second.proc.stop();
  assert.deepEqual(exit2, { code: 0, signal: null }, `second SIGTERM:\n${second.proc.output()}`);
});
