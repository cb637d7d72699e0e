/**
 * Metadata changes reach another instance after its LISTEN connection breaks (issue 11.4): the
 * connection is re-opened with backoff and the metadata version re-read, so a dropped permission
 * stops being served well within the 10 s poll. A database restart is simulated by cutting every
 * connection of the second instance at a TCP proxy (the machine's PostgreSQL is shared by other
 * tests); terminating the listening backend is the other case.
 */
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { sql } from '../helpers/db.js';
import { postGraphql, query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';

let s1: TestServer;
let s2: TestServer;
let proxy: Server;
const sockets = new Set<Socket>();
const user = { 'x-svc-role': 'user' };

before(async () => {
  s1 = await startTestServer();
  const target = new URL(s1.databaseUrl);
  proxy = createServer((c) => {
    const up = connect(Number(target.port || 5432), target.hostname);
    sockets.add(c).add(up);
    c.pipe(up).pipe(c);
    const drop = () => {
      c.destroy();
      up.destroy();
      sockets.delete(c);
      sockets.delete(up);
    };
    c.on('error', drop).on('close', drop);
    up.on('error', drop).on('close', drop);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  const via = new URL(s1.databaseUrl);
  via.hostname = '127.0.0.1';
  via.port = String((proxy.address() as { port: number }).port);
  await query(s1.url, { type: 'run_sql', args: { sql: 'create table item (id int primary key); insert into item values (1)' } });
  await query(s1.url, { type: 'track_table', args: { table: 'item' } });
  s2 = await startTestServer({ databaseUrl: via.toString() });
});

after(async () => {
  await s2?.close();
  await s1?.close();
  for (const x of sockets) x.destroy();
  await new Promise<void>((r) => proxy.close(() => r()));
});

const canRead = async (s: TestServer) => !(await postGraphql(s.url, { query: '{ item { id } }' }, user)).body.errors;

async function grantThenCut(cut: () => Promise<void>): Promise<number> {
  await query(s1.url, { type: 'create_select_permission', args: { table: 'item', role: 'user', permission: { columns: ['id'], filter: {} } } });
  await waitFor('instance 2 serves the permission', async () => ((await canRead(s2)) ? true : undefined), 15_000);
  await cut();
  await query(s1.url, { type: 'drop_select_permission', args: { table: 'item', role: 'user' } });
  const t0 = Date.now();
  await waitFor('instance 2 stops serving the dropped permission', async () => ((await canRead(s2)) ? undefined : true), 5_000);
  return Date.now() - t0;
}

test('every connection of instance 2 cut (a restart, as the client sees it)', async () => {
  const ms = await grantThenCut(async () => {
    for (const x of sockets) x.destroy();
  });
  assert.ok(ms < 5_000);
  process.stdout.write(`# after a cut of all connections, the dropped permission stopped being served in ${ms} ms\n`);
});

test('the listening backend terminated', async () => {
  const ms = await grantThenCut(async () => {
    const r = await sql<{ n: number }>(s1.databaseUrl, `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = current_database() and query ilike 'listen %'`);
    assert.ok(r[0]!.n >= 1, 'a listening backend');
  });
  assert.ok(ms < 5_000);
});
