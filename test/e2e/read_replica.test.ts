/**
 * Read replicas (--read-replica-urls) on a real PostgreSQL streaming replica (test/helpers/replica.ts):
 * queries are served by the replica, mutations and /v1/query by the primary; X-Svc-Read-From and
 * --read-from-primary-roles send reads to the primary; a stopped replica fails over to the
 * primary without a failed request and is used again once it is back; a replica whose replay is
 * paused is skipped once its lag passes --read-replica-max-lag.
 * Which server answered is seen through a tracked view of `pg_is_in_recovery()`.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, sql, type TestDatabase } from '../helpers/db.js';
import { createReplica, type Replica } from '../helpers/replica.js';
import { postGraphql, query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';

let replica: Replica;
let db: TestDatabase;
let server: TestServer;

const WHOAMI = { query: '{ whoami { replica } }' };
/** true when the query was answered by the replica; throws on any error */
async function servedByReplica(headers: Record<string, string> = {}): Promise<boolean> {
  const r = await postGraphql(server.url, WHOAMI, headers);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.errors, undefined, r.text);
  return r.body.data.whoami[0].replica;
}

before(async () => {
  replica = await createReplica();
  db = await createTestDatabase();
  await sql(
    db.url,
    `create view whoami as select pg_is_in_recovery() as replica;
     create table item (id serial primary key, name text not null, written_on_replica boolean not null default pg_is_in_recovery());`,
  );
  await replica.caughtUp();
  server = await startTestServer({ databaseUrl: db.url, readReplicaUrls: [replica.url(db.name)], readReplicaMaxLag: 1, readFromPrimaryRoles: ['auditor'] });
  await query(server.url, { type: 'track_table', args: { schema: 'public', name: 'whoami' } });
  await query(server.url, { type: 'track_table', args: { schema: 'public', name: 'item' } });
  for (const role of ['user', 'auditor']) {
    await query(server.url, { type: 'create_select_permission', args: { table: 'whoami', role, permission: { columns: '*', filter: {} } } });
  }
});

after(async () => {
  await server?.close();
  await db?.drop();
  await replica?.destroy();
});

test('queries are served by the replica, writes by the primary', { timeout: 60_000 }, async () => {
  assert.deepEqual(
    server.engine.replicas!.status().map((s) => s.healthy),
    [true],
  );
  assert.equal(await servedByReplica(), true);
  assert.equal(await servedByReplica({ 'x-svc-role': 'user' }), true);
  const before = server.engine.replicas!.status()[0]!.reads;
  const m = await postGraphql(server.url, { query: 'mutation { insert_item_one(object: {name: "a"}) { id written_on_replica } }' });
  assert.equal(m.body.data.insert_item_one.written_on_replica, false, m.text);
  assert.equal(server.engine.replicas!.status()[0]!.reads, before, 'a mutation does not touch the replica');
  const run = await query(server.url, { type: 'run_sql', args: { sql: 'select pg_is_in_recovery()' } });
  assert.deepEqual(run.result[1], ['f'], '/v1/query runs on the primary');
  // the write reaches the replica by streaming replication
  await replica.caughtUp();
  const metrics = await (await fetch(`${server.url}/v1/metrics`)).text();
  assert.match(metrics, /^svc_read_replica_healthy\{replica="postgres:\/\/[^"]+"\} 1$/m);
  assert.match(metrics, /^svc_read_replica_reads_total\{replica="[^"]+"\} [1-9]\d*$/m);
  const r = await postGraphql(server.url, { query: '{ item { name written_on_replica } }' });
  assert.deepEqual(r.body.data.item, [{ name: 'a', written_on_replica: false }]);
});

test('X-Svc-Read-From: primary and --read-from-primary-roles read from the primary', { timeout: 30_000 }, async () => {
  assert.equal(await servedByReplica({ 'x-svc-read-from': 'primary' }), false);
  assert.equal(await servedByReplica({ 'x-svc-role': 'user', 'X-Svc-Read-From': 'Primary' }), false);
  assert.equal(await servedByReplica({ 'x-svc-role': 'auditor' }), false);
  assert.equal(await servedByReplica({ 'x-svc-read-from': 'replica' }), true);
});

test('change-driven live queries: a write on the primary reaches a subscriber reading the replica, after its replay', { timeout: 60_000 }, async () => {
  const c = createClient({ url: `${server.url.replace('http', 'ws')}/v1/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
  const got: any[] = [];
  const replicaDb = replica.url(db.name);
  try {
    c.subscribe(
      { query: 'subscription { item(where: {name: {_like: "live%"}}, order_by: {id: asc}) { name } }' },
      { next: (v) => got.push(v), error: (e) => got.push({ error: e }), complete: () => undefined },
    );
    await waitFor('first result', async () => got.length === 1 || undefined, 10_000, 10);
    assert.deepEqual(got[0], { data: { item: [] } });
    const reads0 = server.engine.replicas!.status()[0]!.reads;
    const f0 = server.engine.liveQueryStats.fenced;
    await new Promise((r) => setTimeout(r, 1_100)); // past the interval since the first run
    await sql(db.url, `insert into item (name) values ('live-1')`);
    await waitFor('the update', async () => got.length === 2 || undefined, 10_000, 10);
    assert.deepEqual(got[1], { data: { item: [{ name: 'live-1' }] } });
    assert.ok(server.engine.liveQueryStats.fenced > f0, 'the run waited for the replica');
    assert.ok(server.engine.replicas!.status()[0]!.reads > reads0, 'and read it');
    // replay paused: the replica cannot catch up; the update still arrives (from the primary), never a stale result
    await sql(replicaDb, 'select pg_wal_replay_pause()');
    try {
      await new Promise((r) => setTimeout(r, 1_100));
      await sql(db.url, `insert into item (name) values ('live-2')`);
      await waitFor('the update while paused', async () => got.length === 3 || undefined, 10_000, 10);
      assert.deepEqual(got[2], { data: { item: [{ name: 'live-1' }, { name: 'live-2' }] } });
    } finally {
      await sql(replicaDb, 'select pg_wal_replay_resume()');
    }
  } finally {
    await c.dispose();
  }
  await waitFor('the replica to be used again', () => servedByReplica(), 15_000, 100);
});

test('a lagging replica is skipped until it catches up', { timeout: 60_000 }, async () => {
  const replicaDb = replica.url(db.name);
  await sql(replicaDb, 'select pg_wal_replay_pause()');
  try {
    await sql(db.url, `insert into item (name) values ('while paused')`);
    // replay is paused: the lag (age of the last replayed transaction) passes 1 s
    await waitFor('the lagging replica to be skipped', async () => !(await servedByReplica()), 15_000, 100);
    assert.match(server.engine.replicas!.status()[0]!.error ?? '', /replication lag/);
  } finally {
    await sql(replicaDb, 'select pg_wal_replay_resume()');
  }
  await waitFor('the replica to be used again', () => servedByReplica(), 15_000, 100);
});

test('a stopped replica fails over to the primary with no failed request, and is used again once back', { timeout: 120_000 }, async () => {
  assert.equal(await servedByReplica(), true);
  await replica.stop();
  // every request succeeds: reads in flight on the dead replica are retried on the primary
  for (let i = 0; i < 20; i++) assert.equal(await servedByReplica(), false);
  assert.equal(server.engine.replicas!.status()[0]!.healthy, false);
  // a subscription's live query also moves to the primary
  assert.equal((await server.engine.readDb().query('select pg_is_in_recovery() as r')).rows[0].r, 'f');
  await replica.start();
  await waitFor('the replica to be used again', () => servedByReplica(), 30_000, 100);
  assert.equal((await server.engine.readDb().query('select pg_is_in_recovery() as r')).rows[0].r, 't');
});
