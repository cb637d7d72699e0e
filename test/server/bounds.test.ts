/**
 * Time and resource bounds (issue 12.4-12.6, 11.10): the statement timeout, cancelling the statement
 * of a client that went away, the pool acquire timeout (503), /v1/query holding at most 3/4 of the
 * pool while data-only run_sql takes no metadata lock (/healthz and GraphQL still answer), start-up
 * retrying a database that is not up yet, and the embedded data directory lock.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { lockDataDir } from '../../src/db/db.js';
import { cleanEnv, spawnSvc } from '../helpers/process.js';
import { createTestDatabase, sql } from '../helpers/db.js';
import { postGraphql, postQuery, query, startTestServer, waitFor, type TestServer } from '../helpers/server.js';

const user = { 'x-svc-role': 'user' };

async function setup(s: TestServer): Promise<void> {
  await query(s.url, {
    type: 'bulk',
    args: [
      {
        type: 'run_sql',
        args: {
          sql: `create table item (id int primary key); insert into item values (1), (2);
                create function slow_items(seconds float8) returns setof item language sql stable as $$ select i.* from item i, pg_sleep(seconds) $$;`,
        },
      },
      { type: 'track_table', args: { table: 'item' } },
      { type: 'track_function', args: { name: 'slow_items' } },
      { type: 'create_select_permission', args: { table: 'item', role: 'user', permission: { columns: ['id'], filter: {} } } },
    ],
  });
}

test('--statement-timeout bounds a slow query; the client gets a clear error', async () => {
  const s = await startTestServer({ statementTimeout: 1 });
  try {
    await setup(s);
    const t0 = Date.now();
    const r = await postGraphql(s.url, { query: '{ slow_items(args: {seconds: 5}) { id } }' }, user);
    assert.ok(Date.now() - t0 < 4_000);
    assert.equal(r.body.errors[0].extensions.code, 'unexpected');
    assert.match(r.body.errors[0].message, /statement timeout/);
  } finally {
    await s.close();
  }
});

test('a client that goes away: its statement is cancelled in PostgreSQL', async () => {
  const s = await startTestServer({ statementTimeout: 0 });
  try {
    await setup(s);
    const aborted = fetch(`${s.url}/v1/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...user },
      body: JSON.stringify({ query: '{ slow_items(args: {seconds: 30}) { id } }' }),
      signal: AbortSignal.timeout(500),
    }).catch((e: Error) => e);
    const running = () =>
      sql(s.databaseUrl, `select count(*)::int as n from pg_stat_activity where state = 'active' and wait_event = 'PgSleep' and pid <> pg_backend_pid()`);
    await waitFor('the slow statement runs', async () => ((await running())[0]!.n === 1 ? true : undefined), 5_000);
    assert.ok((await aborted) instanceof Error);
    await waitFor('the statement is cancelled', async () => ((await running())[0]!.n === 0 ? true : undefined), 5_000);
  } finally {
    await s.close();
  }
});

test('--pool-acquire-timeout: a request that cannot get a connection in time gets a 503-style error', async () => {
  const s = await startTestServer({ pgConnections: 2, poolAcquireTimeout: 1, statementTimeout: 0 });
  try {
    await setup(s);
    const slow = [1, 2].map(() => postGraphql(s.url, { query: '{ slow_items(args: {seconds: 3}) { id } }' }, user));
    await waitFor('both connections busy', async () => {
      const r = await sql(
        s.databaseUrl,
        `select count(*)::int as n from pg_stat_activity where state = 'active' and wait_event = 'PgSleep' and pid <> pg_backend_pid()`,
      );
      return r[0]!.n === 2 ? true : undefined;
    });
    const t0 = Date.now();
    const r = await postGraphql(s.url, { query: '{ item { id } }' }, user);
    assert.ok(Date.now() - t0 < 2_500);
    assert.match(r.body.errors[0].message, /could not acquire a database connection in time/);
    const q = await postQuery(s.url, { type: 'count', args: { table: 'item' } });
    assert.equal(q.status, 503, q.text);
    await Promise.all(slow);
  } finally {
    await s.close();
  }
});

test('concurrent long run_sql: /healthz and GraphQL still answer within a second', async () => {
  const s = await startTestServer({ pgConnections: 4, statementTimeout: 0 });
  try {
    await setup(s);
    const sleepers = Array.from({ length: 10 }, () => postQuery(s.url, { type: 'run_sql', args: { sql: 'select pg_sleep(1.5)' } }));
    await waitFor('run_sql statements running', async () => {
      const r = await sql<{ n: number }>(
        s.databaseUrl,
        `select count(*)::int as n from pg_stat_activity where state = 'active' and query like '%pg_sleep(1.5)%' and pid <> pg_backend_pid()`,
      );
      return r[0]!.n >= 2 ? r[0]!.n : undefined;
    });
    const t0 = Date.now();
    const [h, g] = await Promise.all([fetch(`${s.url}/healthz`), postGraphql(s.url, { query: '{ item { id } }' }, user)]);
    const ms = Date.now() - t0;
    assert.equal(h.status, 200);
    assert.deepEqual(g.body, { data: { item: [{ id: 1 }, { id: 2 }] } });
    assert.ok(ms < 1_000, `${ms} ms`);
    for (const r of await Promise.all(sleepers)) assert.equal(r.status, 200, r.text);
  } finally {
    await s.close();
  }
});

test('start-up retries a database that is not up yet', async () => {
  const db = await createTestDatabase();
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const target = new URL(db.url);
  const proxied = new URL(db.url);
  proxied.port = String(port);
  proxied.hostname = '127.0.0.1';
  const sockets: Socket[] = [];
  let proxy: Server | undefined;
  const late = setTimeout(() => {
    proxy = createServer((c) => {
      const up = connect(Number(target.port || 5432), target.hostname);
      sockets.push(c, up);
      c.pipe(up).pipe(c);
      c.on('error', () => up.destroy());
      up.on('error', () => c.destroy());
    }).listen(port, '127.0.0.1');
  }, 1_500);
  let s: TestServer | undefined;
  try {
    const t0 = Date.now();
    s = await startTestServer({ databaseUrl: proxied.toString(), dbConnectRetryTimeout: 20 });
    assert.ok(Date.now() - t0 >= 1_000);
    assert.equal((await fetch(`${s.url}/healthz`)).status, 200);
  } finally {
    clearTimeout(late);
    await s?.close();
    for (const x of sockets) x.destroy();
    await new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r()));
    await db.drop();
  }
});

test('the data directory lock: a live owner refuses, a stale one is taken over', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-lock-'));
  const sleeper = spawn('sleep', ['30']);
  try {
    writeFileSync(join(dir, 'svc.lock'), `${sleeper.pid}\n`);
    assert.throws(() => lockDataDir(dir), /in use by another svc process \(pid \d+\)/);
    writeFileSync(join(dir, 'svc.lock'), '999999999\n');
    const unlock = lockDataDir(dir);
    unlock();
  } finally {
    sleeper.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('two processes on one embedded data directory: the second refuses to start', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-data-'));
  const args = ['serve', '--server-port', '0', '--server-host', '127.0.0.1', '--data-dir', dir];
  const first = spawnSvc(args, cleanEnv(), 120_000);
  try {
    await first.startup;
    const second = spawnSvc(args, cleanEnv(), 120_000);
    const exit = await second.exited;
    assert.equal(exit.code, 1, second.output());
    assert.match(second.output(), /in use by another svc process/);
  } finally {
    await first.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
