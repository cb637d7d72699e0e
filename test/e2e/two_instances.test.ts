/**
 * Two `svc serve` processes started at the same moment on one empty database: both come up, the
 * catalog is created exactly once, and a metadata change made through one instance reaches the
 * other (LISTEN/NOTIFY) within 5 seconds.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, sql, type TestDatabase } from '../helpers/db.js';
import { cleanEnv, expectStartupLine, startSvcProcess, type SvcProcess } from '../helpers/process.js';
import { postQuery, query, waitFor } from '../helpers/server.js';

let db: TestDatabase;
const procs: SvcProcess[] = [];
const urls: string[] = [];

before(async () => {
  db = await createTestDatabase();
});

after(async () => {
  for (const p of procs) await p.stop(5_000);
  await db?.drop();
});

const tableNames = (md: { tables?: Array<{ table: { schema: string; name: string } }> }) =>
  (md.tables ?? []).map((t) => `${t.table.schema}.${t.table.name}`).sort();

test('two instances on one empty database', { timeout: 120_000 }, async (t) => {
  const env = cleanEnv({ SVC_GRAPHQL_DATABASE_URL: db.url, SVC_GRAPHQL_ENABLED_LOG_TYPES: 'startup' });
  // both spawned at (nearly) the same moment: they race to create the catalog
  const started = await Promise.allSettled([startSvcProcess([], env), startSvcProcess([], env)]);
  for (const s of started) if (s.status === 'fulfilled') procs.push(s.value.proc);
  for (const s of started) if (s.status === 'rejected') throw s.reason;
  const instances = started.map((s) => (s as PromiseFulfilledResult<Awaited<ReturnType<typeof startSvcProcess>>>).value);
  for (const i of instances) urls.push(i.url);

  await t.test('both log their startup line with the port', async () => {
    for (const i of instances) await expectStartupLine(i.proc, i.port);
  });

  const [a, b] = urls as [string, string];

  await t.test('the catalog exists once', async () => {
    const rows = await sql<{ n: string }>(db.url, 'select count(*)::text as n from svc_catalog.svc_version');
    assert.deepEqual(rows, [{ n: '1' }]);
    const schemas = await sql(db.url, "select nspname from pg_namespace where nspname = 'svc_catalog'");
    assert.equal(schemas.length, 1);
  });

  await t.test('both start with the same, empty metadata', async () => {
    const [ma, mb] = await Promise.all([query(a, { type: 'export_metadata', args: {} }), query(b, { type: 'export_metadata', args: {} })]);
    assert.deepEqual(ma, mb);
    assert.deepEqual(tableNames(ma), []);
  });

  await t.test('track_table on one instance is visible on the other within 5 s', async () => {
    await query(a, { type: 'run_sql', args: { sql: 'create table shared_items (id serial primary key, label text)' } });
    await query(a, { type: 'track_table', args: { table: 'shared_items' } });
    const seen = await waitFor(
      'export_metadata on the second instance to show public.shared_items',
      async () => {
        const md = await query(b, { type: 'export_metadata', args: {} });
        return tableNames(md).includes('public.shared_items') ? md : undefined;
      },
      5_000,
    );
    assert.deepEqual(seen, await query(a, { type: 'export_metadata', args: {} }));
    // the second instance's schema cache is updated too, not just its export: tracking again fails there
    const again = await postQuery(b, { type: 'track_table', args: { table: 'shared_items' } });
    assert.equal(again.status, 400, again.text);
    assert.equal(again.body.code, 'already-tracked');
  });

  await t.test('and back: untrack_table on the second is seen by the first', async () => {
    await query(b, { type: 'untrack_table', args: { table: 'shared_items' } });
    await waitFor(
      'export_metadata on the first instance to drop public.shared_items',
      async () => !tableNames(await query(a, { type: 'export_metadata', args: {} })).includes('public.shared_items'),
      5_000,
    );
  });
});
