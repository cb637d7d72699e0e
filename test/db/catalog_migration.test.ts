/**
 * A catalog of version 1 (uuid event ids, `locked` as a timestamp) is migrated in place to the
 * current version at start-up: its events, their invocation logs and the metadata survive, the
 * columns take the types of reference/catalog-tables.md, and a version from the future is refused.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CATALOG_V1_DDL, CATALOG_VERSION, initCatalog } from '../../src/catalog/catalog.js';
import { openDb } from '../../src/db/db.js';
import { createTestDatabase, sql, type TestDatabase } from '../helpers/db.js';

let d: TestDatabase;

before(async () => {
  d = await createTestDatabase();
});

after(async () => {
  await d?.drop();
});

test('version 1 → current: rows kept, columns as the reference has them', async () => {
  for (const stmt of CATALOG_V1_DDL.split(';')
    .map((x) => x.trim())
    .filter(Boolean))
    await sql(d.url, stmt);
  await sql(d.url, "insert into svc_catalog.svc_version (version) values ('1')");
  await sql(d.url, `insert into svc_catalog.svc_metadata (metadata) values ('{"version":2,"tables":[]}')`);
  await sql(
    d.url,
    "insert into svc_catalog.event_log (id, schema_name, table_name, trigger_name, payload, locked) values ('11111111-1111-1111-1111-111111111111', 'public', 't', 'tr', '{}', now()), ('22222222-2222-2222-2222-222222222222', 'public', 't', 'tr', '{}', null)",
  );
  await sql(
    d.url,
    "insert into svc_catalog.event_invocation_logs (id, event_id, status) values ('33333333-3333-3333-3333-333333333333', '11111111-1111-1111-1111-111111111111', 500)",
  );

  const db = await openDb({ databaseUrl: d.url, dataDir: '', usePreparedStatements: true, connections: 2 });
  try {
    await initCatalog(db);
    await initCatalog(db); // idempotent
  } finally {
    await db.close();
  }
  assert.deepEqual(await sql(d.url, 'select version from svc_catalog.svc_version'), [{ version: CATALOG_VERSION }]);
  assert.deepEqual(await sql(d.url, 'select id, locked from svc_catalog.event_log order by id'), [
    { id: '11111111-1111-1111-1111-111111111111', locked: true },
    { id: '22222222-2222-2222-2222-222222222222', locked: false },
  ]);
  assert.deepEqual(await sql(d.url, 'select id, event_id, status from svc_catalog.event_invocation_logs'), [
    { id: '33333333-3333-3333-3333-333333333333', event_id: '11111111-1111-1111-1111-111111111111', status: 500 },
  ]);
  const types = await sql(
    d.url,
    "select table_name || '.' || column_name as c, data_type as t from information_schema.columns where table_schema = 'svc_catalog' and (table_name, column_name) in (('event_log', 'id'), ('event_log', 'locked'), ('event_invocation_logs', 'event_id'), ('hdb_cron_events', 'scheduled_time'), ('hdb_action_log', 'id')) order by 1",
  );
  assert.deepEqual(types, [
    { c: 'event_invocation_logs.event_id', t: 'text' },
    { c: 'event_log.id', t: 'text' },
    { c: 'event_log.locked', t: 'boolean' },
    { c: 'hdb_action_log.id', t: 'uuid' },
    { c: 'hdb_cron_events.scheduled_time', t: 'timestamp with time zone' },
  ]);
  // a new event gets a text UUID by default
  const [ins] = await sql(
    d.url,
    "insert into svc_catalog.event_log (schema_name, table_name, trigger_name, payload) values ('public', 't', 'tr', '{}') returning id",
  );
  assert.match(String(ins!.id), /^[0-9a-f-]{36}$/);
});

test('a catalog from a newer Svc is refused', async () => {
  await sql(d.url, "update svc_catalog.svc_version set version = '99'");
  const db = await openDb({ databaseUrl: d.url, dataDir: '', usePreparedStatements: true, connections: 1 });
  try {
    await assert.rejects(initCatalog(db), /unsupported version : 99/);
  } finally {
    await db.close();
  }
});
