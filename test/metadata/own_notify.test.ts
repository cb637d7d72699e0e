/**
 * An instance's own metadata changes come back to it as NOTIFYs on the sync channel, sometimes
 * before the request that wrote them has swapped its cache in. Those must not start a reload of
 * the same version: the reload raced with the swap and could replace the fresh cache with one built
 * later (a remote schema that went away meanwhile was then dropped from the schema of the very
 * instance that had just added it). Another instance's changes still reload.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';

let a: TestServer;
let b: TestServer;
before(async () => {
  a = await startTestServer();
  b = await startTestServer({ databaseUrl: a.databaseUrl });
});
after(async () => {
  await b?.close();
  await a?.close();
});

test("an instance does not reload for its own changes; another instance's change reloads it once", async () => {
  await query(a.url, { type: 'run_sql', args: { sql: 'create table own_a (id int primary key); create table own_b (id int primary key)' } });
  const before = { ...a.engine.syncStats };
  for (let i = 0; i < 31; i++) await query(a.url, { type: i % 2 ? 'untrack_table' : 'track_table', args: { table: 'own_a' } });
  const written = a.engine.cache.resourceVersion;
  // a change by the other instance: its NOTIFY comes after all of a's own on the channel, so once a
  // has it, a has been told of every one of its own versions
  await waitFor('b to have a’s last version', async () => b.engine.cache.resourceVersion === written);
  await query(b.url, { type: 'track_table', args: { table: 'own_b' } });
  const last = b.engine.cache.resourceVersion;
  await waitFor('a to have b’s change', async () => a.engine.cache.resourceVersion === last);
  assert.equal(a.engine.syncStats.reloads - before.reloads, 1, JSON.stringify(a.engine.syncStats));
  assert.ok(b.engine.syncStats.reloads >= 1);
  const tables = (await query(a.url, { type: 'export_metadata', args: {} })).tables.map((t: { table: { name: string } }) => t.table.name).sort();
  assert.deepEqual(tables, ['own_a', 'own_b']);
});
